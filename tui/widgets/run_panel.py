"""Side panel for the current run or simulation: Gantt, per-node utilisation, similar cases.

The panel is about one subject, a workflow: the schedule drawn and the cases listed are of the
same one. A schedule of another workflow drops the cases (the panel says how to retrieve the new
subject's), and cases retrieved for another workflow drop the schedule (it says how to draw the
new subject's). Cases that do not say what they were retrieved for are taken as the drawn
schedule's.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Label

from tui.gantt_data import GanttTrace
from tui.widgets.cases_table import CasesTable
from tui.widgets.gantt import GanttChart, UtilisationBars


class RunPanel(VerticalScroll):
    """What the last tool results said about one workflow's schedule and similar cases."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.trace: GanttTrace | None = None
        self.cases_subject = ""
        """The workflow the listed cases were retrieved for ('' when the tool did not say)."""

    def compose(self) -> ComposeResult:
        yield Label("Schedule", classes="panel-heading")
        yield Label("", id="run-title")
        yield GanttChart(max_rows_per_node=3)
        yield Label("Utilisation per node", classes="panel-heading")
        yield UtilisationBars()
        yield Label("Similar cases", classes="panel-heading", id="cases-heading")
        note = Label("", id="cases-note")
        note.display = False
        yield note
        yield CasesTable(id="cases")

    @property
    def subject(self) -> str:
        """The workflow the panel is about ('' when it shows nothing that names one)."""
        return (self.trace.workflow if self.trace else "") or self.cases_subject

    def show_trace(self, trace: GanttTrace) -> None:
        """Draw ``trace``; cases of another workflow go (they were about another subject)."""
        if self.cases_subject and trace.workflow and trace.workflow != self.cases_subject:
            self._set_cases([], "", note=_no_cases_note(trace.workflow))
        self._set_trace(trace)

    def show_cases(self, cases: list[dict[str, Any]], subject: str = "") -> None:
        """List ``cases`` retrieved for workflow ``subject``; a schedule of another workflow
        goes."""
        drawn = self.trace.workflow if self.trace else ""
        if subject and drawn and subject != drawn:
            self._set_trace(None, title=f"No schedule of {subject} drawn yet: /simulate draws it.")
        self._set_cases(cases, subject or drawn)

    def reset(self) -> None:
        """Forget the schedule and the cases (a new conversation)."""
        self._set_trace(None)
        self._set_cases([], "")

    def _set_trace(self, trace: GanttTrace | None, title: str = "") -> None:
        self.trace = trace
        self.query_one("#run-title", Label).update(trace.title if trace else title)
        self.query_one(GanttChart).trace = trace
        self.query_one(UtilisationBars).trace = trace

    def _set_cases(self, cases: list[dict[str, Any]], subject: str, note: str = "") -> None:
        self.cases_subject = subject
        heading = f"Similar cases to {subject}" if subject else "Similar cases"
        self.query_one("#cases-heading", Label).update(heading)
        note_label = self.query_one("#cases-note", Label)
        note_label.update(note)
        note_label.display = bool(note)
        self.query_one(CasesTable).show(cases)

    @property
    def cases(self) -> list[dict[str, Any]]:
        return self.query_one(CasesTable).cases


def _no_cases_note(workflow: str) -> str:
    return f"None retrieved for {workflow} yet: /cases retrieves them."
