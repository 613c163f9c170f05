"""The event dispatcher that learned task selectors share: which executable task of which
arrived workflow is tried next is the selector's; when a task is executable, and placing it by
DEFT with duplication, is this module's.

A dispatcher walks the plan's events (arrivals and planned finishes of placed originals). A
task is executable once its workflow has arrived and its parents' originals are planned to
have finished. At each event the :class:`Backlog` (the selector) hands out its executable tasks
one at a time, best first; each is placed by FIFO-DEFT's :func:`policy.fifo_deft.deft_choice`
if it can start without waiting for cores, memory or GPUs (only for its data); after
``patience`` that would wait, the rest wait for the next event. With no event left, the backlog
is placed in the selector's order as is.

Used by :mod:`policy.learned.lachesis` (scores fixed per task on arrival, a heap) and
:mod:`policy.learned.decima` (scores from the whole current state at each event).
"""

from __future__ import annotations

import heapq
from typing import Protocol

from policy.duplication import CopyPlan
from policy.fifo_deft import commit, deft_choice
from policy.plan import Slot
from sim.arrivals import arrival_batches
from sim.model import Platform, Workflow, check_fits
from sim.occupancy import Occupancy


class Backlog(Protocol):
    """The executable tasks and the order they are tried in: a task selector."""

    def arrive(self, plan: CopyPlan, batch: tuple[str, ...]) -> None:
        """The tasks of one arrival reach the cluster (before any of them is executable)."""

    def add(self, task: str) -> None:
        """``task`` became executable (or waits again after a try)."""

    def begin(self, plan: CopyPlan) -> None:
        """A new event at ``plan.now``: what is tried next may be revised from the state."""

    def pop(self) -> str:
        """The next executable task to try (the backlog is not empty)."""

    def __len__(self) -> int: ...


def dispatch_plan(
    workflow: Workflow,
    platform: Platform,
    backlog: Backlog,
    patience: int,
    occupancy: Occupancy | None = None,
) -> CopyPlan:
    """The complete plan, copies included, with tasks tried in ``backlog``'s order;
    ``plan.placement`` keeps the dispatch order."""
    check_fits(workflow, platform)
    plan = CopyPlan(workflow, platform, insertion=True, occupancy=occupancy)
    batches = arrival_batches(workflow)
    events = [time for time, _ in batches]
    heapq.heapify(events)
    unfinished = {t: len(workflow.parents[t]) for t in workflow.task_by_id}
    finishing: list[tuple[float, str]] = []  # (planned finish, task) of placed originals
    arrived = 0
    while len(plan.placement) < len(workflow.tasks):
        if events:
            clock = heapq.heappop(events)
            while events and events[0] <= clock:
                heapq.heappop(events)
        plan.now = clock
        while arrived < len(batches) and batches[arrived][0] <= clock:
            _, batch = batches[arrived]
            arrived += 1
            backlog.arrive(plan, batch)
            for task in batch:
                if not unfinished[task]:
                    backlog.add(task)
        while finishing and finishing[0][0] <= clock:
            _, done = heapq.heappop(finishing)
            for child in workflow.children[done]:
                unfinished[child] -= 1
                if not unfinished[child]:
                    backlog.add(child)
        for slot in _dispatch(plan, backlog, patience, force=not events):
            heapq.heappush(events, slot.finish)
            if slot.task in plan.placement and plan.placement[slot.task] == slot.node:
                heapq.heappush(finishing, (slot.finish, slot.task))
    return plan


def _dispatch(plan: CopyPlan, backlog: Backlog, patience: int, force: bool) -> list[Slot]:
    """Place executable tasks in the backlog's order while they can start without waiting for
    resources (every one of them when ``force``); the slots placed (copies' too)."""
    placed: list[Slot] = []
    waiting: list[str] = []
    if backlog:
        backlog.begin(plan)
    while backlog and len(waiting) < patience:
        task = backlog.pop()
        slot, copy = deft_choice(plan, task)
        if not force and _waits_for_resources(plan, slot, copy):
            waiting.append(task)
            continue
        commit(plan, (slot, copy))
        placed += [slot] if copy is None else [copy, slot]
    for task in waiting:
        backlog.add(task)
    return placed


def _waits_for_resources(plan: CopyPlan, slot: Slot, copy: Slot | None) -> bool:
    """Whether ``slot`` starts later than its data (and the planning instant) allow: its node
    is busy then."""
    node = plan.platform.node_by_name[slot.node]
    if copy is not None:
        plan.place_copy(copy)
    ready = max(plan.data_ready(slot.task, node), plan.now)
    if copy is not None:
        plan.remove_copy(copy.task, copy.node)
    return slot.start > ready + 1e-9
