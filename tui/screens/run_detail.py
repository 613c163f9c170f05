"""The current run or simulation in full screen: every lane of the Gantt, utilisation, cases."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label

from tui.gantt_data import GanttTrace
from tui.screens.case_detail import CaseDetailScreen
from tui.widgets.cases_table import CasesTable
from tui.widgets.gantt import GanttChart, UtilisationBars


class RunDetailScreen(Screen[None]):
    """Escape goes back to the chat; Enter on a case opens it."""

    BINDINGS = [Binding("escape,q,f3", "close", "Back to chat")]  # noqa: RUF012

    def __init__(self, trace: GanttTrace | None, cases: list[dict[str, Any]]) -> None:
        super().__init__()
        self.trace = trace
        self.cases = cases

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="run-detail"):
            title = self.trace.title if self.trace else "No schedule yet: try /simulate"
            yield Label(title, id="run-detail-title")
            yield GanttChart(id="run-detail-gantt")
            yield Label("Utilisation per node", classes="panel-heading")
            yield UtilisationBars()
            yield Label("Similar cases", classes="panel-heading")
            yield CasesTable(id="run-detail-cases")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(GanttChart).trace = self.trace
        self.query_one(UtilisationBars).trace = self.trace
        self.query_one(CasesTable).show(self.cases)

    def on_cases_table_case_chosen(self, event: CasesTable.CaseChosen) -> None:
        self.app.push_screen(CaseDetailScreen(event.case))

    def action_close(self) -> None:
        self.dismiss(None)
