"""Shortest Job First: the seed README's queue baseline, applied to batches of ready tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from policy.base import ListScheduler
from policy.batch_list import batch_list_schedule, by_duration
from policy.plan import Plan
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy
from sim.ranks import mean_compute_times


class DurationOrder(ListScheduler):
    """Batch list scheduling by mean compute time: the ready task with the shortest
    (``shortest``) or the longest goes first, to its earliest-finish node. SJF and LJF differ in
    that one flag only."""

    shortest: ClassVar[bool] = True

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> Plan:
        durations = mean_compute_times(workflow, platform)
        return batch_list_schedule(
            workflow, platform, by_duration(durations, shortest=self.shortest), occupancy
        )


@dataclass(frozen=True)
class SJF(DurationOrder):
    """The ready task with the shortest mean compute time first, to its earliest-finish node."""

    name: str = "sjf"
    description: ClassVar[str] = "Shortest job first among ready tasks, earliest-finish node"
