"""FIFO-DEFT: workflows first come, first served; each task at its earliest finish, duplicating
its critical parent where that finishes it sooner.

The multi-workflow baseline of Lachesis (Luo et al., "Learning to Optimize DAG Scheduling in
Heterogeneous Environment", 2021) and of the DQN studies that compare with it: FIFO over jobs,
and DEFT (duplication-based earliest finish time) per task. Here:

* arrivals are planned in arrival order and never revisited (FIFO); within one, tasks by
  decreasing upward rank (Topcuoglu et al. 2002), on the shared :class:`CopyPlan` (cores,
  memory and GPUs, with insertion);
* for each node able to host the task, its earliest finish there as is, and, when the input
  landing last comes over the network from a parent placed elsewhere (the transfer on the
  critical path), its earliest finish with a copy of that parent run on this node first (the
  copy reads its own inputs from wherever they land soonest). The task goes where it finishes
  earliest; a copy is kept only when it makes the finish strictly earlier (ties: no copy, then
  the node listed first).

One level of duplication (the critical parent, not its ancestors), as the brief of issue #34
states it: "duplicate a predecessor where that removes a transfer on the critical path".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from policy.duplication import CopyPlan, CopySchedule
from policy.plan import Slot
from sim.arrivals import arrival_batches
from sim.model import Node, Platform, Workflow, check_fits, hosts, node_fits
from sim.occupancy import Occupancy
from sim.ranks import upward_rank
from sim.schedule import SHARED_FS


@dataclass(frozen=True)
class FifoDeft:
    """First come, first served over arrivals; earliest finish with duplication per task."""

    name: str = "fifo-deft"
    description: ClassVar[str] = "FIFO over workflows, earliest finish with parent duplication"

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> CopyPlan:
        """The complete plan, copies included."""
        check_fits(workflow, platform)
        rank = upward_rank(workflow, platform)
        position = {t: i for i, t in enumerate(workflow.topological_order)}
        plan = CopyPlan(workflow, platform, insertion=True, occupancy=occupancy)
        for time, batch in arrival_batches(workflow):
            plan.now = time
            for task in sorted(batch, key=lambda t: (-rank[t], position[t])):
                self._place(plan, task)
        return plan

    def schedule_with_copies(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> CopySchedule:
        """What the simulator runs: the expanded workflow and its static schedule."""
        return self.plan(workflow, platform, occupancy).to_copy_schedule(self.name)

    @staticmethod
    def _place(plan: CopyPlan, task: str) -> None:
        commit(plan, deft_choice(plan, task))


def deft_choice(plan: CopyPlan, task: str) -> tuple[Slot, Slot | None]:
    """DEFT for ``task`` on ``plan`` (see the module docstring): its earliest-finish slot and
    the copy of its critical parent that slot needs (None: no copy). Nothing is committed."""
    best: tuple[float, int, Slot, Slot | None] | None = None
    for order, node in enumerate(hosts(plan.workflow.task_by_id[task], plan.platform)):
        slot = plan.slot(task, node)
        if best is None or (slot.finish, order) < best[:2]:
            best = (slot.finish, order, slot, None)
        copy = _critical_copy(plan, task, node)
        if copy is None:
            continue
        plan.place_copy(copy)
        with_copy = plan.slot(task, node)
        plan.remove_copy(copy.task, copy.node)
        if with_copy.finish < slot.finish and with_copy.finish < best[0]:
            best = (with_copy.finish, order, with_copy, copy)
    assert best is not None, "check_fits guarantees a host"
    return best[2], best[3]


def commit(plan: CopyPlan, choice: tuple[Slot, Slot | None]) -> None:
    """Place a :func:`deft_choice`: the copy first, then the task."""
    slot, copy = choice
    if copy is not None:
        plan.place_copy(copy)
    plan.place(slot)


def _critical_copy(plan: CopyPlan, task: str, node: Node) -> Slot | None:
    """A copy, on ``node``, of the parent whose data lands last for ``task`` there, when that
    data comes over the network and the copy would finish before it lands; else None."""
    arrivals = plan.input_arrivals(task, node)
    if not arrivals:
        return None
    file_id, (where, landed) = max(arrivals.items(), key=lambda item: item[1][1])
    if where in (SHARED_FS, node.name):
        return None  # the critical input is a filesystem read, or already local
    parent = plan.workflow.producer[file_id]
    if not node_fits(plan.workflow.task_by_id[parent], node) or node.name in plan.copies.get(
        parent, {}
    ):
        return None
    copy = plan.copy_slot(parent, node)
    return copy if copy.finish < landed else None
