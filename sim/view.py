"""The read-only view dynamic schedulers get of a running simulation: :class:`EngineView`.

It implements :class:`sim.schedule.ClusterView` over :class:`sim.state.ClusterState`.
Schedulers call the view once per candidate node per decision (or once per decision for all
nodes, :meth:`EngineView.estimate_finish_all`), so its estimates are cheap: a node's projected
timeline (running tasks, then its FIFO queue list-scheduled on its cores) is computed once per
node change and instant, then reused by every estimate.

The projection ignores memory and GPU limits and assumes in-flight transfers finish at their
uncontended estimate: it is an estimate, the simulation itself is exact.
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass

from sim.compiled import duration
from sim.model import Platform, Workflow
from sim.network import FROM_SHARED_FS, uncontended_duration
from sim.schedule import SHARED_FS
from sim.state import ClusterState


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
        self._running_ends: dict[int, tuple[int, list[float]]] = {}
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
        return duration(s.wf, s.pf, i, n)

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
        return start + duration(s.wf, s.pf, i, n)

    def estimate_finish_all(self, task: str) -> list[float]:
        """:meth:`estimate_finish` on every node, in platform order (one call per decision)."""
        s = self._state
        i = self._task(task)
        ready = s.input_ready_estimates(i)
        cores, work, speed = s.wf.cores[i], s.wf.work[i], s.pf.speed
        uses_gpu = s.wf.gpus[i] or s.wf.prefers_gpu[i]
        finishes = []
        for n, projection in enumerate(self._projections()):
            core_free = projection.core_free
            start = ready[n]
            cores_free_at = core_free[min(cores, len(core_free)) - 1]
            if cores_free_at > start:
                start = cores_free_at
            if projection.last_start > start:
                start = projection.last_start
            if uses_gpu:
                finishes.append(start + duration(s.wf, s.pf, i, n))
            else:
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
        version = s.node_version[node]
        ends = self._running_ends.get(node)
        if ends is None or ends[0] != version:
            ends = self._running_ends[node] = (version, _running_ends(s, node))
        projection = _project(s, node, ends[1])
        self._cache[node] = (version, s.now, projection)
        return projection


def _running_ends(s: ClusterState, node: int) -> list[float]:
    """End time of each core the node's running tasks and other jobs' holds take, sorted
    (changes only with the node, not with time, so the projections of later instants reuse it)."""
    wf = s.wf
    ends: list[float] = []
    for task, end in s.running[node].items():
        ends.extend([end] * wf.cores[task])
    for end, cores in s.held[node]:
        ends.extend([end] * cores)
    ends.sort()
    return ends


def _project(s: ClusterState, node: int, running_ends: list[float]) -> NodeProjection:
    now = s.now
    wf = s.wf
    core_free = [now] * s.free_cores[node]
    core_free += running_ends
    if running_ends and running_ends[0] < now:  # never at an instant's decisions; stay exact
        core_free.sort()
    last_start = now
    queue = s.queues[node]
    speed = s.pf.speed[node]
    for task in queue[s.heads[node] :]:
        c = wf.cores[task]
        start = max(last_start, core_free[c - 1], s.input_ready_estimate(task, node))
        if wf.gpus[task] or wf.prefers_gpu[task]:
            finish = start + duration(wf, s.pf, task, node)
        else:
            finish = start + wf.work[task] / (speed * c)
        del core_free[:c]
        for _ in range(c):
            insort(core_free, finish)
        last_start = start
    return NodeProjection(core_free, last_start)
