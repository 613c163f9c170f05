"""What an array's tasks cost: each task's elapsed and CPU seconds in its latest run, from
sacct's batch-step rows."""

from __future__ import annotations

import time
from pathlib import Path

from wass_chat.slurm.arrays.submissions import latest_job
from wass_chat.slurm.commands import SlurmCommands


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
    latest = latest_job(directory)
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
