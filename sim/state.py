"""The simulator's mutable cluster state, and the read-only view dynamic schedulers get of it.

:class:`ClusterState` is what the engine updates event by event (integer-indexed lists, no
per-event allocation). :class:`EngineView` implements :class:`sim.schedule.ClusterView` over it.
Schedulers call the view once per candidate node per decision, so its estimates are cheap: a
node's projected timeline (running tasks, then its FIFO queue list-scheduled on its cores) is
computed once per node change and instant, then reused by every ``estimate_finish`` call.

The projection ignores memory and GPU limits and assumes in-flight transfers finish at their
uncontended estimate: it is an estimate, the simulation itself is exact.
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass, field

from sim.compiled import CompiledPlatform, CompiledWorkflow
from sim.model import Platform, Workflow
from sim.network import FROM_SHARED_FS, uncontended_duration
from sim.schedule import SHARED_FS


@dataclass(slots=True)
class ClusterState:
    """Everything the engine tracks during one run, indexed by task, node, file and transfer."""

    wf: CompiledWorkflow
    pf: CompiledPlatform
    now: float = 0.0
    node_of: list[int] = field(default_factory=list)
    parents_left: list[int] = field(default_factory=list)
    missing_inputs: list[int] = field(default_factory=list)
    ready: list[float] = field(default_factory=list)
    start: list[float] = field(default_factory=list)
    end: list[float] = field(default_factory=list)
    free_cores: list[int] = field(default_factory=list)
    free_memory: list[int] = field(default_factory=list)
    free_gpus: list[int] = field(default_factory=list)
    queues: list[list[int]] = field(default_factory=list)
    """Per node, the tasks in start order (static order, or dynamic FIFO arrival order)."""
    heads: list[int] = field(default_factory=list)
    """Per node, the position in ``queues`` of the next task to start."""
    running: list[dict[int, float]] = field(default_factory=list)
    """Per node, running task -> its end time."""
    node_version: list[int] = field(default_factory=list)
    """Per node, bumped on every change a scheduler's estimate depends on."""
    present: set[int] = field(default_factory=set)
    """Keys ``file * n_nodes + node`` of files present on a node."""
    located: list[list[int]] = field(default_factory=list)
    """Per file, the nodes it is present on (``present`` by file, in arrival order)."""
    waiters: dict[int, list[int]] = field(default_factory=dict)
    """Key ``file * n_nodes + node`` of a copy in flight -> tasks on that node waiting for it."""
    in_flight: dict[int, int] = field(default_factory=dict)
    """Key of a copy in flight -> its transfer id."""
    transfer_estimate: list[float] = field(default_factory=list)
    """Per transfer, its uncontended end time (what schedulers are told to expect)."""

    @classmethod
    def initial(cls, wf: CompiledWorkflow, pf: CompiledPlatform) -> ClusterState:
        n, nodes = wf.n_tasks, pf.n_nodes
        return cls(
            wf=wf,
            pf=pf,
            node_of=[-1] * n,
            parents_left=[len(p) for p in wf.parents],
            missing_inputs=[0] * n,
            ready=[0.0] * n,
            start=[-1.0] * n,
            end=[-1.0] * n,
            free_cores=list(pf.cores),
            free_memory=list(pf.memory),
            free_gpus=list(pf.gpus),
            queues=[[] for _ in range(nodes)],
            heads=[0] * nodes,
            running=[{} for _ in range(nodes)],
            node_version=[0] * nodes,
            located=[[] for _ in wf.file_ids],
        )

    def add_present(self, file: int, node: int) -> None:
        """Record that ``file`` is now on ``node``."""
        key = file * self.pf.n_nodes + node
        if key not in self.present:
            self.present.add(key)
            self.located[file].append(node)

    input_groups: dict[int, list[tuple[int, list[tuple[int, int]]]]] = field(default_factory=dict)
    """Per task whose producers are all placed: (source, [(size, file)] largest first)."""

    def copy(self) -> ClusterState:
        """An independent copy (what a forked run continues from); compiled data is shared.

        ``input_groups`` entries are shared: one is written only once every producer of its
        task is placed, and placements never change, so both copies would compute the same.
        """
        return ClusterState(
            wf=self.wf,
            pf=self.pf,
            now=self.now,
            node_of=self.node_of[:],
            parents_left=self.parents_left[:],
            missing_inputs=self.missing_inputs[:],
            ready=self.ready[:],
            start=self.start[:],
            end=self.end[:],
            free_cores=self.free_cores[:],
            free_memory=self.free_memory[:],
            free_gpus=self.free_gpus[:],
            queues=[q[:] for q in self.queues],
            heads=self.heads[:],
            running=[r.copy() for r in self.running],
            node_version=self.node_version[:],
            present=self.present.copy(),
            located=[nodes[:] for nodes in self.located],
            waiters={key: tasks[:] for key, tasks in self.waiters.items()},
            in_flight=self.in_flight.copy(),
            transfer_estimate=self.transfer_estimate[:],
            input_groups=self.input_groups.copy(),
        )

    def source_of(self, file: int) -> int:
        """Where a missing copy of ``file`` is fetched from: its producer's node, or the FS."""
        producer = self.wf.producer[file]
        return FROM_SHARED_FS if producer < 0 else self.node_of[producer]

    def _groups(self, task: int) -> list[tuple[int, list[tuple[int, int]]]] | None:
        """The task's inputs grouped by source node, or None while a producer is unplaced."""
        groups = self.input_groups.get(task)
        if groups is not None:
            return groups
        wf, node_of = self.wf, self.node_of
        by_source: dict[int, list[tuple[int, int]]] = {}
        for f in wf.inputs[task]:
            producer = wf.producer[f]
            if producer < 0:
                source = FROM_SHARED_FS
            else:
                source = node_of[producer]
                if source < 0:
                    return None
            by_source.setdefault(source, []).append((wf.file_size[f], f))
        groups = [(source, sorted(files, reverse=True)) for source, files in by_source.items()]
        self.input_groups[task] = groups
        return groups

    def input_ready_estimate(self, task: int, node: int) -> float:
        """When every input of ``task`` could be on ``node`` (copies in flight, else fetched now).

        Per source, only the largest input not yet on the node needs a fresh estimate: smaller
        ones from the same source arrive no later. Inputs whose producer is not placed yet are
        left out (nothing to estimate).
        """
        groups = self._groups(task)
        if groups is None:
            return self._partial_input_estimate(task, node)
        pf, now = self.pf, self.now
        n_nodes, present, in_flight = pf.n_nodes, self.present, self.in_flight
        ready = now
        for source, files in groups:
            if source == node:
                continue
            for size, f in files:
                key = f * n_nodes + node
                if key in present:
                    continue
                transfer = in_flight.get(key)
                if transfer is not None:
                    arrival = self.transfer_estimate[transfer]
                    if arrival > ready:
                        ready = arrival
                    continue
                arrival = now + (pf.latency + size / pf.link_bandwidth[source][node])
                if arrival > ready:
                    ready = arrival
                break
        return ready

    def input_ready_estimates(self, task: int) -> list[float]:
        """:meth:`input_ready_estimate` on every node, in one pass (the same values)."""
        n_nodes = self.pf.n_nodes
        groups = self._groups(task)
        if groups is None:
            return [self._partial_input_estimate(task, node) for node in range(n_nodes)]
        pf, now = self.pf, self.now
        present, in_flight, estimate = self.present, self.in_flight, self.transfer_estimate
        latency = pf.latency
        ready = [now] * n_nodes
        for source, files in groups:
            link = pf.link_bandwidth[source]
            for node in range(n_nodes):
                if source == node:
                    continue
                r = ready[node]
                for size, f in files:
                    key = f * n_nodes + node
                    if key in present:
                        continue
                    transfer = in_flight.get(key)
                    if transfer is not None:
                        arrival = estimate[transfer]
                        if arrival > r:
                            r = arrival
                        continue
                    arrival = now + (latency + size / link[node])
                    if arrival > r:
                        r = arrival
                    break
                ready[node] = r
        return ready

    def _partial_input_estimate(self, task: int, node: int) -> float:
        pf, wf, now = self.pf, self.wf, self.now
        ready = now
        for f in wf.inputs[task]:
            key = f * pf.n_nodes + node
            if key in self.present:
                continue
            transfer = self.in_flight.get(key)
            if transfer is not None:
                ready = max(ready, self.transfer_estimate[transfer])
                continue
            producer = wf.producer[f]
            source = FROM_SHARED_FS if producer < 0 else self.node_of[producer]
            if producer >= 0 and (source < 0 or source == node):
                continue
            ready = max(ready, now + uncontended_duration(pf, wf.file_size[f], source, node))
        return ready


@dataclass(frozen=True, slots=True)
class NodeProjection:
    """A node's estimated future: sorted per-core free times and the last queued start."""

    core_free: list[float]
    last_start: float


class EngineView:
    """Read-only :class:`sim.schedule.ClusterView` over a running simulation."""

    def __init__(
        self, state: ClusterState, workflow: Workflow, platform: Platform, run: object = None
    ) -> None:
        self._state = state
        self._workflow = workflow
        self._platform = platform
        self._cache: dict[int, tuple[int, float, NodeProjection]] = {}
        self._every: tuple[float, list[int], list[NodeProjection]] | None = None
        self.run = run
        """The engine's run this view looks into (what :func:`sim.fork.continue_from` copies)."""

    @property
    def now(self) -> float:
        return self._state.now

    @property
    def workflow(self) -> Workflow:
        return self._workflow

    @property
    def platform(self) -> Platform:
        return self._platform

    def _node(self, node: str) -> int:
        try:
            return self._state.pf.node_index[node]
        except KeyError:
            raise KeyError(f"unknown node {node!r}") from None

    def _task(self, task: str) -> int:
        try:
            return self._state.wf.task_index[task]
        except KeyError:
            raise KeyError(f"unknown task {task!r}") from None

    def free_cores(self, node: str) -> int:
        return self._state.free_cores[self._node(node)]

    def available_time(self, node: str) -> float:
        projection = self.projection(self._node(node))
        return max(self._state.now, projection.core_free[-1])

    def file_locations(self, file: str) -> frozenset[str]:
        s = self._state
        f = s.wf.file_index[file]
        n_nodes = s.pf.n_nodes
        where = [s.pf.names[n] for n in range(n_nodes) if f * n_nodes + n in s.present]
        if s.wf.producer[f] < 0:
            where.append(SHARED_FS)
        return frozenset(where)

    def task_node(self, task: str) -> str | None:
        n = self._state.node_of[self._task(task)]
        return None if n < 0 else self._state.pf.names[n]

    def estimate_runtime(self, task: str, node: str) -> float:
        s, i, n = self._state, self._task(task), self._node(node)
        return s.wf.work[i] / (s.pf.speed[n] * s.wf.cores[i])

    def estimate_transfer(self, size: int, source: str, destination: str) -> float:
        if source == destination:
            return 0.0
        pf = self._state.pf
        src = FROM_SHARED_FS if source == SHARED_FS else self._node(source)
        return uncontended_duration(pf, size, src, self._node(destination))

    def estimate_finish(self, task: str, node: str) -> float:
        s = self._state
        i = s.wf.task_index.get(task)
        n = s.pf.node_index.get(node)
        if i is None or n is None:
            self._task(task)
            self._node(node)
        assert i is not None and n is not None
        cached = self._cache.get(n)
        if cached is not None and cached[0] == s.node_version[n] and cached[1] == s.now:
            projection = cached[2]
        else:
            projection = self.projection(n)
        cores = s.wf.cores[i]
        core_free = projection.core_free
        start = s.input_ready_estimate(i, n)
        cores_free_at = core_free[min(cores, len(core_free)) - 1]
        if cores_free_at > start:
            start = cores_free_at
        if projection.last_start > start:
            start = projection.last_start
        return start + s.wf.work[i] / (s.pf.speed[n] * cores)

    def estimate_finish_all(self, task: str) -> list[float]:
        """:meth:`estimate_finish` on every node, in platform order (one call per decision)."""
        s = self._state
        i = self._task(task)
        ready = s.input_ready_estimates(i)
        cores, work, speed = s.wf.cores[i], s.wf.work[i], s.pf.speed
        finishes = []
        for n, projection in enumerate(self._projections()):
            core_free = projection.core_free
            start = ready[n]
            cores_free_at = core_free[min(cores, len(core_free)) - 1]
            if cores_free_at > start:
                start = cores_free_at
            if projection.last_start > start:
                start = projection.last_start
            finishes.append(start + work / (speed[n] * cores))
        return finishes

    def available_times(self) -> list[float]:
        """:meth:`available_time` of every node, in platform order."""
        now = self._state.now
        return [max(now, projection.core_free[-1]) for projection in self._projections()]

    def _projections(self) -> list[NodeProjection]:
        """Every node's projection; one list per instant and cluster state, reused by the
        batch estimates of one decision."""
        s = self._state
        every = self._every
        if every is not None and every[0] == s.now and every[1] == s.node_version:
            return every[2]
        projections = [self.projection(n) for n in range(s.pf.n_nodes)]
        self._every = (s.now, s.node_version[:], projections)
        return projections

    def free_cores_all(self) -> list[int]:
        """:meth:`free_cores` of every node, in platform order."""
        return self._state.free_cores[:]

    @property
    def located(self) -> list[list[int]]:
        """Per file index, the indices of the compute nodes holding it (read only)."""
        return self._state.located

    def projection(self, node: int) -> NodeProjection:
        """The node's list-scheduled future, cached until the node changes or time moves."""
        s = self._state
        cached = self._cache.get(node)
        if cached is not None and cached[0] == s.node_version[node] and cached[1] == s.now:
            return cached[2]
        projection = _project(s, node)
        self._cache[node] = (s.node_version[node], s.now, projection)
        return projection


def _project(s: ClusterState, node: int) -> NodeProjection:
    now = s.now
    wf = s.wf
    core_free = [now] * s.free_cores[node]
    for task, end in s.running[node].items():
        core_free.extend([end] * wf.cores[task])
    core_free.sort()
    last_start = now
    queue = s.queues[node]
    speed = s.pf.speed[node]
    for task in queue[s.heads[node] :]:
        c = wf.cores[task]
        start = max(last_start, core_free[c - 1], s.input_ready_estimate(task, node))
        finish = start + wf.work[task] / (speed * c)
        del core_free[:c]
        for _ in range(c):
            insort(core_free, finish)
        last_start = start
    return NodeProjection(core_free, last_start)
