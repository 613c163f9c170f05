"""A schedule under construction: what every static list scheduler builds.

:class:`Plan` places tasks one at a time on per-node core timelines, answering "when could this
task start / finish on that node?" with the exact costs of :mod:`policy.costs`. When done it
becomes a :class:`~sim.schedule.StaticSchedule` for the simulator, or a
:class:`~sim.schedule.SimResult` of the plan itself (what the scheduler expects to happen),
which the validator can check without running the simulator.

On a busy cluster (:mod:`sim.occupancy`) the timelines start with other jobs' holds (cores and
memory) reserved over ``[start, until)``: every list scheduler then plans around them with no
code of its own, and never starts a task on a node whose free memory is less than it asks.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from policy.costs import data_ready_time, shared_fs_read_time, transfer_time
from policy.timeline import NodeTimeline, Reservation
from sim.model import Node, Platform, Workflow, compute_time, gpus_used
from sim.occupancy import Occupancy
from sim.schedule import SHARED_FS, SimResult, StaticSchedule, TaskRecord, TransferRecord

HELD_PREFIX = "@held:"
"""Task field of the reservations standing for other jobs' holds (never a workflow task)."""


@dataclass(frozen=True, slots=True)
class Slot:
    """Where and when a task could run: the answer to an earliest-finish query."""

    task: str
    node: str
    start: float
    finish: float


@dataclass
class Plan:
    """Placements, start and finish times, and per-node timelines of a partial schedule."""

    workflow: Workflow
    platform: Platform
    insertion: bool = True
    occupancy: Occupancy | None = None
    """Cores and memory other jobs hold (None: an idle cluster)."""
    now: float = 0.0
    """The planning instant: no task placed from here on starts earlier (an online planner
    re-planning at an arrival cannot start anything in the past)."""
    placement: dict[str, str] = field(default_factory=dict)
    start: dict[str, float] = field(default_factory=dict)
    finish: dict[str, float] = field(default_factory=dict)
    timelines: dict[str, NodeTimeline] = field(init=False)

    def __post_init__(self) -> None:
        self.timelines = {
            n.name: NodeTimeline(cores=n.cores, memory=n.memory, gpus=n.gpus)
            for n in self.platform.nodes
        }
        if self.occupancy:
            self.occupancy.check(self.platform)
            for h in self.occupancy.active():
                self.timelines[h.node].hold(
                    h.until, h.cores, f"{HELD_PREFIX}{h.job or h.node}", h.memory, h.start
                )

    # --- queries ----------------------------------------------------------------------------
    def is_ready(self, task: str) -> bool:
        """Whether every parent of ``task`` is placed (so its data-ready time is known)."""
        return all(p in self.placement for p in self.workflow.parents[task])

    def ready_tasks(self) -> list[str]:
        """Unplaced tasks whose parents are all placed, in topological order."""
        return [
            t
            for t in self.workflow.topological_order
            if t not in self.placement and self.is_ready(t)
        ]

    def data_ready(self, task: str, node: Node) -> float:
        return data_ready_time(
            self.workflow, self.platform, task, node, self.placement, self.finish
        )

    def slot(self, task: str, node: Node) -> Slot:
        """Earliest start and finish of ``task`` on ``node`` given everything placed so far."""
        t = self.workflow.task_by_id[task]
        duration = compute_time(t, node)
        start = self.timelines[node.name].earliest_start(
            max(self.data_ready(task, node), self.now),
            duration,
            t.cores,
            t.memory,
            self.insertion,
            gpus_used(t, node),
        )
        return Slot(task, node.name, start, start + duration)

    def best_slot(self, task: str, nodes: tuple[Node, ...]) -> Slot:
        """The earliest-finishing slot over ``nodes``; ties go to the first node listed."""
        best: Slot | None = None
        for node in nodes:
            candidate = self.slot(task, node)
            if best is None or candidate.finish < best.finish:
                best = candidate
        assert best is not None, "callers pass at least one host"
        return best

    @property
    def makespan(self) -> float:
        return max(self.finish.values(), default=0.0)

    # --- updates ----------------------------------------------------------------------------
    def place(self, slot: Slot) -> None:
        """Commit ``slot``: reserve its cores and memory on its node."""
        t = self.workflow.task_by_id[slot.task]
        self.placement[slot.task] = slot.node
        self.start[slot.task] = slot.start
        self.finish[slot.task] = slot.finish
        gpus = gpus_used(t, self.platform.node_by_name[slot.node])
        self.timelines[slot.node].reserve(
            Reservation(slot.start, slot.finish, t.cores, t.memory, slot.task, gpus)
        )

    # --- results ----------------------------------------------------------------------------
    def to_schedule(self, scheduler: str) -> StaticSchedule:
        """Per-node start order by planned (start, finish): zero-length tasks go first."""
        topo = {t: i for i, t in enumerate(self.workflow.topological_order)}
        per_node: dict[str, list[str]] = {}
        for task, node in self.placement.items():
            per_node.setdefault(node, []).append(task)
        order = {
            node: tuple(sorted(tasks, key=lambda t: (self.start[t], self.finish[t], topo[t])))
            for node, tasks in per_node.items()
        }
        return StaticSchedule(dict(self.placement), order, scheduler, self.makespan)

    def to_result(self, scheduler: str) -> SimResult:
        """The plan as a simulation result (ideal network), with every transfer it assumes."""
        nodes = self.platform.node_by_name
        wf = self.workflow
        records = []
        transfers: dict[tuple[str, str], TransferRecord] = {}
        for task in wf.topological_order:
            node = nodes[self.placement[task]]
            release = wf.task_by_id[task].release
            ready = max((self.finish[p] for p in wf.parents[task]), default=release)
            records.append(TaskRecord(task, node.name, ready, self.start[task], self.finish[task]))
            for file_id in wf.task_by_id[task].inputs:
                size = wf.file_by_id[file_id].size
                producer = wf.producer.get(file_id)
                if producer is None:
                    begin = release
                    source = SHARED_FS
                    end = begin + shared_fs_read_time(size, self.platform, node)
                elif self.placement[producer] == node.name:
                    continue
                else:
                    begin = self.finish[producer]
                    source = self.placement[producer]
                    end = begin + transfer_time(size, self.platform, nodes[source], node)
                key = (file_id, node.name)
                if key not in transfers:
                    transfers[key] = TransferRecord(file_id, size, source, node.name, begin, end)
        busy: dict[str, float] = {}
        energy = 0.0
        makespan = self.makespan
        for task, node_name in self.placement.items():
            n = nodes[node_name]
            core_seconds = (self.finish[task] - self.start[task]) * wf.task_by_id[task].cores
            busy[node_name] = busy.get(node_name, 0.0) + core_seconds
        for n in self.platform.nodes:
            share = busy.get(n.name, 0.0) / n.cores
            energy += n.power_idle * makespan + (n.power_busy - n.power_idle) * share
        return SimResult(
            workflow=wf.name,
            platform=self.platform.name,
            scheduler=scheduler,
            network_model="ideal",
            makespan=makespan,
            tasks=tuple(records),
            transfers=tuple(transfers.values()),
            energy=energy,
            node_busy_core_seconds=busy,
            backend="plan",
        )


def ready_by_priority(workflow: Workflow, priority: Mapping[str, float]) -> Iterator[str]:
    """Tasks by decreasing ``priority`` among those whose parents were all yielded already.

    The ready queue of CPOP and PEFT; ties go to the earlier task in topological order. The
    caller places each task before asking for the next.
    """
    position = {t: i for i, t in enumerate(workflow.topological_order)}
    queue = [(-priority[t], position[t], t) for t in workflow.entry_tasks]
    heapq.heapify(queue)
    waiting = {t: len(workflow.parents[t]) for t in workflow.topological_order}
    while queue:
        _, _, task = heapq.heappop(queue)
        yield task
        for child in workflow.children[task]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(queue, (-priority[child], position[child], child))
