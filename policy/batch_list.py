"""Batch-mode list scheduling shared by Min-Min, Max-Min, SJF and LJF.

The tasks ready at the start of a round form a batch; a selection rule repeatedly picks one task
of the batch, which goes to its earliest-finish node without insertion (appended after the
node's latest start); the next batch is formed when this one is empty. This is the DAG form of
the independent-task heuristics of Braun et al. (JPDC 61(6), 2001), as SAGA implements it.

A task's best slot only changes when a task is placed on one of its candidate nodes, so slots
are cached per (task, node) and only the changed node is re-queried.
"""

from __future__ import annotations

from collections.abc import Callable

from policy.plan import Plan, Slot
from sim.model import Platform, Workflow, hosts
from sim.occupancy import Occupancy

Selector = Callable[[dict[str, Slot]], str]
"""Given each batch task's best slot, the task to place next."""


def batch_list_schedule(
    workflow: Workflow,
    platform: Platform,
    select: Selector,
    occupancy: Occupancy | None = None,
) -> Plan:
    """Schedule ``workflow`` batch by batch, picking tasks with ``select``, around the cores
    ``occupancy`` holds."""
    plan = Plan(workflow, platform, insertion=False, occupancy=occupancy)
    while len(plan.placement) < len(workflow):
        batch = plan.ready_tasks()
        slots = {
            t: {n.name: plan.slot(t, n) for n in hosts(workflow.task_by_id[t], platform)}
            for t in batch
        }
        while slots:
            best = {t: _earliest(per_node) for t, per_node in slots.items()}
            chosen = best[select(best)]
            plan.place(chosen)
            del slots[chosen.task]
            node = platform.node_by_name[chosen.node]
            for t, per_node in slots.items():
                if chosen.node in per_node:
                    per_node[chosen.node] = plan.slot(t, node)
    return plan


def _earliest(per_node: dict[str, Slot]) -> Slot:
    """The earliest-finishing slot; ties go to the first node of the platform."""
    best: Slot | None = None
    for slot in per_node.values():
        if best is None or slot.finish < best.finish:
            best = slot
    assert best is not None
    return best


def by_finish(smallest: bool) -> Selector:
    """Min-Min (``smallest``) or Max-Min: the batch task whose best finish is least/greatest."""

    def select(best: dict[str, Slot]) -> str:
        tasks = list(best)  # topological order: ties go to the earliest task
        if smallest:
            return min(tasks, key=lambda t: best[t].finish)
        return max(tasks, key=lambda t: best[t].finish)

    return select


def by_duration(durations: dict[str, float], shortest: bool) -> Selector:
    """SJF (``shortest``) or LJF: the batch task with the least/greatest mean compute time."""

    def select(best: dict[str, Slot]) -> str:
        tasks = list(best)
        if shortest:
            return min(tasks, key=lambda t: durations[t])
        return max(tasks, key=lambda t: durations[t])

    return select
