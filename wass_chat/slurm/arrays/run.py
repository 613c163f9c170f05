"""Running a command's work as a Slurm job array, the same way for every command that can.

``kb seed``, ``bench`` and ``train evaluate`` take ``--slurm-array N`` (an :class:`ArrayConfig`):
each builds its plan (:mod:`sim.array_plan`), then :func:`submit` and :func:`watch` do the rest
the same way (check that Slurm answers before anything is written, submit the tasks without a
shard, report the array's progress, read the tasks' sacct usage once it ends). Failed tasks are
named with their sacct state (:class:`ArrayIncomplete`); running the same command again re-runs
only them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from wass_chat.slurm.arrays.config import ArrayConfig
from wass_chat.slurm.arrays.status import ArrayProgress, wait
from wass_chat.slurm.arrays.submissions import Submission, task_list
from wass_chat.slurm.arrays.submit import ArrayResources, prepare, script_path, submit_missing
from wass_chat.slurm.arrays.usage import settled_usage
from wass_chat.slurm.commands import SlurmCommands

if TYPE_CHECKING:
    from sim.array_plan import ArrayPlan


class ArrayReport(Protocol):
    """Where an array's progress goes (the CLI: stderr, a status line while it waits)."""

    def note(self, line: str) -> None:
        """A line to keep: the submission, the final state, the cost."""

    def poll(self, state: ArrayProgress) -> None:
        """The array's state at each poll while it runs."""


class QuietReport:
    """An :class:`ArrayReport` that reports nothing."""

    def note(self, line: str) -> None:
        """Nothing."""

    def poll(self, state: ArrayProgress) -> None:
        """Nothing."""


class ArrayIncomplete(Exception):
    """Array tasks ended without their shard; the message names each with its sacct state and
    says how to re-run only them (the CLI prints it and exits 1; nothing was written)."""


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
    plan: ArrayPlan,
    directory: Path,
    cpus_per_task: int,
    memory_mb: int,
    report: ArrayReport | None = None,
) -> tuple[SlurmCommands, Submission | None]:
    """Check Slurm answers (else ServiceUnavailable, nothing written), write the plan and the
    batch script, submit the tasks without a shard that are not queued."""
    from wass_chat.config import settings

    commands = SlurmCommands()
    commands.ping()  # no Slurm here: ServiceUnavailable before anything is written
    prepare(directory, plan, ArrayResources(cpus_per_task, memory_mb, settings().slurm_partition))
    submitted = submit_missing(commands, directory)
    if submitted is not None:
        (report or QuietReport()).note(
            f"submitted array job {submitted.job_id}: tasks {task_list(submitted.tasks)} of"
            f" {plan.tasks} ({directory})"
        )
    return commands, submitted


def watch(
    commands: SlurmCommands, directory: Path, report: ArrayReport | None = None
) -> ArrayOutcome:
    """Wait for the array, reporting its progress; then its tasks' sacct usage."""
    shown = report or QuietReport()
    final = wait(commands, directory, shown.poll)
    shown.note(final.line())
    return ArrayOutcome(final, settled_usage(commands, directory, final.done))


def run_array(
    plan: ArrayPlan, cfg: ArrayConfig, cpus_per_task: int, report: ArrayReport | None = None
) -> tuple[Path, ArrayOutcome]:
    """Submit, watch; returns the array directory and how the array ended. A task that ended
    without its shard raises :class:`ArrayIncomplete` (the same call again re-runs only the
    missing tasks)."""
    directory = array_directory(plan, cfg.directory)
    commands, _ = submit(plan, directory, cpus_per_task, cfg.memory_mb, report)
    outcome = watch(commands, directory, report)
    missing = sorted(set(range(plan.tasks)) - outcome.progress.done)
    if missing:
        states = ", ".join(
            f"task {t}: {outcome.progress.failed.get(t, 'UNKNOWN')}" for t in missing
        )
        raise ArrayIncomplete(
            f"{len(missing)} of {plan.tasks} array tasks ended without a shard ({states});"
            f" run the same command again to re-run only them (logs: {directory / 'logs'};"
            f" by hand: sbatch --array={task_list(missing)} {script_path(directory, plan.kind)})"
        )
    return directory, outcome
