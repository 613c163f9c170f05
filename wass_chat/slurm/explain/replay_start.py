"""When a job waiting for CPUs could start, by our replay of the running jobs' time limits.

An answer about a pending job gives one start time and says where it came from. Slurm's own
estimate (``squeue --start``) comes first; this replay is used only when Slurm has none yet (its
backfill pass has not reached the job). It frees each running job's CPUs, node by node as Slurm
allocated them (:func:`wass_chat.slurm.occupancy.running_jobs`), at the job's end (start plus
time limit, an upper bound), and finds the first moment enough usable nodes of the job's
partition have the CPUs it asks for. It counts CPUs only, not memory or GPUs, and not the
pending jobs ahead of it: the time is a "not before", and is said so.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from wass_chat.slurm.advice import free_cpus
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands
from wass_chat.slurm.formats import clock
from wass_chat.slurm.live import Snapshot
from wass_chat.slurm.occupancy import BusyJob, running_jobs


@dataclass(frozen=True)
class ReplayedStart:
    """The first moment the job's CPUs are free, and the running job whose end frees them."""

    when: datetime
    freed_by: str

    def note(self, now: datetime) -> str:
        """The expected start as an answer states it, naming its source."""
        return (
            f"not before about {clock(self.when, now)}, when job {self.freed_by}'s time limit "
            "ends (our replay of the running jobs' time limits, counting CPUs only and not the "
            "jobs ahead of it; Slurm has not estimated a start yet)"
        )


def replayed_start(
    snap: Snapshot, jobs: list[BusyJob] | None = None, commands: SlurmCommands | None = None
) -> ReplayedStart | None:
    """When ``snap``'s job would find its CPUs free, from the running ``jobs`` (asked of Slurm
    through ``commands`` when not given); None when they are free now or never free up (jobs
    without a time limit hold them)."""
    if jobs is None:
        if commands is None:
            return None
        try:
            jobs, _source = running_jobs(commands)
        except SlurmCommandError:
            return None
    free = free_cpus(snap, snap.partition)
    nodes = max(1, int(snap.num_nodes.split("-")[0] or 1))
    per_node = -(-snap.cpus // nodes)

    def fits() -> bool:
        return sum(1 for cpus in free.values() if cpus >= per_node) >= nodes

    if fits():
        return None
    ends = sorted((j for j in jobs if j.end is not None), key=lambda j: (j.end, j.job_id))
    for job in ends:
        for node, cpus in job.cpus_by_node:
            if node in free:
                free[node] += cpus
        if fits() and job.end is not None:
            return ReplayedStart(max(job.end, snap.now), job.job_id)
    return None
