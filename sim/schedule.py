"""The contract between schedulers and the simulator: schedules in, results out.

Two ways to drive a simulation:

* **Static**: a :class:`StaticSchedule` fixes each task's node and, per node, the order in which
  tasks start. Classic list schedulers (HEFT, CPOP, PEFT...) produce these; the simulator replays
  them. A node never starts a task before every task earlier in its order has started.
* **Dynamic**: a :class:`DynamicScheduler` is asked for a node each time a task becomes ready
  and sees a read-only :class:`ClusterView`. The learned policy and online heuristics
  (Traditional Slurm, the WASS data-locality heuristic) use this.

A :class:`SimResult` records what happened; it converts back to the static schedule it realised,
which is how the SimGrid backend replays the exact same decisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from typing import Literal, Protocol, runtime_checkable

from sim.compiled import CompiledWorkflow
from sim.errors import ScheduleError, raise_if
from sim.model import Platform, Workflow, node_fits

SHARED_FS = "@shared-fs"
"""Location name of the shared filesystem in file locations and transfer records."""

NetworkModel = Literal["fair", "ideal"]


@dataclass(frozen=True)
class StaticSchedule:
    """Task -> node, and per node the order in which its tasks start."""

    assignment: Mapping[str, str]
    order: Mapping[str, tuple[str, ...]]
    scheduler: str = ""
    planned_makespan: float | None = None
    """The scheduler's own estimate of the makespan, when it computes one."""

    @classmethod
    def from_priorities(
        cls,
        assignment: Mapping[str, str],
        start_times: Mapping[str, float],
        scheduler: str = "",
        planned_makespan: float | None = None,
        tie_break: Mapping[str, int] | None = None,
    ) -> StaticSchedule:
        """Build the per-node orders by sorting each node's tasks by planned start time."""
        rank = tie_break or {}
        per_node: dict[str, list[str]] = {}
        for task, node in assignment.items():
            per_node.setdefault(node, []).append(task)
        order = {
            node: tuple(sorted(tasks, key=lambda t: (start_times[t], rank.get(t, 0), t)))
            for node, tasks in per_node.items()
        }
        return cls(dict(assignment), order, scheduler, planned_makespan)

    def problems(self, workflow: Workflow, platform: Platform) -> list[str]:
        """Everything that makes this schedule unusable for ``workflow`` on ``platform``."""
        problems: list[str] = []
        nodes = platform.node_by_name
        tasks = workflow.task_by_id
        for task, node in self.assignment.items():
            if task not in tasks:
                problems.append(f"schedule names unknown task {task!r}")
            if node not in nodes:
                problems.append(f"task {task!r} is placed on unknown node {node!r}")
        problems += [f"task {t!r} is not placed" for t in tasks if t not in self.assignment]
        for node, ordered in self.order.items():
            if node not in nodes:
                problems.append(f"order given for unknown node {node!r}")
            for t in ordered:
                if self.assignment.get(t) != node:
                    problems.append(f"task {t!r} is ordered on {node!r} but placed elsewhere")
        ordered_count = sum(len(v) for v in self.order.values())
        if not problems and ordered_count != len(self.assignment):
            problems.append("per-node orders do not list every placed task exactly once")
        for task, node in self.assignment.items():
            if task in tasks and node in nodes and not node_fits(tasks[task], nodes[node]):
                problems.append(f"task {task!r} does not fit on node {node!r}")
        return problems

    def check(self, workflow: Workflow, platform: Platform) -> None:
        """Raise :class:`ScheduleError` listing every problem, before any simulation."""
        raise_if(self.problems(workflow, platform), ScheduleError, self.scheduler or "schedule")


@runtime_checkable
class ClusterView(Protocol):
    """What a dynamic scheduler may see at a decision: read-only, estimates included."""

    @property
    def now(self) -> float: ...

    @property
    def workflow(self) -> Workflow: ...

    @property
    def platform(self) -> Platform: ...

    def free_cores(self, node: str) -> int:
        """Cores not reserved right now."""
        ...

    def available_time(self, node: str) -> float:
        """Estimated time at which every task already placed on ``node`` will have finished."""
        ...

    def file_locations(self, file: str) -> frozenset[str]:
        """Where ``file`` currently is: node names and/or :data:`SHARED_FS`; empty if unwritten."""
        ...

    def task_node(self, task: str) -> str | None:
        """The node a task was placed on, or None."""
        ...

    def estimate_runtime(self, task: str, node: str) -> float:
        """Compute time of ``task`` on ``node`` (exact: the model is deterministic)."""
        ...

    def estimate_transfer(self, size: int, source: str, destination: str) -> float:
        """Uncontended time to move ``size`` bytes (latency + size / bottleneck bandwidth)."""
        ...

    def estimate_finish(self, task: str, node: str) -> float:
        """Estimated finish time of ``task`` if placed on ``node`` now (data + queue + compute)."""
        ...

    def estimate_finish_all(self, task: str) -> list[float]:
        """:meth:`estimate_finish` on every node, in platform order, in one call (the same
        values; what a scheduler comparing all nodes should call)."""
        ...


class DynamicScheduler(Protocol):
    """A scheduler consulted online, once per task when it becomes ready."""

    name: str

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        """Called once before a simulation starts."""
        ...

    def priority(self, task: str) -> float:
        """Among tasks ready at the same instant, higher priority is placed first."""
        ...

    def choose_node(self, task: str, view: ClusterView) -> str:
        """The node ``task`` should run on; it must be able to host the task."""
        ...


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """When and where one task ran. ``ready``: all parents done; ``start``: cores reserved."""

    task: str
    node: str
    ready: float
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class TransferRecord:
    """One file moved from ``source`` (a node or :data:`SHARED_FS`) to ``destination``."""

    file: str
    size: int
    source: str
    destination: str
    start: float
    end: float


@dataclass(frozen=True)
class SimResult:
    """Everything one simulated execution produced; ``tasks`` are listed in start order."""

    workflow: str
    platform: str
    scheduler: str
    network_model: NetworkModel
    makespan: float
    tasks: tuple[TaskRecord, ...]
    transfers: tuple[TransferRecord, ...]
    energy: float
    node_busy_core_seconds: Mapping[str, float] = field(default_factory=dict)
    backend: str = "native"

    @classmethod
    def from_records(
        cls,
        workflow: Workflow,
        platform: Platform,
        scheduler: str,
        network_model: NetworkModel,
        tasks: tuple[TaskRecord, ...],
        transfers: tuple[TransferRecord, ...],
        backend: str,
    ) -> SimResult:
        """A result whose makespan, busy core-seconds and energy derive from the records.

        Shared by every backend so that the same records always give the same figures.
        """
        task_cores = {t.id: t.cores for t in workflow.tasks}
        busy = {n.name: 0.0 for n in platform.nodes}
        makespan = 0.0
        for r in tasks:
            busy[r.node] += task_cores[r.task] * (r.end - r.start)
            makespan = max(makespan, r.end)
        for x in transfers:
            makespan = max(makespan, x.end)
        energy = sum(
            n.power_idle * makespan + (n.power_busy - n.power_idle) * busy[n.name] / n.cores
            for n in platform.nodes
        )
        return cls(
            workflow=workflow.name,
            platform=platform.name,
            scheduler=scheduler,
            network_model=network_model,
            makespan=makespan,
            tasks=tasks,
            transfers=transfers,
            energy=energy,
            node_busy_core_seconds=busy,
            backend=backend,
        )

    @cached_property
    def placements(self) -> dict[str, str]:
        return {r.task: r.node for r in self.tasks}

    @cached_property
    def record_by_task(self) -> dict[str, TaskRecord]:
        return {r.task: r for r in self.tasks}

    @property
    def cross_node_bytes(self) -> int:
        """Bytes moved between compute nodes (shared-filesystem reads excluded)."""
        return sum(t.size for t in self.transfers if t.source != SHARED_FS)

    @property
    def mean_wait(self) -> float:
        """Mean time from ready to start."""
        return sum(r.start - r.ready for r in self.tasks) / max(len(self.tasks), 1)

    def to_schedule(self) -> StaticSchedule:
        """The static schedule this run realised (per-node order by start time).

        Tasks that started at the same instant keep the order of ``tasks`` (the simulator lists
        records in the order tasks started), so a zero-length parent stays before its child.
        """
        starts = {r.task: r.start for r in self.tasks}
        record_order = {r.task: i for i, r in enumerate(self.tasks)}
        return StaticSchedule.from_priorities(
            self.placements, starts, self.scheduler, self.makespan, tie_break=record_order
        )


def check_order_is_feasible(schedule: StaticSchedule, wf: CompiledWorkflow) -> None:
    """Reject per-node orders that put a task before one of its ancestors (a certain deadlock)."""
    n = wf.n_tasks
    successors: list[list[int]] = [list(c) for c in wf.children]
    indegree = [len(p) for p in wf.parents]
    for ordered in schedule.order.values():
        for before, after in pairwise(ordered):
            b, a = wf.task_index[before], wf.task_index[after]
            successors[b].append(a)
            indegree[a] += 1
    stack = [t for t in range(n) if indegree[t] == 0]
    seen = 0
    while stack:
        t = stack.pop()
        seen += 1
        for c in successors[t]:
            indegree[c] -= 1
            if indegree[c] == 0:
                stack.append(c)
    if seen == n:
        return
    problems = []
    for node, ordered in schedule.order.items():
        blocked = [t for t in ordered if indegree[wf.task_index[t]] > 0]
        if blocked:
            problems.append(
                f"on node {node!r} task {blocked[0]!r} could never start: the per-node orders "
                "put some task before one of its ancestors (the schedule would deadlock)"
            )
    raise ScheduleError(schedule.scheduler or "schedule", problems)
