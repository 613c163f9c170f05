"""The cases table marks a case learned from a real Slurm run."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui.widgets.cases_table import CasesTable

REAL = {
    "case_id": "case-r",
    "similarity": 1.0,
    "makespan_s": 4.5,
    "workflow": "wf",
    "source": "slurm:20261127-092141-41fc",
    "real": {
        "run_id": "20261127-092141-41fc",
        "date": "2026-11-27",
        "nodes": "n1",
        "real_makespan_s": 4.5,
        "predicted_makespan_s": 3.0,
    },
}
SIMULATED = {
    "case_id": "case-s",
    "similarity": 1.0,
    "makespan_s": 3.0,
    "workflow": "wf",
    "source": "simulated",
}


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield CasesTable(id="cases")


async def test_a_real_runs_case_says_so_and_a_simulated_one_does_not() -> None:
    async with _Host().run_test(size=(80, 12)) as pilot:
        table = pilot.app.query_one(CasesTable)
        table.show([REAL, SIMULATED])
        await pilot.pause()
        assert table.get_row_at(0)[3] == "wf (real)"
        assert table.get_row_at(1)[3] == "wf"
