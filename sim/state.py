"""The simulator's mutable cluster state: what the engine updates event by event.

:class:`ClusterState` holds integer-indexed lists (no per-event allocation) and the input-arrival
estimates schedulers are told to expect; :class:`sim.view.EngineView` is the read-only view
dynamic schedulers get of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sim.compiled import CompiledPlatform, CompiledWorkflow
from sim.network import FROM_SHARED_FS, uncontended_duration
from sim.occupancy import Hold


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
    held: list[list[tuple[float, int]]] = field(default_factory=list)
    """Per node, (end, cores) of other jobs' holds not yet freed (:mod:`sim.occupancy`)."""
    held_memory: list[list[tuple[float, int]]] = field(default_factory=list)
    """Per node, (end, bytes) of the memory of other jobs' holds not yet freed."""
    upcoming: list[list[tuple[float, float, int, int]]] = field(default_factory=list)
    """Per node, (start, end, cores, bytes) of holds that begin later (queued jobs)."""
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
            parents_left=[len(p) + (r > 0) for p, r in zip(wf.parents, wf.release, strict=True)],
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
            held=[[] for _ in range(nodes)],
            held_memory=[[] for _ in range(nodes)],
            upcoming=[[] for _ in range(nodes)],
            node_version=[0] * nodes,
            located=[[] for _ in wf.file_ids],
        )

    def add_present(self, file: int, node: int) -> None:
        """Record that ``file`` is now on ``node``."""
        key = file * self.pf.n_nodes + node
        if key not in self.present:
            self.present.add(key)
            self.located[file].append(node)

    def hold(self, holds: Iterable[Hold]) -> list[tuple[float, int]]:
        """Take the cores and memory of other jobs' ``holds`` that begin now, keep the later
        ones for their start; (time, node index) of each start and end, to settle then."""
        events = []
        for h in holds:
            node = self.pf.node_index[h.node]
            if h.start <= self.now:
                self._take(node, h.until, h.cores, h.memory)
            else:
                self.upcoming[node].append((h.start, h.until, h.cores, h.memory))
                events.append((h.start, node))
            events.append((h.until, node))
        return events

    def _take(self, node: int, until: float, cores: int, memory: int) -> None:
        self.free_cores[node] -= cores
        self.held[node].append((until, cores))
        if memory:
            self.free_memory[node] -= memory
            self.held_memory[node].append((until, memory))

    def release(self, node: int) -> int:
        """Free what ``node``'s ended holds took, and take what its beginning ones ask (a queued
        job's cores are taken at its start even if the workflow's tasks still use them: the
        next task then waits); returns ``node``."""
        for held, free in ((self.held, self.free_cores), (self.held_memory, self.free_memory)):
            kept = []
            for until, amount in held[node]:
                if until <= self.now:
                    free[node] += amount
                else:
                    kept.append((until, amount))
            held[node] = kept
        later = []
        for start, until, cores, memory in self.upcoming[node]:
            if start > self.now:
                later.append((start, until, cores, memory))
            elif until > self.now:
                self._take(node, until, cores, memory)
        self.upcoming[node] = later
        self.node_version[node] += 1
        return node

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
            held=[h[:] for h in self.held],
            held_memory=[h[:] for h in self.held_memory],
            upcoming=[h[:] for h in self.upcoming],
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
