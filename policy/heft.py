"""HEFT: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri, Wu, IEEE TPDS 2002).

Tasks are taken by decreasing upward rank (ties: topological position) and each goes to the
node where it finishes earliest, using insertion into idle gaps of the node's core timeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from policy.base import ListScheduler
from policy.plan import Plan
from sim.model import Platform, Workflow, hosts
from sim.occupancy import Occupancy
from sim.ranks import PairConvention, upward_rank


@dataclass(frozen=True)
class HEFT(ListScheduler):
    """Insertion-based HEFT on multi-core nodes (textbook HEFT with one core per node)."""

    name: str = "heft"
    description: ClassVar[str] = "HEFT: upward rank order, earliest finish time with insertion"
    convention: PairConvention = "distinct"
    """How mean communication costs average over node pairs (``"saga"`` only to cross-check)."""

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> Plan:
        rank = upward_rank(workflow, platform, self.convention)
        position = {t: i for i, t in enumerate(workflow.topological_order)}
        order = sorted(workflow.topological_order, key=lambda t: (-rank[t], position[t]))
        plan = Plan(workflow, platform, insertion=True, occupancy=occupancy)
        for task in order:
            plan.place(plan.best_slot(task, hosts(workflow.task_by_id[task], platform)))
        return plan
