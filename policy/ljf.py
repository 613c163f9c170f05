"""Longest Job First: the seed README's queue baseline, applied to batches of ready tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from policy.base import ListScheduler
from policy.batch_list import batch_list_schedule, by_duration
from policy.plan import Plan
from policy.ranks import mean_compute_time
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy


@dataclass(frozen=True)
class LJF(ListScheduler):
    """The ready task with the longest mean compute time goes first, to its earliest-finish node."""

    name: str = "ljf"
    description: ClassVar[str] = "Longest job first among ready tasks, earliest-finish node"

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> Plan:
        durations = {t.id: mean_compute_time(workflow, platform, t.id) for t in workflow.tasks}
        return batch_list_schedule(
            workflow, platform, by_duration(durations, shortest=False), occupancy
        )
