"""SAGA (ANRGUSC's "Scheduling Algorithms Gathered") as a peer: conversion both ways.

SAGA's model (``saga`` 2.0.2): related machines, one task at a time per node, a task of cost
``c`` runs ``c / node speed``; an edge of size ``s`` between two nodes takes ``s / link speed``
(no latency, no contention); same node: free. No workflow input files.

Our instances map onto it as follows, exactly when the instance has one core per node and
one-core tasks, no workflow input files and zero latency (the SAGA cross-check instances):

* a node becomes a SAGA node of speed ``node.speed``; a task, a SAGA task of cost
  ``work / cores`` (so ``cost / speed`` is our duration);
* an edge's size is its largest file (our files move in parallel, so that one sets the time);
  the link between two nodes has the speed of the slower NIC.

Otherwise the conversion is an approximation that SAGA plans with (each node runs one task at
a time, inputs on the shared filesystem and latency are ignored), and the schedule it returns
(placement plus per-node order) is replayed by our simulator, which charges everything.
SAGA adds a zero-cost ``__super_source__``/``__super_sink__`` to graphs with several entry or
exit tasks; they are dropped on the way back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any, ClassVar

from policy.base import StaticScheduler
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy, OccupancyError
from sim.schedule import StaticSchedule

if TYPE_CHECKING:
    from saga import Network, Schedule, TaskGraph

SAGA_SCHEDULERS: dict[str, str] = {
    "heft": "HeftScheduler",
    "cpop": "CpopScheduler",
    "minmin": "MinMinScheduler",
    "maxmin": "MaxMinScheduler",
    "etf": "ETFScheduler",
    "fcp": "FCPScheduler",
    "mct": "MCTScheduler",
    "met": "METScheduler",
    "olb": "OLBScheduler",
    "sufferage": "SufferageScheduler",
}
"""Our short name -> SAGA class name of the peers the bench offers (all run on 1000 tasks)."""


def saga_available() -> bool:
    """Whether SAGA can be imported (it is in the ``bench`` extra, not a runtime dependency)."""
    try:
        import saga  # noqa: F401
    except ImportError:
        return False
    return True


def exact_in_saga(workflow: Workflow, platform: Platform) -> list[str]:
    """Why SAGA's model cannot represent this instance exactly (empty: it can)."""
    reasons = []
    if any(n.cores != 1 for n in platform.nodes):
        reasons.append("nodes have several cores (SAGA runs one task at a time per node)")
    if any(t.cores != 1 for t in workflow.tasks):
        reasons.append("tasks need several cores")
    if workflow.input_files:
        reasons.append("workflow input files on the shared filesystem")
    if platform.latency != 0:
        reasons.append("non-zero network latency")
    return reasons


def to_saga(workflow: Workflow, platform: Platform) -> tuple[Network, TaskGraph]:
    """SAGA's network and task graph for our instance (see the module docstring)."""
    from saga import Network, TaskGraph

    network = Network.create(
        nodes=[(n.name, n.speed) for n in platform.nodes],
        edges=[
            (a.name, b.name, min(a.bandwidth, b.bandwidth))
            for a, b in combinations(platform.nodes, 2)
        ],
    )
    dependencies = []
    for (parent, child), files in workflow.edge_files.items():
        size = max((workflow.file_by_id[f].size for f in files), default=0)
        dependencies.append((parent, child, float(size)))
    graph = TaskGraph.create(
        tasks=[(t.id, t.work / t.cores) for t in workflow.tasks], dependencies=dependencies
    )
    return network, graph


def from_saga(schedule: Schedule, workflow: Workflow, scheduler: str) -> StaticSchedule:
    """Placements and per-node start order of a SAGA schedule, super source/sink dropped."""
    assignment: dict[str, str] = {}
    starts: dict[str, float] = {}
    ends: dict[str, float] = {}
    for node, scheduled in schedule.items():
        for task in scheduled:
            if task.name in workflow.task_by_id:
                assignment[task.name] = node
                starts[task.name] = task.start
                ends[task.name] = task.end
    position = {t: i for i, t in enumerate(workflow.topological_order)}
    per_node: dict[str, list[str]] = {}
    for task, node in assignment.items():
        per_node.setdefault(node, []).append(task)
    order = {
        node: tuple(sorted(tasks, key=lambda t: (starts[t], ends[t], position[t])))
        for node, tasks in per_node.items()
    }
    return StaticSchedule(assignment, order, scheduler, float(schedule.makespan))


def run_saga(name: str, workflow: Workflow, platform: Platform) -> Schedule:
    """SAGA's own schedule of ``workflow`` by its scheduler ``name`` (a key of SAGA_SCHEDULERS)."""
    import saga.schedulers

    scheduler = getattr(saga.schedulers, SAGA_SCHEDULERS[name])()
    logging.disable(logging.WARNING)  # SAGA warns on every graph with several entries or exits
    try:
        network, graph = to_saga(workflow, platform)
        return scheduler.schedule(network, graph)
    finally:
        logging.disable(logging.NOTSET)


@dataclass(frozen=True)
class SagaPeer(StaticScheduler):
    """One of SAGA's schedulers behind our interface; its schedule is replayed by our simulator."""

    peer: str = "heft"
    name: str = field(init=False)
    description: ClassVar[str] = "A SAGA scheduler, replayed in our simulator"

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", f"saga-{self.peer}")

    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        if occupancy:
            raise OccupancyError(self.name, ["SAGA's schedulers plan on an idle cluster only"])
        return from_saga(run_saga(self.peer, workflow, platform), workflow, self.name)


def peer_schedulers(names: tuple[str, ...] | None = None) -> list[Any]:
    """SagaPeer objects for ``names`` (default: every peer in :data:`SAGA_SCHEDULERS`)."""
    return [SagaPeer(peer=n) for n in (names or tuple(SAGA_SCHEDULERS))]


def representable_instance(workflow: Workflow, platform: Platform) -> tuple[Workflow, Platform]:
    """The nearest instance SAGA represents exactly (see :func:`exact_in_saga`).

    One file per edge holding the edge's largest file, no workflow input files, one-core
    tasks and nodes, zero latency; work, speeds, bandwidths and the DAG are kept.
    """
    from dataclasses import replace

    from sim.model import File

    files = []
    inputs: dict[str, list[str]] = {t.id: [] for t in workflow.tasks}
    outputs: dict[str, list[str]] = {t.id: [] for t in workflow.tasks}
    for (parent, child), edge in workflow.edge_files.items():
        size = max((workflow.file_by_id[f].size for f in edge), default=0)
        file_id = f"{parent}->{child}"
        files.append(File(file_id, size))
        outputs[parent].append(file_id)
        inputs[child].append(file_id)
    tasks = tuple(
        replace(
            t,
            cores=1,
            memory=0,
            gpus=0,
            inputs=tuple(inputs[t.id]),
            outputs=tuple(outputs[t.id]),
            parents=(),
        )
        for t in workflow.tasks
    )
    nodes = tuple(replace(n, cores=1) for n in platform.nodes)
    return (
        Workflow(workflow.name, tasks, tuple(files)),
        Platform(platform.name, nodes, latency=0.0),
    )
