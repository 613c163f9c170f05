"""Planning a stream of workflows online: each arrival planned when it arrives, never earlier.

A stream (:mod:`sim.arrivals`) reaches a static scheduler as one merged workflow whose tasks
carry their workflow's arrival. The schedulers here visit its arrival batches
(:func:`sim.arrivals.arrival_batches`) in time order and plan each one knowing only what has
arrived so far, on one shared :class:`~policy.plan.Plan` of the whole cluster, then hand the
simulator one static schedule (per node, every workflow's tasks in planned start order):

* :class:`PerArrival` runs a classic list scheduler (HEFT, CPOP, PEFT, Min-Min...) on each
  arriving workflow on its own, on the cluster as a busy-cluster planner sees it at that
  moment: the cores earlier plans hold, until their planned ends (:func:`held_cores`; the
  existing :mod:`sim.occupancy` mechanism, so the classic's code is untouched). Like a Slurm
  user's planner it sees held cores, not the gaps between earlier jobs, nor GPUs.
* :class:`OnlineHEFT` re-plans at every arrival every task not yet started (by the plan) of
  every workflow arrived so far, together, by decreasing upward rank (rank within the arrived
  set), with insertion into the shared timelines (cores, memory and GPUs exact); what has
  started stays.

FIFO-DEFT, which also duplicates tasks, is in :mod:`policy.fifo_deft`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import ClassVar

from policy.base import ListScheduler, StaticScheduler
from policy.plan import Plan, Slot
from sim.arrivals import arrival_batches
from sim.errors import ScheduleError
from sim.model import Platform, Workflow, check_fits, hosts
from sim.occupancy import Hold, Occupancy
from sim.ranks import upward_rank
from sim.schedule import StaticSchedule


def batch_workflow(workflow: Workflow, tasks: tuple[str, ...], name: str = "") -> Workflow:
    """The workflow of one arrival batch on its own, in its own time (releases at 0).

    Raises :class:`~sim.errors.ScheduleError` when a task of the batch depends on a task of
    another batch: only whole workflows can be planned one arrival at a time.
    """
    members = set(tasks)
    outside = sorted({p for t in tasks for p in workflow.parents[t] if p not in members})
    if outside:
        raise ScheduleError(
            "online planning",
            [
                f"tasks released together depend on {outside[0]!r}, released at another time "
                f"({len(outside)} such parents): arrivals must be whole workflows"
            ],
        )
    by_id = workflow.task_by_id
    chosen = [replace(by_id[t], release=0.0) for t in tasks]
    used = {f for t in chosen for f in (*t.inputs, *t.outputs)}
    files = tuple(f for f in workflow.files if f.id in used)
    return Workflow(name or f"{workflow.name}@batch", tuple(chosen), files)


def held_cores(plan: Plan, time: float) -> Occupancy:
    """The plan's cluster at ``time`` as a busy-cluster planner sees it: on each node, for each
    level ``k``, one core held until the last planned instant at which ``k`` or more cores are
    in use (times relative to ``time``). Never less than the plan holds, never more than the
    node has."""
    holds: list[Hold] = []
    for node in plan.platform.nodes:
        events: dict[float, int] = {}
        for r in plan.timelines[node.name].reservations:
            if r.end > time and r.cores:
                begin = max(r.start, time)
                events[begin] = events.get(begin, 0) + r.cores
                events[r.end] = events.get(r.end, 0) - r.cores
        if not events:
            continue
        until: dict[int, float] = {}  # level -> when it is last reached
        used = 0
        instants = sorted(events)
        for here, after in pairwise(instants):
            used += events[here]
            for level in range(1, min(used, node.cores) + 1):
                until[level] = after
        ends: dict[float, int] = {}
        for end in until.values():
            ends[end] = ends.get(end, 0) + 1
        holds += [Hold(node.name, n, end - time, "earlier plans") for end, n in ends.items()]
    return Occupancy(tuple(holds))


@dataclass(frozen=True)
class PerArrival(StaticScheduler):
    """A classic list scheduler run on each arriving workflow on its own, around the cores
    earlier plans hold (see the module docstring)."""

    inner: ListScheduler
    description: ClassVar[str] = "a classic list scheduler per arriving workflow"

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.inner.name

    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        check_fits(workflow, platform)
        plan = Plan(workflow, platform, insertion=True, occupancy=occupancy)
        for time, batch in arrival_batches(workflow):
            local = self.inner.plan(
                batch_workflow(workflow, batch), platform, held_cores(plan, time)
            )
            for task in sorted(batch, key=lambda t: (local.start[t], local.finish[t])):
                plan.place(
                    Slot(
                        task,
                        local.placement[task],
                        time + local.start[task],
                        time + local.finish[task],
                    )
                )
        return plan.to_schedule(self.name)


@dataclass(frozen=True)
class OnlineHEFT(StaticScheduler):
    """HEFT re-run at every arrival over every arrived task not yet started (by the plan)."""

    name: str = "online-heft"
    description: ClassVar[str] = (
        "HEFT re-planning every unstarted task of the arrived workflows at each arrival"
    )
    replans: list[int] = field(default_factory=list, compare=False, repr=False)
    """Per arrival, how many tasks were (re-)planned (the last run's; for reports)."""

    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        check_fits(workflow, platform)
        rank = upward_rank(workflow, platform)  # per workflow: the merged DAG is disjoint
        position = {t: i for i, t in enumerate(workflow.topological_order)}
        plan = Plan(workflow, platform, insertion=True, occupancy=occupancy)
        self.replans.clear()
        for time, batch in arrival_batches(workflow):
            started = [t for t in plan.placement if plan.start[t] < time]
            pending = [t for t in plan.placement if plan.start[t] >= time] + list(batch)
            kept = plan
            plan = Plan(workflow, platform, insertion=True, occupancy=occupancy, now=time)
            for task in started:
                plan.place(Slot(task, kept.placement[task], kept.start[task], kept.finish[task]))
            for task in sorted(pending, key=lambda t: (-rank[t], position[t])):
                plan.place(plan.best_slot(task, hosts(workflow.task_by_id[task], platform)))
            self.replans.append(len(pending))
        return plan.to_schedule(self.name)
