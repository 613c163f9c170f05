"""What the live cluster's running jobs hold, node by node, exactly as Slurm allocated it.

A plan made for an empty machine is wrong on a shared one: the workflow's jobs would queue
behind the running ones on the nodes it picked. :func:`cluster_occupancy` reads every running
job's CPUs **per node** and its expected end (start plus time limit: an upper bound, jobs usually
end earlier) and turns them into :class:`~sim.occupancy.Hold` s from now, for the nodes of the
platform being planned on. It also keeps each job's partition, ``--time`` and ``--mem`` for the
approval screen (:class:`BusyJob`).

Per-node CPUs, not an even share: a 12-CPU job on n[1-3] may hold all of n1 and n2 and half of
n3 (``-n`` with ``--distribution`` or ``-w`` does that), and spreading its CPUs evenly showed free
cores that were not. Two sources, by what the release prints:

* Slurm 24.05 and later: ``squeue --json -t R``, whose ``job_resources.nodes.allocation[]``
  gives each node's ``cpus.count`` (data_parser v0.0.41+);
* every release (and the fallback when the JSON lacks that list): ``scontrol -d --oneliner show
  job``, whose detail lines ``Nodes=n[1-2] CPU_IDs=0-1 Mem=200 GRES=`` give each node's CPU ids.
  Where those ids count cores of a node with several threads per core, the counts are scaled so
  that the job's total is its ``NumCPUs``.

The holds on one node are capped at its cores. A job with no end (no time limit) is taken to
hold its cores for :data:`NO_END_HOLD_S`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sim.model import Platform
from sim.occupancy import Hold, Occupancy
from wass_chat.slurm import structured
from wass_chat.slurm.availability import ensure_slurm
from wass_chat.slurm.commands import (
    SlurmCommandError,
    SlurmCommands,
    parse_scontrol_record,
    scontrol_lines,
)
from wass_chat.slurm.formats import clock, memory_mb, slurm_clock, slurm_time
from wass_chat.slurm.hostlist import expand

NO_END_HOLD_S = 7 * 24 * 3600.0
"""How long a running job without an end time (no time limit) is assumed to keep its cores."""
HOLDING_STATES = frozenset({"RUNNING", "COMPLETING", "SUSPENDED"})
"""States in which a job's CPUs count in its nodes' CPUAlloc."""
JSON_SINCE = (24, 5)
"""First release whose ``squeue --json`` gives each node's allocated CPUs."""
DETAIL_ARGV = ["scontrol", "-d", "--oneliner", "show", "job"]
JSON_ARGV = ["squeue", "--json", "-t", "R"]
_DETAIL = re.compile(r"(?:^|\s)Nodes=(?P<nodes>\S+)\s+CPU_IDs=(?P<ids>\S+)")


@dataclass(frozen=True)
class BusyJob:
    """A running job as the approval screen shows it: who, where, how long, how much memory."""

    job_id: str
    user: str
    partition: str
    time_limit: str
    """As Slurm prints it (``00:10:00``, ``UNLIMITED``)."""
    memory: str
    """The request as a flag (``--mem=200M``, ``--mem-per-cpu=100M``), '' when unknown."""
    cpus_by_node: tuple[tuple[str, int], ...]
    end: datetime | None
    array_task: str = ""
    """``ARRAYJOB_TASK`` (``100_3``) for an array task, as squeue and sbatch users name it;
    ``job_id`` is then Slurm's internal id of that task (``103``), which nobody typed."""

    @property
    def shown_id(self) -> str:
        """The id people know the job by: the array task's ``100_3``, else the job id."""
        return self.array_task or self.job_id

    @property
    def cpus(self) -> int:
        return sum(n for _, n in self.cpus_by_node)

    def line(self, now: datetime | None = None) -> str:
        """``job 12 (alice): partition debug, --time=00:10:00, --mem=700M; n1 2 + n3 3 CPUs,
        until about 08:05``."""
        where = " + ".join(f"{node} {cpus}" for node, cpus in self.cpus_by_node)
        until = f"until about {clock(self.end, now)}" if self.end else "no time limit"
        memory = f", {self.memory}" if self.memory else ""
        return (
            f"job {self.shown_id} ({self.user or '?'}): partition {self.partition or '?'}, "
            f"--time={self.time_limit or '?'}{memory}; {where} CPUs, {until}"
        )


@dataclass(frozen=True)
class LiveOccupancy:
    """The holds the planner starts from, the jobs behind them, and the command that said so."""

    occupancy: Occupancy
    jobs: tuple[BusyJob, ...]
    source: str


def detailed_jobs(text: str) -> list[BusyJob]:
    """The running jobs in ``scontrol -d --oneliner show job`` output (pure: no Slurm call)."""
    jobs = []
    for line in scontrol_lines(text):
        record = parse_scontrol_record(_DETAIL.sub(" ", line))
        if (record.get("JobState") or "").split("+")[0] not in HOLDING_STATES:
            continue
        counts: dict[str, int] = {}
        for found in _DETAIL.finditer(line):
            per_node = count_ids(found["ids"])
            for name in expand(found["nodes"]):
                counts[name] = counts.get(name, 0) + per_node
        if not counts:  # no detail (select/linear): the whole NumCPUs over the nodes
            counts = _even(record.get("NumCPUs", "0"), expand(record.get("NodeList", "")))
        jobs.append(
            BusyJob(
                job_id=record.get("JobId", "?"),
                user=record.get("UserId", "").split("(")[0],
                partition=record.get("Partition", ""),
                time_limit=record.get("TimeLimit", ""),
                memory=_memory_flag(record),
                cpus_by_node=_scaled(counts, record.get("NumCPUs", "")),
                end=slurm_time(record.get("EndTime")),
                array_task=_array_task(record.get("ArrayJobId"), record.get("ArrayTaskId")),
            )
        )
    return jobs


def _array_task(array_job: object, task: object) -> str:
    """``100_3`` from an array job id and task id (text or JSON numbers); '' for a plain job
    (no array job id, or 0 as the JSON route gives one)."""
    job = f"{array_job:g}" if isinstance(array_job, float) else str(array_job or "")
    index = f"{task:g}" if isinstance(task, float) else str(task if task is not None else "")
    if not job or job == "0" or not index or not index.isdigit():
        return ""
    return f"{job}_{index}"


def count_ids(ids: str) -> int:
    """How many CPU ids a ``scontrol -d show job`` CPU_IDs list names: ``0-1,4,6-7`` -> 5."""
    total = 0
    for part in ids.split(","):
        low, _, high = part.partition("-")
        if low.isdigit():
            total += int(high) - int(low) + 1 if high.isdigit() else 1
    return total


def _even(num_cpus: str, nodes: Sequence[str]) -> dict[str, int]:
    if not nodes or not num_cpus.isdigit():
        return {}
    share, extra = divmod(int(num_cpus), len(nodes))
    return {n: share + (i < extra) for i, n in enumerate(nodes)}


def _scaled(counts: Mapping[str, int], num_cpus: str) -> tuple[tuple[str, int], ...]:
    """Per-node counts, multiplied by the threads per core when the ids counted cores."""
    total = sum(counts.values())
    factor = 1
    if num_cpus.isdigit() and total and int(num_cpus) != total and int(num_cpus) % total == 0:
        factor = int(num_cpus) // total
    return tuple((name, n * factor) for name, n in counts.items())


def _memory_flag(record: Mapping[str, str]) -> str:
    """``MinMemoryCPU=100M`` -> ``--mem-per-cpu=100M``; '' when none was asked (``0``)."""
    for key, flag in (("MinMemoryNode", "--mem"), ("MinMemoryCPU", "--mem-per-cpu")):
        if memory_mb(record.get(key)):
            return f"{flag}={record[key]}"
    return ""


def json_jobs(payload: Mapping[str, Any]) -> list[BusyJob] | None:
    """The running jobs in ``squeue --json`` output, or None when it gives no per-node CPUs
    (the layouts before data_parser v0.0.41), so that the caller falls back to text."""
    jobs = []
    for job in payload.get("jobs") or []:
        if not set(structured.states(job.get("job_state"))) & HOLDING_STATES:
            continue
        nodes = (job.get("job_resources") or {}).get("nodes")
        if not isinstance(nodes, Mapping) or not isinstance(nodes.get("allocation"), list):
            return None
        counts = {
            str(n.get("name")): int(structured.number((n.get("cpus") or {}).get("count")) or 0)
            for n in nodes["allocation"]
        }
        end = structured.number(job.get("end_time"))
        if structured.is_infinite(job.get("time_limit")):
            end = None  # Slurm puts a year ahead; the text says EndTime=Unknown
        jobs.append(
            BusyJob(
                job_id=str(job.get("job_id", "?")),
                user=structured.text(job.get("user_name")),
                partition=structured.text(job.get("partition")),
                time_limit=_time_limit(job.get("time_limit")),
                memory=_json_memory(job),
                cpus_by_node=tuple(counts.items()),
                end=datetime.fromtimestamp(end) if end else None,
                array_task=_array_task(
                    structured.number(job.get("array_job_id")),
                    structured.number(job.get("array_task_id")),
                ),
            )
        )
    return jobs


def _time_limit(value: Any) -> str:
    if structured.is_infinite(value):
        return "UNLIMITED"
    minutes = structured.number(value)
    return slurm_clock(minutes * 60) if minutes is not None else ""


def _json_memory(job: Mapping[str, Any]) -> str:
    for key, flag in (("memory_per_node", "--mem"), ("memory_per_cpu", "--mem-per-cpu")):
        mb = structured.number(job.get(key))
        if mb:
            return f"{flag}={mb:g}M"
    return ""


def holds_of(jobs: Sequence[BusyJob], platform: Platform, now: datetime) -> Occupancy:
    """The holds of ``jobs`` on ``platform``'s nodes from ``now`` (pure); nodes outside the
    platform are left out, and a node's holds never exceed its cores."""
    left = {n.name: n.cores for n in platform.nodes}
    holds: list[Hold] = []
    for job in jobs:
        until = NO_END_HOLD_S if job.end is None else max(0.0, (job.end - now).total_seconds())
        for name, cpus in job.cpus_by_node:
            cores = min(cpus, left.get(name, 0))
            if cores > 0 and until > 0:
                left[name] -= cores
                holds.append(Hold(name, cores, until, job.job_id))
    return Occupancy(tuple(holds))


def running_jobs(commands: SlurmCommands) -> tuple[list[BusyJob], str]:
    """Every running job with its per-node CPUs, and the command they came from."""
    version = ensure_slurm("squeue").version
    if version is not None and version.release >= JSON_SINCE:
        try:  # a site may lack the data_parser plugin: then the text says the same
            jobs = json_jobs(structured.loads(commands.run(JSON_ARGV), " ".join(JSON_ARGV)))
        except (SlurmCommandError, structured.SlurmJsonError):
            jobs = None
        if jobs is not None:
            return jobs, " ".join(JSON_ARGV)
    return detailed_jobs(commands.run(DETAIL_ARGV)), " ".join(DETAIL_ARGV)


def cluster_occupancy(
    commands: SlurmCommands, platform: Platform, now: datetime | None = None
) -> LiveOccupancy:
    """Every running job's CPUs on ``platform``'s nodes, held until its expected end."""
    jobs, source = running_jobs(commands)
    on_platform = {n.name for n in platform.nodes}
    busy = tuple(j for j in jobs if any(name in on_platform for name, _ in j.cpus_by_node))
    return LiveOccupancy(holds_of(busy, platform, now or datetime.now()), busy, source)
