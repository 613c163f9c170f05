"""Retrieved past executions (knowledge-base cases) with similarity and makespan; a case learned
from a real Slurm run says so after its workflow (``(real)``)."""

from __future__ import annotations

from typing import Any

from textual.message import Message
from textual.widgets import DataTable

from tui.case_records import case_id, case_makespan


def _number(value: Any, fmt: str) -> str:
    return format(value, fmt) if isinstance(value, int | float) else "–"


class CasesTable(DataTable[str]):
    """One row per case; Enter (or a click) opens the case."""

    class CaseChosen(Message):
        """The user picked a case to look at."""

        def __init__(self, case: dict[str, Any]) -> None:
            super().__init__()
            self.case = case

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.cases: list[dict[str, Any]] = []

    def on_mount(self) -> None:
        # Fixed widths: the table looks the same however fast rows arrive.
        for label, width in (("case", 16), ("sim.", 5), ("makespan", 9), ("workflow", 16)):
            self.add_column(label, width=width)

    def show(self, cases: list[dict[str, Any]]) -> None:
        """Replace the rows with ``cases`` (best first, as the tool returned them)."""
        self.cases = list(cases)
        self.clear()
        for index, case in enumerate(self.cases):
            self.add_row(
                case_id(case),
                _number(case.get("similarity"), ".2f"),
                _number(case_makespan(case), ".1f"),
                str(case.get("workflow") or case.get("workflow_name") or "")
                + (" (real)" if case.get("real") else ""),
                key=str(index),
            )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.CaseChosen(self.cases[int(event.row_key.value)]))
