"""The scheduler interface every policy implements, and the one call that evaluates it.

Two kinds of scheduler share the simulator contract of :mod:`sim.schedule`:

* a :class:`StaticScheduler` fixes the whole schedule up front; a :class:`ListScheduler`
  (HEFT, CPOP, PEFT, Min-Min...) builds it as a :class:`~policy.plan.Plan` with exact costs,
  and SAGA's peers convert theirs;
* a dynamic scheduler (:class:`~sim.schedule.DynamicScheduler`: Traditional Slurm, the WASS
  heuristic, random, the learned policy) picks a node each time a task becomes ready.

:func:`plan_and_simulate` runs either kind through the simulator.

Both kinds plan on a busy cluster the same way: a static scheduler's ``schedule`` takes the
``occupancy`` (other jobs' cores and when they free up, :mod:`sim.occupancy`) and a list
scheduler's :class:`~policy.plan.Plan` starts with it reserved; a dynamic scheduler sees it
through the simulator, which starts with those cores taken.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from policy.plan import Plan
from sim.errors import WorkflowError
from sim.model import Platform, Workflow, check_fits
from sim.occupancy import Occupancy
from sim.schedule import DynamicScheduler, NetworkModel, SimResult, StaticSchedule


class StaticScheduler(ABC):
    """A scheduler that fixes every placement and per-node order before execution."""

    name: str
    description: ClassVar[str]

    @abstractmethod
    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        """Placements and per-node start order, the simulator's input, planned around the
        cores ``occupancy`` holds (None: an idle cluster)."""


MAX_PLANNED_TASKS = 2000
"""The most tasks a list scheduler plans (docs/schedulers.md, "Workflow size"). Its core
timeline search grows faster than quadratically with the tasks that run side by side: a
4,000-task fan-out took HEFT 270 s to plan, a 100k-task workflow hours; above the bound the
plan is refused in one line, pointing at ``eft``, which places tasks as they become ready."""


class ListScheduler(StaticScheduler):
    """A static scheduler that builds a :class:`Plan` with the model's exact costs."""

    @abstractmethod
    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> Plan:
        """The complete plan: every task placed, with its expected start and finish."""

    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        check_fits(workflow, platform)
        check_plannable(workflow, self.name)
        return self.plan(workflow, platform, occupancy).to_schedule(self.name)


def check_plannable(workflow: Workflow, scheduler: str) -> None:
    """Refuse (:class:`WorkflowError`) a workflow too large for a list scheduler to plan in
    reasonable time, rather than run for hours."""
    if len(workflow.tasks) > MAX_PLANNED_TASKS:
        raise WorkflowError(
            workflow.name,
            [
                f"{len(workflow.tasks):,} tasks: {scheduler} plans at most {MAX_PLANNED_TASKS:,} "
                '(docs/schedulers.md, "Workflow size"); simulate it with --scheduler eft, '
                "which places tasks as they become ready"
            ],
        )


Scheduler = StaticScheduler | DynamicScheduler


def plan_and_simulate(
    scheduler: Scheduler,
    workflow: Workflow,
    platform: Platform,
    network_model: NetworkModel = "fair",
    occupancy: Occupancy | None = None,
) -> SimResult:
    """Run ``scheduler`` on ``workflow`` and ``platform`` (busy with ``occupancy``, if given)
    through the simulator."""
    from sim.engine import simulate

    check_fits(workflow, platform)
    if isinstance(scheduler, StaticScheduler):
        schedule = scheduler.schedule(workflow, platform, occupancy)
        return simulate(workflow, platform, schedule, network_model, occupancy)
    return simulate(workflow, platform, scheduler, network_model, occupancy)
