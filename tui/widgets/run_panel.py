"""Side panel for the current run or simulation: Gantt, per-node utilisation, similar cases."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Label

from tui.gantt_data import GanttTrace
from tui.widgets.cases_table import CasesTable
from tui.widgets.gantt import GanttChart, UtilisationBars


class RunPanel(VerticalScroll):
    """What the last tool results said about schedules and cases."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.trace: GanttTrace | None = None

    def compose(self) -> ComposeResult:
        yield Label("Schedule", classes="panel-heading")
        yield Label("", id="run-title")
        yield GanttChart(max_rows_per_node=3)
        yield Label("Utilisation per node", classes="panel-heading")
        yield UtilisationBars()
        yield Label("Similar cases", classes="panel-heading")
        yield CasesTable(id="cases")

    def show_trace(self, trace: GanttTrace) -> None:
        self.trace = trace
        self.query_one("#run-title", Label).update(trace.title)
        self.query_one(GanttChart).trace = trace
        self.query_one(UtilisationBars).trace = trace

    def reset(self) -> None:
        """Forget the schedule and the cases (a new conversation)."""
        self.trace = None
        self.query_one("#run-title", Label).update("")
        self.query_one(GanttChart).trace = None
        self.query_one(UtilisationBars).trace = None
        self.query_one(CasesTable).show([])

    def show_cases(self, cases: list[dict[str, Any]]) -> None:
        self.query_one(CasesTable).show(cases)

    @property
    def cases(self) -> list[dict[str, Any]]:
        return self.query_one(CasesTable).cases
