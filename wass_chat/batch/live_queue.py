"""The jobs running and pending on the live cluster now, as batch-simulator jobs.

A what-if about "the queue" (how would the 11 jobs waiting now drain with 2 more nodes?) and
a start-time prediction for a pending job both need the controller's present, not the
accounting's past: sacct replays only jobs that started. :func:`read_live_queue` reads
``scontrol --oneliner show job`` (every job the controller holds) into :class:`LiveJob` rows;
:meth:`LiveQueue.workload` turns them into a :class:`~sim.batch.model.Workload` a replay
starts from:

* a **running** job keeps its submission and start, and runs until its time limit (its real
  end is unknown; Slurm's own start estimates assume the same), at least one second past now;
* a **pending** job keeps its submission and may start no sooner than now (or its
  EligibleTime, when later), runs for its time limit, planned by it too;
* a job with no time limit runs for its partition's MaxTime, else :data:`NO_LIMIT_RUN_S`
  (counted in :attr:`QueueWorkload.no_limit`);
* a dependency names parents by job id: a parent still in the queue must end first, one that
  left it has ended;
* held jobs (``JobHeldUser``, ``JobHeldAdmin``, priority 0) and jobs whose dependency can never
  be satisfied are not replayed: nothing would start them (:attr:`LiveQueue.held`);
* nor are jobs that wait for something the replay does not model (:data:`REPLAYED_REASONS`
  lists what it does): an association or QOS limit, licences, an array's throttle, a
  reservation, a drained node they asked for, a partition that is down, a request the
  partition refuses. Replayed, they would start as soon as CPUs are free, and "2 more nodes"
  would start jobs that wait for a limit no node lifts (:attr:`LiveQueue.not_modelled`, with
  the jobs that depend on them);
* a pending job array that ``scontrol`` prints as one record (``ArrayTaskId=4-10``) is one
  row per task.

Times are epoch seconds; the snapshot's own time is ``now_s`` (the caller's clock, never read
here when given).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from sim.batch.model import UNLIMITED, BatchCluster, Workload
from wass_chat.slurm.commands import SlurmCommands, scontrol_records
from wass_chat.slurm.formats import is_set, memory_mb, slurm_duration, slurm_time, tres
from wass_chat.slurm.hostlist import expand
from wass_chat.slurm.nodes import state_flags
from wass_chat.slurm.queue_model import CLOSED_NODE_STATES, STARTABLE_REASONS

NO_LIMIT_RUN_S = 7 * 86400
"""How long a job without a time limit (and a partition without MaxTime) is assumed to run."""
HELD_REASONS = frozenset({"JobHeldUser", "JobHeldAdmin", "DependencyNeverSatisfied"})
"""Pending reasons that no scheduling pass ends: such jobs are left out of a replay."""
REPLAYED_REASONS = STARTABLE_REASONS | {"Dependency"}
"""Pending reasons the replay models: the job's turn (CPUs, memory, nodes, priority), a begin
time and a dependency on jobs it replays. Any other reason is a wait it does not model."""
RUNNING_STATES = frozenset({"RUNNING", "COMPLETING", "SUSPENDED", "CONFIGURING"})

_PARENT = re.compile(r"after(?:ok|any|notok|corr|burstbuffer)?:([\d:_+]+)")
_GPUS = re.compile(r"gres/gpu(?::[^=,]*)?=(\d+)")


@dataclass(frozen=True, slots=True)
class LiveJob:
    """One job the controller holds, as the replay needs it (times in epoch seconds)."""

    job_id: str
    state: str
    """``running`` or ``pending``."""
    user: str
    partition: str
    qos: str
    submit_s: int
    eligible_s: int | None
    start_s: int | None
    """Running jobs: when they started."""
    limit_s: int | None
    """None: no time limit."""
    nnodes: int
    cpus_per_node: int
    mem_per_node: int
    """Bytes."""
    gpus_per_node: int
    parents: tuple[str, ...] = ()
    reason: str = ""
    expected_start_s: int | None = None
    """Pending jobs: Slurm's own expected start (``StartTime``), when it has planned one."""
    nodes: tuple[str, ...] = ()
    """Running jobs: the nodes Slurm gave them (``NodeList``)."""


@dataclass(frozen=True)
class QueueWorkload:
    """A :class:`LiveQueue` as a workload, and how to find each job in it."""

    workload: Workload
    now_s: int
    rows: Mapping[str, int]
    """Job id -> row of ``workload``."""
    running_rows: np.ndarray
    pending_rows: np.ndarray
    no_limit: int
    """Jobs without a time limit given :data:`NO_LIMIT_RUN_S` (or their partition's MaxTime)."""
    clipped: int
    """Jobs whose even per-node request fits no ``nnodes`` nodes of their partition (Slurm
    spread them unevenly over nodes of different sizes), cut to the largest that fits."""


@dataclass(frozen=True)
class LiveQueue:
    """The controller's jobs at ``now_s``: those running and pending, and those held."""

    now_s: int
    jobs: tuple[LiveJob, ...]
    held: tuple[str, ...] = ()
    """Pending jobs left out: held, or a dependency that can never be satisfied."""
    closed_nodes: tuple[str, ...] = ()
    """Drained or down nodes that run nothing (:func:`closed_idle_nodes`): not replayed."""
    not_modelled: tuple[tuple[str, str], ...] = ()
    """(job id, reason) of pending jobs left out because they wait for something the replay
    does not model (:data:`REPLAYED_REASONS`), or depend on such a job."""

    @property
    def running(self) -> tuple[LiveJob, ...]:
        return tuple(j for j in self.jobs if j.state == "running")

    @property
    def pending(self) -> tuple[LiveJob, ...]:
        return tuple(j for j in self.jobs if j.state == "pending")

    def workload(self, cluster: BatchCluster) -> QueueWorkload:
        """The jobs as a replay's workload on ``cluster`` (partitions it lacks: the default
        one's MaxTime is not applied, the name is kept so the replay can say it fits nowhere)."""
        jobs = sorted(self.jobs, key=lambda j: (j.submit_s, _id_key(j.job_id)))
        max_time = {p.name: p.max_time_s for p in cluster.partitions}
        rows = {j.job_id: i for i, j in enumerate(jobs)}
        partitions = tuple(sorted({j.partition for j in jobs}))
        users = tuple(sorted({j.user for j in jobs}))
        qos = tuple(sorted({j.qos for j in jobs})) or ("normal",)
        runtime, earliest, no_limit = [], [], 0
        for j in jobs:
            limit = j.limit_s
            if limit is None:
                part_max = max_time.get(j.partition, UNLIMITED)
                limit = part_max if part_max != UNLIMITED else NO_LIMIT_RUN_S
                no_limit += 1
            if j.state == "running":
                start = j.start_s if j.start_s is not None else self.now_s
                start = min(start, self.now_s - 1)  # before any pending job may start
                runtime.append(max(limit, self.now_s + 1 - start))
                earliest.append(start)
            else:
                runtime.append(limit)
                earliest.append(max(self.now_s, j.eligible_s or self.now_s))
        ptr, parents = [0], []
        for j in jobs:
            found = sorted({rows[p] for p in j.parents if p in rows and rows[p] != rows[j.job_id]})
            parents += found
            ptr.append(len(parents))
        runtime_a = np.asarray(runtime, np.int64)
        limit_a = np.asarray(
            [UNLIMITED if j.limit_s is None else j.limit_s for j in jobs], np.int64
        )
        submit = np.asarray([j.submit_s for j in jobs], np.int64)
        start_a = np.asarray(
            [e if j.state == "running" else -1 for j, e in zip(jobs, earliest, strict=True)],
            np.int64,
        )
        w = Workload(
            job_ids=tuple(j.job_id for j in jobs),
            submit_s=np.minimum(submit, np.asarray(earliest, np.int64)),
            earliest_s=np.asarray(earliest, np.int64),
            runtime_s=runtime_a,
            limit_s=limit_a,
            estimate_s=np.where(limit_a == UNLIMITED, runtime_a, limit_a),
            nnodes=np.asarray([j.nnodes for j in jobs], np.int64),
            cpus_per_node=np.asarray([j.cpus_per_node for j in jobs], np.int64),
            mem_per_node=np.asarray([j.mem_per_node for j in jobs], np.int64),
            gpus_per_node=np.asarray([j.gpus_per_node for j in jobs], np.int64),
            partition=np.asarray([partitions.index(j.partition) for j in jobs], np.int64),
            user=np.asarray([users.index(j.user) for j in jobs], np.int64),
            qos=np.asarray([qos.index(j.qos) for j in jobs], np.int64),
            recorded_start_s=start_a,
            partitions=partitions,
            users=users,
            qos_names=qos,
            dep_ptr=np.asarray(ptr, np.int64) if parents else np.zeros(1, np.int64),
            dep_parent=np.asarray(parents, np.int64),
        )
        w, clipped = _fitted(w, cluster, [j.nodes for j in jobs])
        states = np.asarray([j.state == "running" for j in jobs], bool)
        return QueueWorkload(
            w, self.now_s, rows, np.flatnonzero(states), np.flatnonzero(~states), no_limit, clipped
        )


def _fitted(
    w: Workload, cluster: BatchCluster, held: Sequence[tuple[str, ...]]
) -> tuple[Workload, int]:
    """``w`` with each per-node request cut to what its nodes can all host, and how many jobs
    were cut. A running job's nodes are those it ``held`` (the smallest of them bounds the
    even request, so it fits where Slurm put it); a pending job's, any ``nnodes`` of its
    partition (the ``nnodes``-th largest CPUs, memory and GPUs). Jobs of partitions the
    cluster lacks are left as they are."""
    index = cluster.node_index()
    members = {p.name: [cluster.nodes[index[n]] for n in p.nodes] for p in cluster.partitions}
    cpus, mem, gpus = w.cpus_per_node.copy(), w.mem_per_node.copy(), w.gpus_per_node.copy()
    cut = 0
    for i in range(len(w)):
        own = [cluster.nodes[index[n]] for n in held[i] if n in index]
        k = int(w.nnodes[i])
        if own and len(own) == len(held[i]):
            nodes, k = own, len(own)
        else:
            nodes = members.get(w.partitions[w.partition[i]], [])
        if len(nodes) < k:
            continue
        caps = [
            sorted((getattr(n, f) for n in nodes), reverse=True)[k - 1]
            for f in ("cpus", "memory", "gpus")
        ]
        wanted = (cpus[i], mem[i], gpus[i])
        cpus[i], mem[i], gpus[i] = (min(a, b) for a, b in zip(wanted, caps, strict=True))
        cut += (cpus[i], mem[i], gpus[i]) != wanted
    return replace(w, cpus_per_node=cpus, mem_per_node=mem, gpus_per_node=gpus), cut


def read_live_queue(commands: SlurmCommands | None = None, now_s: int | None = None) -> LiveQueue:
    """The live controller's jobs now (``scontrol --oneliner show job``); ServiceUnavailable
    when Slurm does not answer."""
    commands = commands or SlurmCommands()
    text = commands.run(["scontrol", "--oneliner", "show", "job"])
    queue = queue_from_records(scontrol_records(text), int(time.time()) if now_s is None else now_s)
    nodes = scontrol_records(commands.run(["scontrol", "--oneliner", "show", "nodes"]))
    return replace(queue, closed_nodes=closed_idle_nodes(nodes))


def closed_idle_nodes(nodes: Sequence[Mapping[str, str]]) -> tuple[str, ...]:
    """Nodes Slurm starts no job on (drained, down...: the queue model's
    :data:`~wass_chat.slurm.queue_model.CLOSED_NODE_STATES`) that run nothing: a replay of
    the queue leaves them out (one still running jobs stays, as they need it)."""
    return tuple(
        r["NodeName"]
        for r in nodes
        if state_flags(r.get("State", "")) & CLOSED_NODE_STATES and int(r.get("CPUAlloc") or 0) == 0
    )


def queue_from_records(records: Sequence[Mapping[str, str]], now_s: int) -> LiveQueue:
    """:class:`LiveQueue` from ``scontrol show job`` records (finished jobs are skipped)."""
    jobs: list[LiveJob] = []
    held: list[str] = []
    other: list[tuple[str, str]] = []
    for r in records:
        state = r.get("JobState", "")
        if state in RUNNING_STATES:
            jobs += [_job(r, "running", job_id) for job_id in _task_ids(r)[:1]]
        elif state == "PENDING":
            ids = _task_ids(r)
            # scontrol --oneliner writes a long text's spaces as underscores
            reason = (r.get("Reason") or "None").split(",")[0].strip().replace("_", " ")
            if reason in HELD_REASONS or r.get("Priority") == "0":
                held += ids
            elif reason not in REPLAYED_REASONS:
                other += [(job_id, reason) for job_id in ids]
            else:
                jobs += [_job(r, "pending", job_id) for job_id in ids]
    left = {job_id for job_id, _ in other} | set(held)
    while waits := [j for j in jobs if _parent_left_out(j, left)]:
        other += [(j.job_id, "Dependency (on a job not replayed)") for j in waits]
        left |= {j.job_id for j in waits}
        jobs = [j for j in jobs if j.job_id not in left]
    return LiveQueue(now_s, tuple(jobs), tuple(held), not_modelled=tuple(other))


def _parent_left_out(job: LiveJob, left: set[str]) -> str:
    """The first job ``job`` depends on that is left out ('' when none): a task id, or an
    array's id when one of its tasks is (a parent left out never ends in the replay)."""
    tasks_of = {x.split("_")[0] for x in left if "_" in x}
    return next((p for p in job.parents if p in left or ("_" not in p and p in tasks_of)), "")


def _task_ids(r: Mapping[str, str]) -> list[str]:
    """The job ids a record stands for: one, or one per task of a pending array's record
    (``ArrayJobId=7 ArrayTaskId=4-10:2%3``)."""
    tasks = r.get("ArrayTaskId", "")
    if not is_set(tasks) or not is_set(r.get("ArrayJobId")):
        return [r.get("JobId", "")]
    base = r["ArrayJobId"]
    if tasks.isdigit():
        return [f"{base}_{tasks}"]
    ids = []
    for item in tasks.split("%")[0].split(","):
        span, _, step = item.partition(":")
        low, _, high = span.partition("-")
        if low.isdigit():
            stop = int(high) if high.isdigit() else int(low)
            ids += [f"{base}_{k}" for k in range(int(low), stop + 1, int(step or 1))]
    return ids or [r.get("JobId", "")]


def _job(r: Mapping[str, str], state: str, job_id: str) -> LiveJob:
    nnodes = max(1, int((r.get("NumNodes") or "1").split("-")[0] or 1))
    cpus = max(1, int((r.get("NumCPUs") or "1").split("-")[0] or 1))
    per_node = -(-cpus // nnodes)
    tres_text = r.get("ReqTRES") or r.get("TRES") or ""
    if state == "running" and is_set(r.get("AllocTRES")):
        tres_text = r["AllocTRES"]
    asked = tres(tres_text)
    if is_set(asked.get("mem")):  # what Slurm allocated or will: MinMemoryNode=0 means all
        tres_nodes = int(asked.get("node") or nnodes) or 1
        mem = (memory_mb(asked["mem"]) or 0.0) * 2**20 / tres_nodes
    elif is_set(r.get("MinMemoryCPU")):
        mem = (memory_mb(r.get("MinMemoryCPU")) or 0.0) * 2**20 * per_node
    else:
        mem = (memory_mb(r.get("MinMemoryNode")) or 0.0) * 2**20
    found = _GPUS.search(tres_text)
    gpus = -(-int(found.group(1)) // nnodes) if found else 0
    limit = slurm_duration(r.get("TimeLimit"))
    parents = tuple(
        item.split("(")[0].split("+")[0]
        for group in _PARENT.findall(r.get("Dependency", "") or "")
        for item in group.split(":")
        if item.split("(")[0].split("+")[0]
    )
    return LiveJob(
        job_id=job_id,
        state=state,
        user=(r.get("UserId") or "unknown").split("(")[0],
        partition=(r.get("Partition") or "unknown").split(",")[0],
        qos=r.get("QOS") or "normal",
        submit_s=_epoch(r.get("SubmitTime")) or 0,
        eligible_s=_epoch(r.get("EligibleTime")),
        start_s=_epoch(r.get("StartTime")) if state == "running" else None,
        limit_s=None if limit is None else int(limit),
        nnodes=nnodes,
        cpus_per_node=per_node,
        mem_per_node=int(mem),
        gpus_per_node=gpus,
        parents=parents,
        reason=r.get("Reason", ""),
        expected_start_s=_epoch(r.get("StartTime")) if state == "pending" else None,
        nodes=tuple(expand(r.get("NodeList", ""))) if state == "running" else (),
    )


def _epoch(value: str | None) -> int | None:
    when = slurm_time(value)
    return None if when is None else int(when.timestamp())


def _id_key(job_id: str) -> tuple[int, int]:
    head, _, task = job_id.partition("_")
    return (int(head) if head.isdigit() else 0, int(task) if task.isdigit() else -1)
