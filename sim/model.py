"""The workflow and platform model every layer of wass-chat shares.

Objects are frozen: one source of truth, derived views (parents, children, edge data) computed
once on first use. The model mirrors WfFormat (tasks, files, machines) so reading and writing
instances loses nothing the simulator needs.

Units: bytes, seconds, flop and flop/s, watts.

Work is stored once, as ``Task.work`` in flop. A WfFormat task that ran ``runtimeInSeconds``
on ``coreCount`` cores of the reference machine has ``work = runtime * cores * REFERENCE_SPEED``,
so on a node whose cores run at ``speed`` flop/s its duration is ``work / (speed * cores)``.

GPUs: a node may carry ``gpus`` devices of one :class:`GpuType`, whose ``speed`` (flop/s per
device, in the same work units) replaces the cores' for the tasks that use them. A task *needs*
``gpus`` devices (it can run only where they are) or *prefers* one (``prefers_gpu``: on a node
with GPUs it takes one, elsewhere it runs on its cores). :func:`gpus_used` and
:func:`compute_time` are the one definition of both; a node with GPUs but no type runs GPU
tasks at its cores' speed (the model before GPU types).

Arrivals: ``Task.release`` is the earliest time a task may start, when its workflow arrived. A
stream of workflows (:mod:`sim.arrivals`) is one workflow whose tasks carry their workflow's
arrival; a single workflow has every release at 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from sim.errors import PlatformError, WorkflowError, raise_if

REFERENCE_SPEED = 1e9
"""Per-core speed (flop/s) of the reference machine that WfFormat runtimes are measured on."""


@dataclass(frozen=True, slots=True)
class File:
    """A data file: produced by at most one task, read by any number."""

    id: str
    size: int


@dataclass(frozen=True, slots=True)
class Task:
    """One step of a workflow: runs on one node, reserving ``cores`` cores and ``memory`` bytes.

    ``parents`` holds explicit (control) dependencies; data dependencies come from files and are
    derived by :class:`Workflow`.
    """

    id: str
    work: float
    name: str = ""
    category: str = ""
    cores: int = 1
    memory: int = 0
    gpus: int = 0
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    parents: tuple[str, ...] = ()
    command: tuple[str, ...] | None = None
    """The program and its arguments, word for word as the workflow file gives them (a job
    runs them as this argument vector, quoted, never expanded by a shell); None: no command."""
    prefers_gpu: bool = False
    """Runs on one GPU where the node has them (faster there), on its cores elsewhere."""
    release: float = 0.0
    """Earliest start (s): when the task's workflow arrived (0 for a workflow on its own)."""

    @property
    def runtime(self) -> float:
        """Runtime in seconds on the reference machine with ``cores`` cores."""
        return self.work / (REFERENCE_SPEED * self.cores)


@dataclass(frozen=True)
class Workflow:
    """A DAG of tasks linked by the files they exchange plus explicit dependencies.

    Construction validates the whole graph and raises :class:`WorkflowError` listing every
    problem found (duplicate ids, dangling references, two producers of a file, negative sizes
    or work, cycles).
    """

    name: str
    tasks: tuple[Task, ...]
    files: tuple[File, ...]
    description: str = ""
    meta: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        raise_if(_workflow_problems(self), WorkflowError, self.name or "workflow")

    # --- lookups -------------------------------------------------------------------------
    @cached_property
    def task_by_id(self) -> dict[str, Task]:
        return {t.id: t for t in self.tasks}

    @cached_property
    def file_by_id(self) -> dict[str, File]:
        return {f.id: f for f in self.files}

    @cached_property
    def producer(self) -> dict[str, str]:
        """File id -> id of the task that writes it (absent for workflow inputs)."""
        return {f: t.id for t in self.tasks for f in t.outputs}

    @cached_property
    def input_files(self) -> tuple[str, ...]:
        """Files read by some task and written by none: they start on the shared filesystem."""
        seen: dict[str, None] = {}
        for t in self.tasks:
            for f in t.inputs:
                if f not in self.producer:
                    seen[f] = None
        return tuple(seen)

    # --- graph ---------------------------------------------------------------------------
    @cached_property
    def parents(self) -> dict[str, tuple[str, ...]]:
        """Task id -> parent ids: producers of its inputs, then explicit parents (no repeats)."""
        result: dict[str, tuple[str, ...]] = {}
        for t in self.tasks:
            ps: dict[str, None] = {}
            for f in t.inputs:
                p = self.producer.get(f)
                if p is not None and p != t.id:
                    ps[p] = None
            for p in t.parents:
                ps[p] = None
            result[t.id] = tuple(ps)
        return result

    @cached_property
    def children(self) -> dict[str, tuple[str, ...]]:
        result: dict[str, list[str]] = {t.id: [] for t in self.tasks}
        for t in self.tasks:
            for p in self.parents[t.id]:
                result[p].append(t.id)
        return {k: tuple(v) for k, v in result.items()}

    @cached_property
    def edge_files(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """(parent, child) -> the parent's output files that the child reads (may be empty)."""
        result: dict[tuple[str, str], tuple[str, ...]] = {}
        for t in self.tasks:
            for p in self.parents[t.id]:
                outs = set(self.task_by_id[p].outputs)
                result[(p, t.id)] = tuple(f for f in t.inputs if f in outs)
        return result

    def edge_bytes(self, parent: str, child: str) -> int:
        """Bytes that flow from ``parent`` to ``child``."""
        return sum(self.file_by_id[f].size for f in self.edge_files[(parent, child)])

    @cached_property
    def topological_order(self) -> tuple[str, ...]:
        """Task ids, parents before children; ties kept in declaration order (deterministic)."""
        order = _topological_order([t.id for t in self.tasks], self.parents, self.children)
        assert order is not None  # construction rejected cycles
        return order

    @cached_property
    def entry_tasks(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tasks if not self.parents[t.id])

    @cached_property
    def exit_tasks(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tasks if not self.children[t.id])

    @property
    def total_work(self) -> float:
        return sum(t.work for t in self.tasks)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def __len__(self) -> int:
        return len(self.tasks)


@dataclass(frozen=True, slots=True)
class GpuType:
    """A GPU model: ``speed`` flop/s per device, in the work units of tasks (``Task.work``)."""

    name: str
    speed: float


@dataclass(frozen=True, slots=True)
class Node:
    """A compute node: ``cores`` cores of ``speed`` flop/s each, a NIC of ``bandwidth`` B/s,
    and ``gpus`` devices of ``gpu_type`` (None: untyped, GPU tasks run at the cores' speed)."""

    name: str
    cores: int
    speed: float = REFERENCE_SPEED
    memory: int = 64 * 2**30
    gpus: int = 0
    bandwidth: float = 1.25e9
    power_idle: float = 100.0
    power_busy: float = 250.0
    features: tuple[str, ...] = ()
    gpu_type: GpuType | None = None


@dataclass(frozen=True)
class Platform:
    """A cluster: nodes joined by a network with one ``latency`` and a shared filesystem.

    The shared filesystem serves workflow input files; its read bandwidth is shared fairly
    among concurrent readers.
    """

    name: str
    nodes: tuple[Node, ...]
    latency: float = 1e-5
    shared_fs_bandwidth: float = 2.5e9

    def __post_init__(self) -> None:
        raise_if(_platform_problems(self), PlatformError, self.name or "platform")

    @cached_property
    def node_by_name(self) -> dict[str, Node]:
        return {n.name: n for n in self.nodes}

    @property
    def node_names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes)

    @property
    def total_cores(self) -> int:
        return sum(n.cores for n in self.nodes)

    @property
    def total_capacity(self) -> float:
        """Aggregate compute rate in flop/s."""
        return sum(n.cores * n.speed for n in self.nodes)

    @property
    def fastest_core_speed(self) -> float:
        return max(n.speed for n in self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)


# --- validation ---------------------------------------------------------------------------


def _duplicates(ids: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    dups: dict[str, None] = {}
    for i in ids:
        if i in seen:
            dups[i] = None
        seen.add(i)
    return list(dups)


def _workflow_problems(wf: Workflow) -> list[str]:
    problems: list[str] = []
    if not wf.tasks:
        problems.append("no tasks")
    problems += [f"duplicate task id {d!r}" for d in _duplicates(t.id for t in wf.tasks)]
    problems += [f"duplicate file id {d!r}" for d in _duplicates(f.id for f in wf.files)]
    file_ids = {f.id for f in wf.files}
    task_ids = {t.id for t in wf.tasks}
    problems += [f"file {f.id!r} has negative size {f.size}" for f in wf.files if f.size < 0]
    producers: dict[str, str] = {}
    for t in wf.tasks:
        if not t.work >= 0:  # also rejects NaN, which compares false with everything
            problems.append(f"task {t.id!r} has negative or undefined work {t.work}")
        elif t.work == float("inf"):
            problems.append(f"task {t.id!r} has infinite work")
        if t.cores < 1:
            problems.append(f"task {t.id!r} needs {t.cores} cores (at least 1)")
        if t.memory < 0 or t.gpus < 0:
            problems.append(f"task {t.id!r} has negative memory or GPUs")
        if not (math.isfinite(t.release) and t.release >= 0):
            problems.append(f"task {t.id!r} has release time {t.release} (need finite, >= 0)")
        for f in t.inputs:
            if f not in file_ids:
                problems.append(f"task {t.id!r} reads unknown file {f!r}")
        for f in t.outputs:
            if f not in file_ids:
                problems.append(f"task {t.id!r} writes unknown file {f!r}")
            elif f in producers and producers[f] != t.id:
                problems.append(f"file {f!r} is written by both {producers[f]!r} and {t.id!r}")
            else:
                producers[f] = t.id
        for p in t.parents:
            if p not in task_ids:
                problems.append(f"task {t.id!r} has unknown parent {p!r}")
            elif p == t.id:
                problems.append(f"task {t.id!r} depends on itself")
    if problems:
        return problems  # the graph below is not well defined yet
    cycle = find_cycle(wf)
    if cycle:
        problems.append("cycle " + " -> ".join(cycle))
    return problems


def find_cycle(wf: Workflow) -> list[str] | None:
    """One dependency cycle as a closed path of task ids, or None for a DAG."""
    colour: dict[str, int] = {}  # 0/absent white, 1 grey (on stack), 2 black
    children = wf.children
    for root in (t.id for t in wf.tasks):
        if colour.get(root):
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path: list[str] = [root]
        colour[root] = 1
        while stack:
            node, i = stack[-1]
            kids = children[node]
            if i < len(kids):
                stack[-1] = (node, i + 1)
                kid = kids[i]
                state = colour.get(kid, 0)
                if state == 1:
                    return [*path[path.index(kid) :], kid]
                if state == 0:
                    colour[kid] = 1
                    stack.append((kid, 0))
                    path.append(kid)
            else:
                colour[node] = 2
                stack.pop()
                path.pop()
    return None


def _topological_order(
    ids: list[str],
    parents: Mapping[str, tuple[str, ...]],
    children: Mapping[str, tuple[str, ...]],
) -> tuple[str, ...] | None:
    indegree = {i: len(parents[i]) for i in ids}
    position = {i: k for k, i in enumerate(ids)}
    import heapq

    heap = [(position[i], i) for i in ids if indegree[i] == 0]
    heapq.heapify(heap)
    order: list[str] = []
    while heap:
        _, i = heapq.heappop(heap)
        order.append(i)
        for c in children[i]:
            indegree[c] -= 1
            if indegree[c] == 0:
                heapq.heappush(heap, (position[c], c))
    return tuple(order) if len(order) == len(ids) else None


def _platform_problems(p: Platform) -> list[str]:
    problems: list[str] = []
    if not p.nodes:
        problems.append("no nodes")
    problems += [f"duplicate node name {d!r}" for d in _duplicates(n.name for n in p.nodes)]
    for n in p.nodes:
        if n.cores < 1:
            problems.append(f"node {n.name!r} has {n.cores} cores (at least 1)")
        if n.speed <= 0:
            problems.append(f"node {n.name!r} has non-positive speed {n.speed}")
        if n.bandwidth <= 0:
            problems.append(f"node {n.name!r} has non-positive bandwidth {n.bandwidth}")
        if n.memory < 0 or n.gpus < 0:
            problems.append(f"node {n.name!r} has negative memory or GPUs")
        if n.power_idle < 0 or n.power_busy < n.power_idle:
            problems.append(f"node {n.name!r} needs 0 <= power_idle <= power_busy")
        if n.gpu_type is not None:
            if n.gpus < 1:
                problems.append(f"node {n.name!r} has GPU type {n.gpu_type.name!r} but no GPUs")
            if not (math.isfinite(n.gpu_type.speed) and n.gpu_type.speed > 0):
                problems.append(
                    f"node {n.name!r}: GPU type {n.gpu_type.name!r} has speed "
                    f"{n.gpu_type.speed} (need a positive number)"
                )
    if p.latency < 0:
        problems.append(f"negative latency {p.latency}")
    if p.shared_fs_bandwidth <= 0:
        problems.append(f"non-positive shared filesystem bandwidth {p.shared_fs_bandwidth}")
    return problems


def fit_problems(workflow: Workflow, platform: Platform) -> list[str]:
    """Tasks that no node of ``platform`` can host (cores, memory or GPUs), one line each."""
    problems = []
    for t in workflow.tasks:
        if not any(node_fits(t, n) for n in platform.nodes):
            problems.append(
                f"task {t.id!r} needs {t.cores} cores, {t.memory} B memory, {t.gpus} GPUs: "
                f"no node of {platform.name!r} has that"
            )
    return problems


def node_fits(task: Task, node: Node) -> bool:
    """Whether ``node`` could ever host ``task`` (capacity, not current load)."""
    return task.cores <= node.cores and task.memory <= node.memory and task.gpus <= node.gpus


def hosts(task: Task, platform: Platform) -> tuple[Node, ...]:
    """The nodes of ``platform`` that can ever run ``task`` (cores, memory, GPUs)."""
    return tuple(n for n in platform.nodes if node_fits(task, n))


def gpus_used(task: Task, node: Node) -> int:
    """GPUs ``task`` reserves on ``node``: those it needs, or one it prefers where there are any."""
    if task.gpus:
        return task.gpus
    return 1 if task.prefers_gpu and node.gpus > 0 else 0


def compute_time(task: Task, node: Node) -> float:
    """Seconds ``task`` computes on ``node``: on its GPUs at the GPU type's speed when it uses
    them and the node's GPUs have a type, otherwise ``work / (speed * cores)`` on its cores."""
    used = gpus_used(task, node)
    if used and node.gpu_type is not None:
        return task.work / (node.gpu_type.speed * used)
    return task.work / (node.speed * task.cores)


def check_fits(workflow: Workflow, platform: Platform) -> None:
    """Raise :class:`WorkflowError` naming every task that fits no node of the platform."""
    raise_if(fit_problems(workflow, platform), WorkflowError, workflow.name or "workflow")
