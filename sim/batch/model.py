"""The cluster and its workload, as the batch simulator sees them.

Units, once: times are whole seconds (int), memory is bytes, power is watts. A node has CPUs,
memory and GPUs and a ``node_type`` naming its power profile; a partition is a named set of
nodes with a time limit and priority settings, as in ``slurm.conf``. The workload is columnar
(one numpy array per field, one row per job) because a year of a large site is millions of
jobs: a Python object per job would cost more than the simulation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from sim.errors import InputError, PlatformError, raise_if

UNLIMITED = -1
"""A time limit of ``UNLIMITED`` means none (Slurm's ``UNLIMITED``/``INFINITE``)."""


class WorkloadError(InputError):
    """A workload (sacct cache, SWF trace) that cannot be simulated as given."""

    kind = "workload"


@dataclass(frozen=True, slots=True)
class BatchNode:
    """One node: what a job can be allocated on it, and which power profile it draws."""

    name: str
    cpus: int
    memory: int
    gpus: int = 0
    node_type: str = "cpu"


@dataclass(frozen=True, slots=True)
class Partition:
    """A Slurm partition: its nodes, time limit (seconds, ``UNLIMITED``) and priority knobs."""

    name: str
    nodes: tuple[str, ...]
    max_time_s: int = UNLIMITED
    priority_job_factor: int = 1
    priority_tier: int = 1
    default: bool = False


@dataclass(frozen=True)
class BatchCluster:
    """Nodes and partitions; a node may belong to several partitions (as in Slurm)."""

    nodes: tuple[BatchNode, ...]
    partitions: tuple[Partition, ...]

    def __post_init__(self) -> None:
        problems: list[str] = []
        names = [n.name for n in self.nodes]
        if not names:
            problems.append("no node")
        dupes = (
            sorted({n for n in names if names.count(n) > 1}) if len(set(names)) < len(names) else []
        )
        problems += [f"node {n} defined twice" for n in dupes]
        for node in self.nodes:
            if node.cpus <= 0:
                problems.append(f"node {node.name} has {node.cpus} CPUs")
            if node.memory < 0 or node.gpus < 0:
                problems.append(f"node {node.name} has negative memory or GPUs")
        known = set(names)
        parts = [p.name for p in self.partitions]
        if not parts:
            problems.append("no partition")
        problems += [
            f"partition {p} defined twice" for p in sorted(set(parts)) if parts.count(p) > 1
        ]
        for part in self.partitions:
            missing = [n for n in part.nodes if n not in known]
            if missing:
                problems.append(
                    f"partition {part.name} names unknown nodes {', '.join(missing[:5])}"
                )
            if not part.nodes:
                problems.append(f"partition {part.name} has no node")
        raise_if(problems, PlatformError, "batch cluster")

    @property
    def total_cpus(self) -> int:
        return sum(n.cpus for n in self.nodes)

    def node_index(self) -> dict[str, int]:
        return {n.name: i for i, n in enumerate(self.nodes)}

    def partition_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.partitions)

    def node_index_of(self, names: Sequence[str]) -> list[int]:
        index = self.node_index()
        return [index[n] for n in names]


@dataclass(frozen=True)
class Workload:
    """Jobs as columns. Row ``i`` of every array is job ``i``; rows are in submission order.

    ``runtime_s`` is the recorded elapsed time (what the job would run without a limit);
    ``limit_s`` the requested time limit (``UNLIMITED`` for none), at which the simulator kills
    it; ``estimate_s`` what the scheduler believes (the limit, unless a what-if predicts it).
    ``earliest_s`` is the first time the job may start other than by its dependencies (Slurm's
    Eligible for jobs without a dependency, their submission otherwise). Requests are per node:
    ``nnodes`` nodes, each with ``cpus_per_node`` CPUs, ``mem_per_node`` bytes and
    ``gpus_per_node`` GPUs. Dependencies are a compressed list: the parents of job ``i`` are
    ``dep_parent[dep_ptr[i]:dep_ptr[i + 1]]`` (row numbers), satisfied when the parent ends.
    ``recorded_start_s`` is the start the trace recorded (``-1`` if none), for validation.
    """

    job_ids: tuple[str, ...]
    submit_s: np.ndarray
    earliest_s: np.ndarray
    runtime_s: np.ndarray
    limit_s: np.ndarray
    estimate_s: np.ndarray
    nnodes: np.ndarray
    cpus_per_node: np.ndarray
    mem_per_node: np.ndarray
    gpus_per_node: np.ndarray
    partition: np.ndarray
    user: np.ndarray
    qos: np.ndarray
    recorded_start_s: np.ndarray
    partitions: tuple[str, ...]
    users: tuple[str, ...]
    qos_names: tuple[str, ...] = ("normal",)
    dep_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    dep_parent: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __post_init__(self) -> None:
        n = len(self.job_ids)
        problems = [
            f"column {f.name} has {len(getattr(self, f.name))} rows, expected {n}"
            for f in fields(self)
            if f.name in _COLUMNS and len(getattr(self, f.name)) != n
        ]
        if len(self.dep_ptr) not in (1, n + 1) or (len(self.dep_ptr) == 1 and len(self.dep_parent)):
            problems.append("dependency pointers do not match the jobs")
        raise_if(problems, WorkloadError, "workload")

    def __len__(self) -> int:
        return len(self.job_ids)

    @property
    def cpus(self) -> np.ndarray:
        """Total CPUs per job."""
        return self.nnodes * self.cpus_per_node

    def parents(self, i: int) -> np.ndarray:
        if len(self.dep_ptr) == 1:
            return self.dep_parent[:0]
        return self.dep_parent[self.dep_ptr[i] : self.dep_ptr[i + 1]]

    def replace_columns(self, **columns: object) -> Workload:
        """The same workload with some columns replaced (what-ifs change limits, estimates)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(columns)
        return Workload(**values)  # type: ignore[arg-type]

    def take(self, rows: np.ndarray) -> Workload:
        """The jobs at ``rows`` (sorted row numbers); dependencies on dropped jobs are dropped."""
        rows = np.asarray(rows, dtype=np.int64)
        values: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in _COLUMNS:
            values[name] = np.asarray(getattr(self, name))[rows]
        values["job_ids"] = tuple(self.job_ids[i] for i in rows)
        values["dep_ptr"], values["dep_parent"] = _remap_dependencies(self, rows)
        return Workload(**values)  # type: ignore[arg-type]


_COLUMNS = (
    "submit_s",
    "earliest_s",
    "runtime_s",
    "limit_s",
    "estimate_s",
    "nnodes",
    "cpus_per_node",
    "mem_per_node",
    "gpus_per_node",
    "partition",
    "user",
    "qos",
    "recorded_start_s",
)


def _remap_dependencies(w: Workload, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(w.dep_ptr) == 1:
        return np.zeros(1, np.int64), np.zeros(0, np.int64)
    new_row = np.full(len(w), -1, np.int64)
    new_row[rows] = np.arange(len(rows))
    ptr, parents = [0], []
    for i in rows:
        kept = [int(new_row[p]) for p in w.parents(int(i)) if new_row[p] >= 0]
        parents += kept
        ptr.append(len(parents))
    return np.asarray(ptr, np.int64), np.asarray(parents, np.int64)


def dependency_arrays(parents: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-job parent lists -> (``dep_ptr``, ``dep_parent``)."""
    ptr = np.zeros(len(parents) + 1, np.int64)
    ptr[1:] = np.cumsum([len(p) for p in parents])
    flat = np.fromiter((p for ps in parents for p in ps), np.int64, count=int(ptr[-1]))
    return ptr, flat


def make_workload(jobs: Sequence[dict[str, object]], partitions: Sequence[str]) -> Workload:
    """A small workload from dicts (tests, examples): keys are the column names without units
    suffix where obvious: ``id, submit, runtime, limit, nodes, cpus`` (per node), and optional
    ``mem, gpus, partition, user, qos, earliest, estimate, after`` (list of job ids it waits for),
    ``recorded_start``."""
    users = tuple(sorted({str(j.get("user", "u")) for j in jobs}))
    qos_names = tuple(sorted({str(j.get("qos", "normal")) for j in jobs}))
    ids = [str(j["id"]) for j in jobs]
    row_of = {jid: i for i, jid in enumerate(ids)}
    problems = [
        f"job {j['id']} waits for unknown job {a}"
        for j in jobs
        for a in _after(j)
        if a not in row_of
    ]
    problems += [
        f"job {j['id']} is in unknown partition {j.get('partition')}"
        for j in jobs
        if j.get("partition", partitions[0]) not in partitions
    ]
    raise_if(problems, WorkloadError, "workload")

    def col(key: str, default: object) -> np.ndarray:
        return np.asarray([j.get(key, default) for j in jobs], dtype=np.int64)

    submit = col("submit", 0)
    limit = col("limit", UNLIMITED)
    earliest = np.asarray([j.get("earliest", j.get("submit", 0)) for j in jobs], np.int64)
    estimate = np.asarray([j.get("estimate", j.get("limit", UNLIMITED)) for j in jobs], np.int64)
    ptr, flat = dependency_arrays([[row_of[a] for a in _after(j)] for j in jobs])
    return Workload(
        job_ids=tuple(ids),
        submit_s=submit,
        earliest_s=earliest,
        runtime_s=col("runtime", 0),
        limit_s=limit,
        estimate_s=estimate,
        nnodes=col("nodes", 1),
        cpus_per_node=col("cpus", 1),
        mem_per_node=col("mem", 0),
        gpus_per_node=col("gpus", 0),
        partition=np.asarray(
            [partitions.index(str(j.get("partition", partitions[0]))) for j in jobs], np.int64
        ),
        user=np.asarray([users.index(str(j.get("user", "u"))) for j in jobs], np.int64),
        qos=np.asarray([qos_names.index(str(j.get("qos", "normal"))) for j in jobs], np.int64),
        recorded_start_s=col("recorded_start", -1),
        partitions=tuple(partitions),
        users=users,
        qos_names=qos_names,
        dep_ptr=ptr,
        dep_parent=flat,
    )


def _after(job: dict[str, object]) -> list[str]:
    value = job.get("after", ())
    return [str(a) for a in value] if isinstance(value, (list, tuple)) else [str(value)]
