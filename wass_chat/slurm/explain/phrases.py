"""Small phrasing helpers the explainers share: lists of names, durations, a running job."""

from __future__ import annotations

from wass_chat.slurm.live import Quoted, RunningJob


def names(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def jobs(count: int, state: str = "") -> str:
    """``1 job``, ``3 running jobs``, ``1,204 pending jobs``."""
    return f"{count:,} " + (f"{state} " if state else "") + ("job" if count == 1 else "jobs")


def minutes(seconds: float | None) -> str:
    if seconds is None:
        return "no limit"
    if seconds < 3600:
        return f"{seconds / 60:g} min"
    return f"{seconds / 3600:g} h"


def running_line(job: RunningJob) -> Quoted:
    ends = job.end.isoformat() if job.end else "Unknown"
    cpus = f"{job.cpus} CPU" + ("" if job.cpus == 1 else "s")
    return Quoted("squeue -t R", f"job {job.job_id}", f"{cpus} on {job.nodes}, ends {ends}")
