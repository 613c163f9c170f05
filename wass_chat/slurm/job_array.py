"""Work split into array tasks, run on a Slurm cluster as one job array, watched, re-run.

Slurm is the scale-out engine (no scheduler of our own): ``sbatch --array`` runs the tasks of
an array directory (:mod:`sim.array_plan`) wherever the cluster has room, each writing its own
shard into the directory (which must be on a filesystem the nodes share). The same machinery
runs the knowledge-base seed (:mod:`kb.seed_shards`), the bench
(:mod:`policy.bench.array_task`) and the policy's held-out evaluation
(:mod:`policy.learned.evaluate_array`): :data:`TASK_MODULES` names each kind's task entry point.
Progress comes from ``squeue`` (which tasks are still pending or running) and the shards
already renamed into place (which are done); ``sacct`` names the final state of a task that
ended without a shard (FAILED, CANCELLED, OUT_OF_MEMORY...).

Re-running is submitting again: :func:`submit_missing` submits exactly the tasks that have no
finished shard and are not queued, so running the same command again re-runs only the failed
tasks. By hand, ``sbatch --array=K DIR/KIND-task.sh`` re-runs task K. Every submission is
recorded in ``submissions.json``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sim.array_plan import ArrayPlan, finished_tasks, read_plan, write_plan
from wass_chat.slurm.commands import SlurmCommands

TASK_MODULES = {
    "seed": "kb.seed_shards",
    "bench": "policy.bench.array_task",
    "evaluate": "policy.learned.evaluate_array",
}
"""Each plan kind's task entry point (``python -m MODULE DIR`` runs one task)."""
SUBMISSIONS = "submissions.json"
ACTIVE = frozenset({
    "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
    "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
})  # fmt: skip
"""squeue states of a task that may still write its shard."""


@dataclass(frozen=True, slots=True)
class ArrayResources:
    """What each array task asks Slurm for."""

    cpus_per_task: int = 1
    """Also the task's worker processes (``--jobs``)."""
    memory_mb: int = 1000
    """Per task; a one-worker seed task peaked at 257 MB (sacct MaxRSS, the README's seed
    spec)."""
    partition: str | None = None


@dataclass(frozen=True, slots=True)
class Submission:
    job_id: str
    tasks: tuple[int, ...]


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
        return (f"{len(self.done)}/{self.tasks} tasks done, {running} running, {pending} pending,"
                f" {len(self.failed)} failed")  # fmt: skip


def task_list(tasks: Iterable[int]) -> str:
    """``0-3,5,7-8``: the ``--array`` spelling of ``tasks``."""
    ordered = sorted(set(tasks))
    ranges: list[list[int]] = []
    for t in ordered:
        if ranges and t == ranges[-1][1] + 1:
            ranges[-1][1] = t
        else:
            ranges.append([t, t])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges)


def script_path(directory: Path, kind: str) -> Path:
    return directory / f"{kind}-task.sh"


def batch_script(directory: Path, resources: ArrayResources, kind: str = "seed") -> str:
    """The array's batch script: ``sbatch --array=K DIR/KIND-task.sh`` runs task K alone."""
    module = TASK_MODULES[kind]
    lines = [
        "#!/bin/bash",
        f"# wass-chat: one task of a {kind} array ({module}).",
        f"#SBATCH --job-name=wass-{kind}",
        f"#SBATCH --output={directory / 'logs' / 'task-%a.out'}",
        f"#SBATCH --chdir={directory}",
        "#SBATCH --ntasks=1",
        f"#SBATCH --cpus-per-task={resources.cpus_per_task}",
        f"#SBATCH --mem={resources.memory_mb}M",
    ]
    if resources.partition:
        lines.append(f"#SBATCH --partition={resources.partition}")
    python = shlex.quote(sys.executable)
    lines.append(f"exec {python} -m {module} {shlex.quote(str(directory))}")
    return "\n".join(lines) + "\n"


def prepare(directory: Path, plan: ArrayPlan, resources: ArrayResources) -> Path:
    """Write the plan and the batch script into ``directory``; returns the script."""
    directory = directory.resolve()
    write_plan(directory, plan)
    (directory / "logs").mkdir(exist_ok=True)
    script = script_path(directory, plan.kind)
    partial = script.with_suffix(".partial")
    partial.write_text(batch_script(directory, resources, plan.kind))
    partial.chmod(0o755)
    os.replace(partial, script)
    return script


def submissions(directory: Path) -> list[Submission]:
    path = directory / SUBMISSIONS
    if not path.exists():
        return []
    return [Submission(s["job_id"], tuple(s["tasks"])) for s in json.loads(path.read_text())]


def _record(directory: Path, submission: Submission) -> None:
    listed = [{"job_id": s.job_id, "tasks": list(s.tasks)} for s in submissions(directory)]
    listed.append({"job_id": submission.job_id, "tasks": list(submission.tasks)})
    partial = directory / (SUBMISSIONS + ".partial")
    partial.write_text(json.dumps(listed, indent=1))
    os.replace(partial, directory / SUBMISSIONS)


def _latest_job(directory: Path) -> dict[int, str]:
    """Each submitted task's most recent array job id."""
    return {t: s.job_id for s in submissions(directory) for t in s.tasks}


def queued_tasks(commands: SlurmCommands, directory: Path) -> dict[int, str]:
    """Tasks (of their latest submission) that squeue holds in an active state."""
    latest = _latest_job(directory)
    if not latest:
        return {}
    argv = ["squeue", "-h", "-r", "--states=all", "-j", ",".join(sorted(set(latest.values()))),
            "-o", "%i|%T"]  # fmt: skip
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
    state.queued = {t: s for t, s in queued_tasks(commands, directory).items()
                    if t not in state.done}  # fmt: skip
    latest = _latest_job(directory)
    ended = [t for t in latest if t not in state.done and t not in state.queued]
    if ended:
        rows = commands.accounting([f"{latest[t]}_{t}" for t in ended], ("JobID", "State"))
        for t in ended:
            row = rows.get(f"{latest[t]}_{t}")
            state.failed[t] = row["State"].split()[0] if row else "UNKNOWN"
    return state


def submit_missing(commands: SlurmCommands, directory: Path) -> Submission | None:
    """Submit the tasks with no finished shard that are not queued (first run: all of them;
    later runs: the failed ones). None when there is nothing to submit."""
    plan = read_plan(directory)
    skip = finished_tasks(directory, plan) | set(queued_tasks(commands, directory))
    todo = [t for t in range(plan.tasks) if t not in skip]
    if not todo:
        return None
    script = script_path(directory, plan.kind)
    job_id = commands.sbatch([f"--array={task_list(todo)}", str(script)])
    submission = Submission(job_id, tuple(todo))
    _record(directory, submission)
    return submission


def wait(
    commands: SlurmCommands,
    directory: Path,
    on_progress: Callable[[ArrayProgress], None] | None = None,
    poll_seconds: float = 1.0,
) -> ArrayProgress:
    """Poll until no task is queued; returns the final state."""
    while True:
        state = progress(commands, directory)
        if on_progress:
            on_progress(state)
        if not state.queued:
            return state
        time.sleep(poll_seconds)


def slurm_seconds(text: str) -> float:
    """sacct's durations (``1-02:03:04``, ``02:03:04``, ``03:04.567``) in seconds."""
    days, _, clock = text.rpartition("-")
    seconds = 0.0
    for part in clock.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds + 86400 * int(days or 0)


def task_usage(commands: SlurmCommands, directory: Path) -> dict[int, tuple[float, float]]:
    """Each task's (elapsed, CPU) seconds in its latest run, from sacct's batch-step rows (the
    allocation rows of ``sacct -X`` leave TotalCPU at zero); tasks sacct has not filled in yet
    are left out."""
    latest = _latest_job(directory)
    if not latest:
        return {}
    wanted = {f"{j}_{t}.batch": t for t, j in latest.items()}
    jobs = ",".join(sorted(set(latest.values())))
    out = commands.run(["sacct", "-P", "-n", "-j", jobs, "-o", "JobID,Elapsed,TotalCPU"])
    usage = {}
    for line in out.splitlines():
        job_id, _, rest = line.partition("|")
        elapsed, _, cpu = rest.partition("|")
        if job_id in wanted and cpu and slurm_seconds(cpu) > 0:  # 0: not recorded yet
            usage[wanted[job_id]] = (slurm_seconds(elapsed), slurm_seconds(cpu))
    return usage


def settled_usage(
    commands: SlurmCommands, directory: Path, tasks: set[int], polls: int = 20
) -> dict[int, tuple[float, float]]:
    """:func:`task_usage` once sacct has recorded ``tasks`` (it lags the queue by a second or
    two), or what it has after ``polls`` half-second polls."""
    usage = task_usage(commands, directory)
    for _ in range(polls):
        if set(usage) >= tasks:
            break
        time.sleep(0.5)
        usage = task_usage(commands, directory)
    return usage
