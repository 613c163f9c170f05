"""PEFT: Predict Earliest Finish Time (Arabnejad and Barbosa, IEEE TPDS 25(3), 2014).

The optimistic cost table OCT(t, p) estimates the remaining path length below ``t`` if it runs on
``p``. Ready tasks go by decreasing rank_oct (the row mean) to the node minimising
``EFT(t, p) + OCT(t, p)``, looking one step ahead where HEFT looks only at the finish time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from policy.base import ListScheduler
from policy.plan import Plan, Slot, ready_by_priority
from sim.model import Platform, Workflow, hosts
from sim.occupancy import Occupancy
from sim.ranks import oct_rank, optimistic_cost_table


@dataclass(frozen=True)
class PEFT(ListScheduler):
    """Insertion-based PEFT on multi-core nodes."""

    name: str = "peft"
    description: ClassVar[str] = "PEFT: optimistic cost table lookahead, insertion-based"

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> Plan:
        table = optimistic_cost_table(workflow, platform)
        rank = oct_rank(table, platform)
        plan = Plan(workflow, platform, insertion=True, occupancy=occupancy)
        for task in ready_by_priority(workflow, rank):
            best: Slot | None = None
            best_key = 0.0
            for node in hosts(workflow.task_by_id[task], platform):
                slot = plan.slot(task, node)
                key = slot.finish + table[(task, node.name)]
                if best is None or key < best_key:
                    best, best_key = slot, key
            assert best is not None, "check_fits guarantees a host"
            plan.place(best)
        return plan
