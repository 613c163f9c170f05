"""Max-Min (Ibarra and Kim 1977; Braun et al. 2001) for workflows, in batches of ready tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from policy.base import ListScheduler
from policy.batch_list import batch_list_schedule, by_finish
from policy.plan import Plan
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy


@dataclass(frozen=True)
class MaxMin(ListScheduler):
    """Repeatedly place the ready task whose earliest finish time is largest (long tasks first)."""

    name: str = "maxmin"
    description: ClassVar[str] = "Max-Min: ready task with the largest earliest finish first"

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> Plan:
        return batch_list_schedule(workflow, platform, by_finish(smallest=False), occupancy)
