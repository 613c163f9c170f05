"""A busy cluster: other jobs hold some nodes from time 0 until a seeded time.

Real clusters are shared, so a workflow's plan should start from the nodes' occupancy rather
than an empty machine. Here the occupancy is a *busy-until* time per node: the node's every
core is held from 0 until then. The simulator needs no new mechanism for it: the load runs as
one background task per busy node, first in that node's order, with all its cores and no files
(:func:`occupy`); the workflow's makespan leaves those tasks out (:func:`workflow_makespan`).

Busy-until times are drawn relative to the instance's own ideal length (:func:`ideal_length`),
so the load matters equally for small and large workflows. The defaults
(``busy_share`` 0.5, ``horizon`` 1.0) are assumptions, not trace figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from sim.model import Platform, Task, Workflow
from sim.schedule import SimResult, StaticSchedule

BACKGROUND_PREFIX = "@busy:"
"""Id prefix of the background tasks :func:`occupy` adds (one per busy node)."""


@dataclass(frozen=True)
class BackgroundConfig:
    """How much of the cluster is busy when the workflow arrives, and for how long."""

    busy_share: float = 0.5
    """Share of the nodes that are busy at time 0 (rounded; 0 disables the load)."""
    horizon: float = 1.0
    """Busy-until times are uniform in ``[0, horizon]`` ideal lengths of the workflow."""


def ideal_length(workflow: Workflow, platform: Platform) -> float:
    """A lower bound on the workflow's makespan (s): the larger of total work over total
    capacity and the critical path on the fastest cores (data movement ignored)."""
    fastest = platform.fastest_core_speed
    longest: dict[str, float] = {}
    tasks = workflow.task_by_id
    for task in workflow.topological_order:
        before = max((longest[p] for p in workflow.parents[task]), default=0.0)
        longest[task] = before + tasks[task].work / (fastest * tasks[task].cores)
    path = max(longest.values(), default=0.0)
    return max(workflow.total_work / platform.total_capacity, path)


def draw_background(
    workflow: Workflow, platform: Platform, cfg: BackgroundConfig, rng: np.random.Generator
) -> dict[str, float]:
    """Node -> busy-until time (s) for a seeded choice of ``busy_share`` of the nodes."""
    count = round(cfg.busy_share * len(platform.nodes))
    if count <= 0:
        return {}
    chosen = sorted(int(i) for i in rng.choice(len(platform.nodes), count, replace=False))
    span = cfg.horizon * ideal_length(workflow, platform)
    untils = rng.uniform(0.0, span, size=count)
    return {platform.nodes[i].name: float(u) for i, u in zip(chosen, untils, strict=True)}


def background_task(node_name: str, platform: Platform, until: float) -> Task:
    """The task that holds every core of ``node_name`` from 0 to ``until``."""
    node = platform.node_by_name[node_name]
    return Task(
        id=f"{BACKGROUND_PREFIX}{node_name}",
        work=until * node.speed * node.cores,
        category="background",
        cores=node.cores,
    )


def occupy(
    workflow: Workflow,
    platform: Platform,
    schedule: StaticSchedule,
    busy_until: Mapping[str, float],
) -> tuple[Workflow, StaticSchedule]:
    """``workflow`` plus one background task per busy node, and ``schedule`` with each
    background task placed first on its node."""
    extra = [background_task(n, platform, u) for n, u in busy_until.items() if u > 0]
    loaded = Workflow(
        workflow.name, (*workflow.tasks, *extra), workflow.files, workflow.description,
        workflow.meta,
    )  # fmt: skip
    assignment = dict(schedule.assignment)
    order = dict(schedule.order)
    for task in extra:
        node = task.id.removeprefix(BACKGROUND_PREFIX)
        assignment[task.id] = node
        order[node] = (task.id, *order.get(node, ()))
    return loaded, StaticSchedule(assignment, order, schedule.scheduler, schedule.planned_makespan)


def workflow_makespan(result: SimResult, workflow: Workflow) -> float:
    """The last end among ``workflow``'s own tasks and transfers (background tasks left out)."""
    own = workflow.task_by_id
    ends = [r.end for r in result.tasks if r.task in own]
    ends += [x.end for x in result.transfers]
    return max(ends, default=0.0)
