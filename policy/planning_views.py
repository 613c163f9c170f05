"""Planning under uncertainty: plan on estimates, replay the plan on the actual values.

Shared by the bench (:mod:`policy.bench.runner`), the learned policy's settings
(:mod:`policy.learned.calibration`) and the knowledge base's estimates, so it sits with the
schedulers, below all three.

One instance becomes two views of the same execution (see :mod:`sim.uncertainty`): the
*actual* workflow and platform, realised from the nominal ones with a generator keyed by the
instance's seed only (so every estimate mode and every scheduler meets the same actuals: the
comparison is paired), and the *planning* workflow and platform the scheduler is given. A
static scheduler's plan is replayed on the actuals (placements and per-node order); a dynamic
scheduler is rolled out on the planning instance and its realised schedule replayed likewise.

``oracle`` plans on the actual values themselves, so with ``noise = 0`` it is the plain bench.
A background load (:mod:`sim.background`) holds nodes from time 0: planners start from it
(:func:`plan`) and the replay on the actuals runs on it (:func:`replay`). Both see the same
holds, with their real ends: the load's jobs are known, only the workflow's runtimes are
estimated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np

from policy.base import Scheduler, StaticScheduler
from sim.background import BackgroundConfig, draw_occupancy
from sim.engine import simulate
from sim.model import Platform, Workflow
from sim.occupancy import NO_OCCUPANCY, Occupancy
from sim.schedule import NetworkModel, SimResult, StaticSchedule
from sim.uncertainty import (
    EstimateMode,
    RuntimePredictions,
    UncertaintyConfig,
    estimate,
    node_slowdown,
    planning_platform,
    realise,
    rerun,
    typical_run,
)

REALISATION_STREAM = 0x5EED
"""Mixed into the instance seed for the realisation's generator (kept apart from the
workflow and platform generators, which take the bare seed)."""
RERUN_FIRST = 1000
"""The bench's hindsight reruns (``--reruns``) are runs ``RERUN_FIRST, RERUN_FIRST + 1, ...``
of each instance: fresh draws of the run's own variation, apart from any history's runs
1, 2, ... (:func:`~sim.uncertainty.rerun` keys a run by its number)."""
PERFECT_RUNS = 10**6
"""The earlier runs :func:`perfect_history` stands for: enough that the fitted values' own
error (``1 / runs`` of the run-to-run variance) vanishes from the guard's draws."""


@dataclass(frozen=True)
class Views:
    """The planning and the actual side of one instance, and the cluster's occupancy."""

    planning: tuple[Workflow, Platform]
    actual: tuple[Workflow, Platform]
    occupancy: Occupancy = NO_OCCUPANCY
    predictions: RuntimePredictions | None = None
    """The instance's retrieved predictions, when the bench has them (``--kb``)."""
    calibrated: bool = False
    """Whether ``planning`` already applies ``predictions`` (``kb`` estimates)."""


@runtime_checkable
class UsesPredictions(Protocol):
    """A scheduler that plans with retrieved runtime predictions itself (the RAG policy)."""

    def with_predictions(self, predictions: RuntimePredictions, calibrated: bool) -> Scheduler: ...


def instance_views(
    workflow: Workflow,
    platform: Platform,
    seed: int,
    mode: EstimateMode,
    cfg: UncertaintyConfig,
    predictions: RuntimePredictions | None = None,
    background: BackgroundConfig | None = None,
    run: int = 0,
) -> Views:
    """Realise ``workflow`` on ``platform`` (seeded by ``seed``) and derive the planning view.

    ``run``: which run of the instance (:func:`~sim.uncertainty.rerun`); the bench measures
    run 0, a recurring workflow's history holds runs 1, 2, ...
    """
    rng = np.random.default_rng([seed, REALISATION_STREAM, cfg.seed])
    actual_wf, actual_pf = realise(workflow, platform, cfg, rng)
    actual_wf = rerun(actual_wf, cfg, seed, run)
    if mode == "oracle":
        planning = (actual_wf, actual_pf)
    else:
        plan_pf = planning_platform(platform, predictions if mode == "kb" else None)
        planning = (estimate(workflow, cfg, mode, predictions), plan_pf)
    busy = Occupancy()
    if background is not None:
        busy = draw_occupancy(actual_wf, actual_pf, background, seed)
    kept = predictions if mode != "oracle" else None
    return Views(planning, (actual_wf, actual_pf), busy, kept, mode == "kb")


def perfect_history(
    workflow: Workflow, platform: Platform, seed: int, cfg: UncertaintyConfig
) -> RuntimePredictions:
    """What a history of infinitely many earlier runs of this instance would predict: each
    task's typical runtime (:func:`~sim.uncertainty.typical_run`) and each node's slowdown,
    exactly. Only the measured run's own variation (``run_sigma``) stays unknown, and the file
    sizes stay nominal as in every estimate mode: the bound on what retrieval can give
    (``wass-chat bench --perfect-history``) and the floor of what judging on draws can avoid.
    """
    actual_wf, _ = instance_views(workflow, platform, seed, "oracle", cfg).actual
    typical = typical_run(actual_wf, cfg, seed)
    return RuntimePredictions(
        tasks={t.id: t.runtime for t in typical.tasks},
        nodes={n.name: node_slowdown(cfg, platform, n) for n in platform.nodes},
        task_log_spread=cfg.run_sigma,
        runs=PERFECT_RUNS,
    )


def plan(scheduler: Scheduler, views: Views, network_model: NetworkModel) -> StaticSchedule:
    """``scheduler``'s static plan made on the planning view, starting from its occupancy."""
    workflow, platform = views.planning
    if views.predictions is not None and isinstance(scheduler, UsesPredictions):
        scheduler = scheduler.with_predictions(views.predictions, views.calibrated)
    if isinstance(scheduler, StaticScheduler):
        return scheduler.schedule(workflow, platform, views.occupancy)
    rollout = simulate(workflow, platform, scheduler, network_model, views.occupancy)
    realised = rollout.to_schedule()
    return StaticSchedule(realised.assignment, realised.order, scheduler.name, rollout.makespan)


def reruns(views: Views, cfg: UncertaintyConfig, seed: int, count: int) -> list[Workflow]:
    """``count`` fresh runs of the instance whose run 0 is ``views.actual``: the same
    workflow, files and nodes, each task's runtime redrawn around its typical value with
    ``run_sigma`` (:func:`~sim.uncertainty.rerun`). A plan's mean makespan over them is what
    it gives on average; run 0's makespan is one draw of that, luck included."""
    actual = views.actual[0]
    return [rerun(actual, cfg, seed, RERUN_FIRST + r) for r in range(count)]


def expected_makespan(
    schedule: StaticSchedule,
    views: Views,
    runs: list[Workflow],
    network_model: NetworkModel,
) -> float:
    """Mean makespan of ``schedule`` :func:`replay`-ed on each of ``runs`` (:func:`reruns`),
    on the actual nodes and the views' occupancy."""
    platform = views.actual[1]
    spans = [replay(schedule, replace(views, actual=(w, platform)), network_model)[1] for w in runs]
    return float(np.mean(spans))


def replay(
    schedule: StaticSchedule, views: Views, network_model: NetworkModel
) -> tuple[SimResult, float]:
    """Run ``schedule`` on the actual view, busy with the views' occupancy; also the makespan
    (the workflow's own: the load's jobs are not among its records)."""
    workflow, platform = views.actual
    result = simulate(workflow, platform, schedule, network_model, views.occupancy)
    return result, result.makespan
