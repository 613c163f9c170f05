"""Where an array stands: which tasks are done (their shards), still queued (squeue) or ended
without a shard (sacct's state: FAILED, CANCELLED, OUT_OF_MEMORY...); waiting for it to end."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sim.array_plan import finished_tasks, read_plan
from wass_chat.slurm.arrays.submissions import latest_job
from wass_chat.slurm.commands import SlurmCommands

ACTIVE = frozenset(
    {
        "PENDING",
        "CONFIGURING",
        "RUNNING",
        "COMPLETING",
        "SUSPENDED",
        "REQUEUED",
        "REQUEUE_HOLD",
        "REQUEUE_FED",
        "RESIZING",
        "SIGNALING",
        "STAGE_OUT",
        "STOPPED",
    }
)
"""squeue states of a task that may still write its shard."""
ACCOUNTING_GRACE_S = 30.0
"""How long :func:`wait` gives sacct to record how a task that left squeue ended."""


@dataclass
class ArrayProgress:
    """The array's state at one poll."""

    tasks: int
    done: set[int] = field(default_factory=set)
    """Tasks whose shard is finished."""
    queued: dict[int, str] = field(default_factory=dict)
    """Tasks squeue still holds in an active state, with that state."""
    failed: dict[int, str] = field(default_factory=dict)
    """Submitted tasks that ended without a shard, with sacct's state."""

    def line(self) -> str:
        running = sum(1 for s in self.queued.values() if s != "PENDING")
        pending = len(self.queued) - running
        return (
            f"{len(self.done)}/{self.tasks} tasks done, {running} running, {pending} pending,"
            f" {len(self.failed)} failed"
        )


def queued_tasks(commands: SlurmCommands, directory: Path) -> dict[int, str]:
    """Tasks (of their latest submission) that squeue holds in an active state."""
    latest = latest_job(directory)
    if not latest:
        return {}
    argv = [
        "squeue",
        "-h",
        "-r",
        "--states=all",
        "-j",
        ",".join(sorted(set(latest.values()))),
        "-o",
        "%i|%T",
    ]
    done = commands.completed(argv)
    if done.returncode != 0:  # every job purged from the controller: nothing queued
        return {}
    queued = {}
    for line in done.stdout.splitlines():
        job_task, _, state = line.strip().partition("|")
        job, _, task = job_task.partition("_")
        if task.isdigit() and latest.get(int(task)) == job and state in ACTIVE:
            queued[int(task)] = state
    return queued


def progress(commands: SlurmCommands, directory: Path) -> ArrayProgress:
    """Where the array stands: done (shards), queued (squeue), failed (sacct's state)."""
    plan = read_plan(directory)
    state = ArrayProgress(plan.tasks, finished_tasks(directory, plan))
    state.queued = {
        t: s for t, s in queued_tasks(commands, directory).items() if t not in state.done
    }
    latest = latest_job(directory)
    ended = [t for t in latest if t not in state.done and t not in state.queued]
    if ended:
        rows = commands.accounting([f"{latest[t]}_{t}" for t in ended], ("JobID", "State"))
        for t in ended:
            row = rows.get(f"{latest[t]}_{t}")
            state.failed[t] = row["State"].split()[0] if row else "UNKNOWN"
    return state


def wait(
    commands: SlurmCommands,
    directory: Path,
    on_progress: Callable[[ArrayProgress], None] | None = None,
    poll_seconds: float = 1.0,
) -> ArrayProgress:
    """Poll until no task is queued; returns the final state.

    A task can leave squeue a moment before the accounting records how it ended (sacct still
    says RUNNING, or has no row yet): the polls go on, up to ``ACCOUNTING_GRACE_S``, until every
    failed task's state is a final one, so a task killed with ``kill -9`` is named FAILED rather
    than RUNNING or UNKNOWN."""
    settled_by: float | None = None
    while True:
        state = progress(commands, directory)
        if on_progress:
            on_progress(state)
        if not state.queued:
            unsettled = [s for s in state.failed.values() if s in ACTIVE or s == "UNKNOWN"]
            settled_by = settled_by or time.monotonic() + ACCOUNTING_GRACE_S
            if not unsettled or time.monotonic() > settled_by:
                return state
        time.sleep(poll_seconds)
