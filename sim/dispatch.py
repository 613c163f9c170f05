"""Asking a dynamic scheduler for nodes during a run, and checking its answers.

Shared by both engines (the pure-Python ``sim.engine._Run`` and the compiled
``sim.fast.CoreRun``): each gives the scheduler its own read-only view (``run.view``).
"""

from __future__ import annotations

from typing import Protocol

from sim.compiled import CompiledPlatform, CompiledWorkflow
from sim.errors import ScheduleError
from sim.model import Platform, Workflow, node_fits
from sim.schedule import ClusterView, DynamicScheduler


class Viewable(Protocol):
    """A running simulation, as the dispatcher needs it."""

    wf: CompiledWorkflow
    pf: CompiledPlatform

    def view(self, workflow: Workflow, platform: Platform) -> ClusterView:
        """The read-only view of this run its scheduler gets."""
        ...


class Dispatcher:
    """Asks a dynamic scheduler for nodes and checks its answers."""

    def __init__(self, scheduler: DynamicScheduler, workflow: Workflow, platform: Platform):
        self.scheduler = scheduler
        self.workflow = workflow
        self.platform = platform
        self._view: ClusterView | None = None

    def choose(self, run: Viewable, task: int) -> int:
        """The node index the scheduler picks for ``task``; :class:`ScheduleError` if it cannot
        be used."""
        if self._view is None:
            self._view = run.view(self.workflow, self.platform)
        task_id = run.wf.task_ids[task]
        node = self.scheduler.choose_node(task_id, self._view)
        index = run.pf.node_index.get(node)
        problem = None
        if index is None:
            problem = f"placed task {task_id!r} on unknown node {node!r}"
        elif not node_fits(self.workflow.task_by_id[task_id], self.platform.nodes[index]):
            problem = f"placed task {task_id!r} on node {node!r}, which cannot host it"
        if problem is not None:
            name = getattr(self.scheduler, "name", type(self.scheduler).__name__)
            raise ScheduleError(f"scheduler {name!r}", [f"scheduler {name!r} {problem}"])
        assert index is not None
        return index

    def order(self, wf: CompiledWorkflow, batch: list[int]) -> list[int]:
        """Tasks ready at one instant in placement order: descending priority, then
        topological order."""
        priority = self.scheduler.priority
        ids, rank = wf.task_ids, wf.topo_rank
        return sorted(batch, key=lambda t: (-priority(ids[t]), rank[t]))
