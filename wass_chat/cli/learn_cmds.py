"""`wass-chat kb learn` and `wass-chat sim-to-real report`: the cluster's runs into the knowledge
base, and how far the simulator's plans were from them (:mod:`wass_chat.learn`,
:mod:`kb.calibration`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from sim.errors import InputError
from wass_chat.cli.kb_cmds import JSON, KB_DIR, kb_app, kb_opener
from wass_chat.cli.output import console, emit
from wass_chat.cli.slurm_cmds import sim_to_real_app


@kb_app.command("learn")
def learn_command(
    run: str | None = typer.Argument(None, help="A run id of the decision log (wass-chat runs)."),
    from_sacct: bool = typer.Option(
        False,
        "--from-sacct",
        help="Learn past runs of the product found in the accounting cache (wass-chat sacct "
        "import) by their placement comments or job names; with RUN, that run only.",
    ),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """Learn a finished run (its Slurm records) into the knowledge base as a real case."""
    from wass_chat.config import settings
    from wass_chat.learn.from_sacct import learn_from_sacct
    from wass_chat.learn.learner import learn_run
    from wass_chat.runlog import RunLog
    from wass_chat.sacct.cache import SacctCache
    from wass_chat.slurm.commands import SlurmCommands

    cfg = settings()
    runlog = RunLog(cfg.runs_dir)
    if not from_sacct:
        if run is None:
            raise InputError("kb learn", ["give a run id, or --from-sacct for the cached runs"])
        learned = learn_run(run, SlurmCommands(), runlog, kb_opener(kb_dir))
        emit(learned.to_dict(), as_json, lambda _: console.print(learned.line(), markup=False))
        return
    with kb_opener(kb_dir)() as kb:
        found = learn_from_sacct(SacctCache(cfg.sacct_dir), runlog, kb, only=run)

    def render(_: dict[str, Any]) -> None:
        console.print(
            f"{found.jobs} of the product's jobs in the accounting cache; "
            f"{len(found.learned)} runs learned, {len(found.skipped)} skipped"
        )
        for learned in found.learned:
            console.print(learned.line(), markup=False)
        for run_id, why in sorted(found.skipped.items()):
            console.print(f"skipped {run_id}: {why}", markup=False)

    emit(found.to_dict(), as_json, render)


@sim_to_real_app.command("report")
def report_command(
    workflow: str | None = typer.Option(None, "--workflow", help="Only runs of this workflow."),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """The simulator's predictions against every learned run: makespan and per-task error, by
    node and by task category."""
    from kb.calibration import calibration_report
    from kb.real_runs import failed_runs, learned_cases

    with kb_opener(kb_dir)() as kb:
        cases = [c for c in learned_cases(kb) if workflow in (None, c.workflow.name)]
        failed = [c for c in failed_runs(kb) if workflow in (None, c.workflow.name)]
    report = calibration_report(cases, failed_runs=len(failed))
    emit(report.to_dict(), as_json, _render_report)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _render_report(d: dict[str, Any]) -> None:
    from rich.table import Table

    from wass_chat.slurm.hostlist import collect

    if not d["runs"]:
        console.print(
            "no learned run yet: `wass-chat status RUN` or `wass-chat kb learn RUN` "
            "learns a finished one"
        )
        return
    runs = Table(title="learned runs: the plan's prediction against what ran")
    for column in (
        "run",
        "workflow",
        "nodes",
        "predicted",
        "real",
        "makespan error",
        "per-task error",
        "planned on",
    ):
        runs.add_column(column)
    for r in d["runs"]:
        predicted = r["predicted_makespan_s"]
        runs.add_row(
            r["run_id"],
            r["workflow"],
            collect(r["nodes"]),
            "-" if predicted is None else f"{predicted:.2f} s",
            f"{r['real_makespan_s']:.2f} s",
            _pct(r["makespan_error"]),
            _pct(r["per_task_mape"]),
            (r["estimates"] or "-").split(" (")[0],
        )
    console.print(runs)
    for title, rows in (("by node", d["by_node"]), ("by task category", d["by_category"])):
        table = Table(title=f"per-task error {title}")
        for column in ("", "tasks", "per-task error", "real / predicted (median)"):
            table.add_column(column)
        for g in rows:
            table.add_row(g["key"], str(g["tasks"]), _pct(g["mape"]), f"{g['ratio']:.3f}")
        console.print(table)
    console.print(
        f"over {len(d['runs'])} runs: makespan error {_pct(d['makespan_mape'])}, "
        f"per-task error {_pct(d['per_task_mape'])}; {d['failed_runs']} runs that did "
        "not complete kept apart"
    )


def register(app: typer.Typer) -> None:
    """The commands above join ``kb_app`` and ``sim_to_real_app`` when this module is imported."""
