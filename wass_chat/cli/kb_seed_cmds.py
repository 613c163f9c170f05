"""`wass-chat kb seed` (here, or as a Slurm job array) and `wass-chat kb merge`.

With ``--slurm-array N`` the plan is split into N array tasks (:mod:`kb.seed_shards`, submitted
by :mod:`wass_chat.slurm.arrays`); the command shows the array's progress from squeue and
the finished shards, then merges them into the knowledge base. Running it again re-submits only
the tasks without a finished shard (failed or killed ones) and merges again, adding nothing
twice. Without Slurm it says so in one line and exits 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from wass_chat.cli.array_run import ARRAY_DIR_HELP, SLURM_ARRAY_HELP
from wass_chat.cli.kb_cmds import (
    JSON,
    KB_DIR,
    comma_integers,
    comma_list,
    kb_app,
    progress_bar,
)
from wass_chat.cli.output import console, emit, err_console
from wass_chat.learn.site_kb import open_kb
from wass_chat.slurm.arrays.config import ArrayConfig

if TYPE_CHECKING:
    from kb.seed import SeedConfig


_ARRAY = ArrayConfig()
"""`--slurm-array`'s defaults are the config's (tests/slurm/test_array_config.py)."""


@kb_app.command("seed")
def seed_command(
    count: int = typer.Option(1000, "--count", help="Cases to plan (all schedulers count)."),
    recipes: str = typer.Option(
        "montage,epigenomics,genome,seismology,soykb,srasearch,blast,bwa,cycles",
        "--recipes",
        help="WfCommons recipes (sizes below a recipe's minimum are raised to it).",
    ),
    shapes: str = typer.Option("chain,fan-out,fan-in,fork-join,layered,genomics", "--shapes"),
    platforms: str = typer.Option(
        "demo",
        "--platforms",
        help="demo, homo-N, hetero-N, hetero-N@SEED, hetero-N@A..B (seeds A to B) or platform"
        " files, comma-separated.",
    ),
    schedulers: str = typer.Option("heft,wass,slurm,random", "--schedulers"),
    sizes: str = typer.Option("50,100,200", "--sizes", help="Task counts to draw from."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Worker processes (per array task)."),
    seed: int = typer.Option(0, "--seed"),
    batch: int = typer.Option(1000, "--batch", help="Cases per insert (<= 5000)."),
    decisions: int = typer.Option(4, "--decisions", help="Decision records kept per case."),
    network_model: str = typer.Option("fair", "--network-model"),
    slurm_array: int = typer.Option(_ARRAY.tasks, "--slurm-array", min=0, help=SLURM_ARRAY_HELP),
    array_dir: Path | None = typer.Option(_ARRAY.directory, "--array-dir", help=ARRAY_DIR_HELP),
    memory_mb: int = typer.Option(_ARRAY.memory_mb, "--slurm-mem", help="MB per array task."),
    no_wait: bool = typer.Option(not _ARRAY.wait, "--no-wait", help="Submit the array and return."),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """Stage 1: simulate workflows under several schedulers and store the cases (resumable)."""
    from kb.seed import SeedConfig, expand_platforms, pending_jobs, plan_seed, run_seed_jobs
    from policy.registry import canonical_name
    from sim.errors import InputError

    if network_model not in ("fair", "ideal"):
        raise InputError("--network-model", [f"{network_model!r}: use fair or ideal"])
    size_list = comma_integers("--sizes", sizes)
    config = SeedConfig(
        count=count,
        recipes=comma_list(recipes),
        shapes=comma_list(shapes),
        platforms=expand_platforms(comma_list(platforms)),
        schedulers=tuple(canonical_name(s) for s in comma_list(schedulers)),
        sizes=size_list,
        seed=seed,
        jobs=jobs,
        network_model=network_model,  # type: ignore[arg-type]
        decisions_per_case=decisions,
        batch=max(1, min(batch, 5000)),
    )
    if slurm_array:
        array = ArrayConfig(slurm_array, array_dir, memory_mb, wait=not no_wait)
        seed_on_slurm(config, array, kb_dir, as_json)
        return
    kb = open_kb(kb_dir)
    try:
        plan = plan_seed(config)
        todo = sum(len(j.schedulers) for j in pending_jobs(kb, plan))
        with progress_bar("seeding cases", todo) as advance:
            report = run_seed_jobs(kb, plan, config, advance)
        stored = kb.count()
    finally:
        kb.close()
    data = {
        "planned": report.planned,
        "skipped_existing": report.skipped,
        "added": report.added,
        "seconds": round(report.seconds, 2),
        "cases_per_second": round(report.rate, 1),
        "stored": stored,
        "jobs": jobs,
    }
    emit(
        data,
        as_json,
        lambda d: console.print(
            f"added {d['added']} cases ({d['skipped_existing']} already stored) in {d['seconds']} s"
            f" = {d['cases_per_second']} cases/s; {d['stored']} stored"
        ),
    )


def seed_on_slurm(
    config: SeedConfig, array: ArrayConfig, kb_dir: Path | None, as_json: bool
) -> None:
    """``kb seed --slurm-array N``: prepare, submit what lacks a shard, watch, merge."""
    from wass_chat.cli.array_run import array_report
    from wass_chat.slurm.arrays import work

    with array_report() as report:
        seeded = work.seed_on_slurm(config, array, report)
    directory, submitted, ended = seeded.directory, seeded.submitted, seeded.outcome
    if ended is None:
        data = {
            "directory": str(directory),
            "job_id": submitted.job_id if submitted else None,
            "tasks": list(submitted.tasks) if submitted else [],
        }
        emit(data, as_json, lambda d: console.print(f"merge later: wass-chat kb merge {directory}"))
        return
    cpu = {
        "task_cpu_seconds": round(ended.cpu_seconds, 1),
        "task_elapsed_max_seconds": max((e for e, _ in ended.usage.values()), default=0.0),
    }
    merge_into(kb_dir, directory, as_json, ended.progress.failed, cpu)


def merge_into(
    kb_dir: Path | None,
    directory: Path,
    as_json: bool,
    failed: dict[int, str] | None = None,
    usage: dict[str, float] | None = None,
) -> None:
    """Merge the finished shards of ``directory`` and report; exit 1 when tasks lack a shard."""
    from kb.seed_shards import merge_shards

    kb = open_kb(kb_dir)
    try:
        with err_console.status(f"merging the shards of {directory}"):
            report = merge_shards(kb, directory)
        stored = kb.count()
    finally:
        kb.close()
    data: dict[str, Any] = {
        "directory": str(directory),
        "tasks": report.tasks,
        "shards": report.shards,
        "cases_in_shards": report.cases_in_shards,
        "added": report.added,
        "stored": stored,
        "merge_seconds": round(report.seconds, 2),
        "merge_cpu_seconds": round(report.cpu_seconds, 2),
        "missing_tasks": report.missing_tasks,
        "failed": {str(t): s for t, s in (failed or {}).items()},
        **(usage or {}),
    }

    def render(d: dict[str, Any]) -> None:
        console.print(
            f"merged {d['shards']}/{d['tasks']} shards: {d['added']} cases added of"
            f" {d['cases_in_shards']} ({d['merge_seconds']} s); {d['stored']} stored"
        )
        if "task_cpu_seconds" in d:
            console.print(
                f"array tasks: {d['task_cpu_seconds']} s of CPU in all (sacct TotalCPU), the"
                f" longest {d['task_elapsed_max_seconds']} s"
            )
        if d["missing_tasks"]:
            console.print(
                f"tasks without a shard: {d['missing_tasks']} {d['failed'] or ''}: run the same"
                " command again to re-run only them (or `sbatch --array=K"
                f" {directory}/seed-task.sh`, then `wass-chat kb merge {directory}`)"
            )

    emit(data, as_json, render)
    if report.missing_tasks:
        raise typer.Exit(1)


@kb_app.command("merge")
def merge_command(
    directory: Path = typer.Argument(..., help="A seed array directory (kb seed --slurm-array)."),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """Add the finished shards of a seed array to the knowledge base (idempotent)."""
    merge_into(kb_dir, directory.resolve(), as_json)


def register(app: typer.Typer) -> None:
    """The commands above join ``kb_app`` when this module is imported; nothing else to add."""
