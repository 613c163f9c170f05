"""The bench under uncertainty: plan on estimates, replay the plan on the actual values.

One instance becomes two views of the same execution (see :mod:`sim.uncertainty`): the
*actual* workflow and platform, realised from the nominal ones with a generator keyed by the
instance's seed only (so every estimate mode and every scheduler meets the same actuals: the
comparison is paired), and the *planning* workflow and platform the scheduler is given. A
static scheduler's plan is replayed on the actuals (placements and per-node order); a dynamic
scheduler is rolled out on the planning instance and its realised schedule replayed likewise.

``oracle`` plans on the actual values themselves, so with ``noise = 0`` it is the plain bench.
A background load (:mod:`sim.background`) occupies nodes from time 0 in the actual run and, as
node ready times, in what planners are told when they can take it (see :func:`plan`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from policy.base import Scheduler, StaticScheduler
from sim.background import BackgroundConfig, draw_background, occupy, workflow_makespan
from sim.engine import simulate
from sim.model import Platform, Workflow
from sim.schedule import NetworkModel, SimResult, StaticSchedule
from sim.uncertainty import (
    EstimateMode,
    RuntimePredictions,
    UncertaintyConfig,
    estimate,
    planning_platform,
    realise,
)

REALISATION_STREAM = 0x5EED
"""Mixed into the instance seed for the realisation's generator (kept apart from the
workflow and platform generators, which take the bare seed)."""
BACKGROUND_STREAM = 0xB05


@dataclass(frozen=True)
class Views:
    """The planning and the actual side of one instance, and the nodes' busy-until times."""

    planning: tuple[Workflow, Platform]
    actual: tuple[Workflow, Platform]
    busy_until: Mapping[str, float]


def instance_views(
    workflow: Workflow,
    platform: Platform,
    seed: int,
    mode: EstimateMode,
    cfg: UncertaintyConfig,
    predictions: RuntimePredictions | None = None,
    background: BackgroundConfig | None = None,
) -> Views:
    """Realise ``workflow`` on ``platform`` (seeded by ``seed``) and derive the planning view."""
    rng = np.random.default_rng([seed, REALISATION_STREAM, cfg.seed])
    actual_wf, actual_pf = realise(workflow, platform, cfg, rng)
    if mode == "oracle":
        planning = (actual_wf, actual_pf)
    else:
        plan_pf = planning_platform(platform, predictions if mode == "kb" else None)
        planning = (estimate(workflow, cfg, mode, predictions), plan_pf)
    busy: Mapping[str, float] = {}
    if background is not None and background.busy_share > 0:
        busy = draw_background(
            actual_wf, actual_pf, background, np.random.default_rng([seed, BACKGROUND_STREAM])
        )
    return Views(planning, (actual_wf, actual_pf), busy)


def plan(scheduler: Scheduler, views: Views, network_model: NetworkModel) -> StaticSchedule:
    """``scheduler``'s static plan made on the planning view.

    Planners do not see the background load yet: :class:`~policy.plan.Plan` and the engine
    have no node-ready-time hook (see docs/learned.md, "A busy cluster").
    """
    workflow, platform = views.planning
    if isinstance(scheduler, StaticScheduler):
        return scheduler.schedule(workflow, platform)
    rollout = simulate(workflow, platform, scheduler, network_model)
    realised = rollout.to_schedule()
    return StaticSchedule(realised.assignment, realised.order, scheduler.name, rollout.makespan)


def replay(
    schedule: StaticSchedule, views: Views, network_model: NetworkModel
) -> tuple[SimResult, float]:
    """Run ``schedule`` on the actual view (with its background load); also the workflow's own
    makespan, which leaves the background jobs out."""
    workflow, platform = views.actual
    if not views.busy_until:
        result = simulate(workflow, platform, schedule, network_model)
        return result, result.makespan
    loaded_wf, loaded_schedule = occupy(workflow, platform, schedule, views.busy_until)
    result = simulate(loaded_wf, platform, loaded_schedule, network_model)
    return result, workflow_makespan(result, workflow)
