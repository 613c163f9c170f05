"""One retrieved case: its workflow summary and where each task ran."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from tui.case_records import case_id, case_placements, case_summary_lines


class CaseDetailScreen(ModalScreen[None]):
    """Summary fields on top, the placement table below; Escape closes."""

    BINDINGS = [Binding("escape,q", "close", "Close")]  # noqa: RUF012

    def __init__(self, case: dict[str, Any]) -> None:
        super().__init__()
        self.case = case

    def compose(self) -> ComposeResult:
        with Vertical(id="case-dialog"):
            yield Label(f"Case {case_id(self.case)}", id="case-title")
            yield Static("\n".join(case_summary_lines(self.case)), id="case-summary", markup=False)
            placements: DataTable[str] = DataTable(id="case-placements", cursor_type="row")
            placements.add_columns("task", "node")
            for row in case_placements(self.case):
                placements.add_row(*row)
            yield Label(f"Placements ({placements.row_count})", classes="panel-heading")
            yield placements

    def action_close(self) -> None:
        self.dismiss(None)
