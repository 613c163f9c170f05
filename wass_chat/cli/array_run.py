"""Running a command's work as a Slurm job array, the same way for every command that can.

``kb seed``, ``bench`` and ``train evaluate`` take ``--slurm-array N``: each builds its plan
(:mod:`sim.array_plan`), then :func:`submit` and :func:`watch` do the rest the same way (check
that Slurm answers before anything is written, submit the tasks without a shard, show the
array's progress on stderr, read the tasks' sacct usage once it ends). Failed tasks are named
with their sacct state; running the same command again re-runs only them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer

from sim.array_plan import ArrayPlan
from wass_chat.cli.output import err_console
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.job_array import (
    ArrayProgress,
    ArrayResources,
    Submission,
    prepare,
    script_path,
    settled_usage,
    submit_missing,
    task_list,
    wait,
)

SLURM_ARRAY_HELP = "Run as N Slurm array tasks, then merge (re-running submits only the missing)."
ARRAY_DIR_HELP = (
    "Shards and logs, on a filesystem the nodes share (default: WASS_HOME/arrays/KIND-DIGEST)."
)


@dataclass(frozen=True)
class ArrayOutcome:
    """How an array ended, and what its tasks cost according to sacct."""

    progress: ArrayProgress
    usage: dict[int, tuple[float, float]]
    """Task -> (elapsed, CPU) seconds of its latest run."""

    @property
    def elapsed_seconds(self) -> float:
        return sum(e for e, _ in self.usage.values())

    @property
    def cpu_seconds(self) -> float:
        return sum(c for _, c in self.usage.values())


def array_directory(plan: ArrayPlan, array_dir: Path | None) -> Path:
    """``array_dir``, or ``WASS_HOME/arrays/<kind>-<digest>`` (the same command finds its
    own array again; another plan gets another directory)."""
    from wass_chat.config import settings

    return (array_dir or settings().home / "arrays" / f"{plan.kind}-{plan.digest}").resolve()


def submit(
    plan: ArrayPlan, directory: Path, cpus_per_task: int, memory_mb: int
) -> tuple[SlurmCommands, Submission | None]:
    """Check Slurm answers (else one line, exit 2, nothing written), write the plan and the
    batch script, submit the tasks without a shard that are not queued."""
    from wass_chat.config import settings

    commands = SlurmCommands()
    commands.ping()  # no Slurm here: ServiceUnavailable before anything is written
    prepare(directory, plan, ArrayResources(cpus_per_task, memory_mb, settings().slurm_partition))
    submitted = submit_missing(commands, directory)
    if submitted is not None:
        err_console.print(
            f"submitted array job {submitted.job_id}: tasks {task_list(submitted.tasks)} of"
            f" {plan.tasks} ({directory})",
            soft_wrap=True,
        )
    return commands, submitted


def watch(commands: SlurmCommands, directory: Path) -> ArrayOutcome:
    """Wait for the array, showing its progress; then its tasks' sacct usage."""
    with err_console.status("waiting for the array") as status:
        final = wait(commands, directory, lambda p: status.update(p.line()))
    err_console.print(final.line())
    return ArrayOutcome(final, settled_usage(commands, directory, final.done))


def run(plan: ArrayPlan, directory: Path, cpus_per_task: int, memory_mb: int) -> ArrayOutcome:
    """Submit, watch; when a task ended without its shard, name it with its sacct state and
    exit 1 (nothing written: the same command again re-runs only the missing tasks)."""
    commands, _ = submit(plan, directory, cpus_per_task, memory_mb)
    outcome = watch(commands, directory)
    missing = sorted(set(range(plan.tasks)) - outcome.progress.done)
    if missing:
        states = ", ".join(f"task {t}: {outcome.progress.failed.get(t, 'UNKNOWN')}"
                           for t in missing)  # fmt: skip
        err_console.print(
            f"error: {len(missing)} of {plan.tasks} array tasks ended without a shard ({states});"
            f" run the same command again to re-run only them (logs: {directory / 'logs'};"
            f" by hand: sbatch --array={task_list(missing)} {script_path(directory, plan.kind)})",
            soft_wrap=True,
        )
        raise typer.Exit(1)
    return outcome
