"""Calibrated runtime estimates from past executions: retrieval as the source of ``kb`` estimates.

The knowledge base holds *realised* executions: each case records the workflow as it was
submitted (every task's work set from the user's walltime request, which is all a submitter
knows), the nominal platform, and the timeline the (noisy) execution actually produced. From
the cases retrieved for a new workflow, :func:`predict_runtimes` fits a two-way multiplicative
model on the observed compute times: ``observed = runtime[category] * slowdown[node class]``
(in log space, alternating medians, which resists outliers), with the per-category spread of the
residuals. :mod:`sim.uncertainty` turns that into the workflow and platform a scheduler plans on.

:func:`seed_history` fills a store with such executions (HEFT planned on the user requests and
replayed on the realised values, the situation a cluster records day to day).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kb.records import CaseRecord, case_from_result
from kb.store import KnowledgeBase
from policy.bench.uncertain import instance_views, replay
from policy.heft import HEFT
from sim.model import REFERENCE_SPEED, Platform, Workflow
from sim.schedule import NetworkModel
from sim.uncertainty import (
    CategoryPrediction,
    RuntimePredictions,
    UncertaintyConfig,
    node_class,
    task_category,
)

REALISED = "simulated-realised"
"""Source of the cases :func:`seed_history` stores (simulated, with realised noise)."""
FIT_ROUNDS = 6
"""Alternations of the two-way median fit (it settles within a few)."""


@dataclass(frozen=True, slots=True)
class Observation:
    """One task's compute time in a past execution, in reference-machine seconds."""

    category: str
    node_class: str
    log_runtime: float
    log_request: float


def observations(case: CaseRecord) -> list[Observation]:
    """Every task of ``case`` with a positive recorded compute time.

    A task that ran ``d`` seconds on a node of nominal per-core speed ``s`` would have taken
    ``d * s / REFERENCE_SPEED`` on the reference machine if the node met its specification; the
    node class's slowdown is what the fit separates from that.
    """
    nodes = case.platform.node_by_name
    tasks = case.workflow.task_by_id
    found = []
    for task_id, (_ready, start, end) in case.timeline.items():
        task = tasks.get(task_id)
        node = nodes.get(case.placements.get(task_id, ""))
        if task is None or node is None or end <= start or task.runtime <= 0:
            continue
        runtime = (end - start) * node.speed / REFERENCE_SPEED
        found.append(
            Observation(
                task_category(task), node_class(node), math.log(runtime), math.log(task.runtime)
            )
        )
    return found


def predict_runtimes(cases: Sequence[CaseRecord], min_samples: int = 2) -> RuntimePredictions:
    """Per-category runtime and spread, per-class slowdown, from realised ``cases``.

    Categories seen fewer than ``min_samples`` times are left out (the caller falls back to
    the user request times :attr:`RuntimePredictions.request_ratio`).
    """
    obs = [o for c in cases for o in observations(c)]
    if not obs:
        return RuntimePredictions(cases=len(cases))
    log_class = {o.node_class: 0.0 for o in obs}
    log_cat: dict[str, float] = {}
    for _ in range(FIT_ROUNDS):
        log_cat = _medians((o.category, o.log_runtime - log_class[o.node_class]) for o in obs)
        log_class = _medians((o.node_class, o.log_runtime - log_cat[o.category]) for o in obs)
    residuals: dict[str, list[float]] = defaultdict(list)
    for o in obs:
        residuals[o.category].append(o.log_runtime - log_cat[o.category] - log_class[o.node_class])
    categories = {
        c: CategoryPrediction(math.exp(log_cat[c]), float(np.std(r)), len(r))
        for c, r in residuals.items()
        if len(r) >= min_samples
    }
    ratio = float(np.median([o.log_runtime - o.log_request for o in obs]))
    return RuntimePredictions(
        categories=categories,
        node_classes={k: math.exp(v) for k, v in log_class.items()},
        request_ratio=math.exp(ratio),
        cases=len(cases),
    )


def _medians(pairs: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Key -> median of its values."""
    groups: dict[str, list[float]] = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    return {k: float(np.median(v)) for k, v in groups.items()}


def retrieve_predictions(
    kb: KnowledgeBase, request: Workflow, platform: Platform, k: int = 8
) -> RuntimePredictions:
    """Predictions from the ``k`` stored executions most similar to ``request`` on ``platform``.

    ``request`` is the workflow as submitted (user walltimes), the same view the stored cases
    were recorded with, so the query compares like with like.
    """
    hits = kb.query(request, platform, k)
    records = [h.record for h in hits]
    return predict_runtimes([r for r in records if r is not None])


def realised_case(
    workflow: Workflow,
    platform: Platform,
    seed: int,
    cfg: UncertaintyConfig,
    workflow_key: str,
    network_model: NetworkModel = "fair",
) -> CaseRecord:
    """One day-to-day execution: HEFT plans on the user's requests, the realised values run.

    The realisation is the bench's for ``seed`` (:func:`policy.bench.uncertain.instance_views`),
    so history and bench draw from the same model; history uses seeds the bench never does.
    """
    views = instance_views(workflow, platform, seed, "user", cfg)
    request, _ = views.planning
    schedule = HEFT().schedule(request, platform)
    result, _ = replay(schedule, views, network_model)
    return case_from_result(
        request, platform, result, workflow_key=workflow_key, source=REALISED,
        recorded_at="1970-01-01T00:00:00+00:00", scheduler_name="heft",
    )  # fmt: skip


Progress = Callable[[int], None]


def seed_history(
    kb: KnowledgeBase,
    instances: Sequence[tuple[str, Workflow, Platform, int]],
    cfg: UncertaintyConfig,
    progress: Progress | None = None,
) -> int:
    """Store one realised execution per ``(key, workflow, platform, seed)``; returns cases added."""
    added = 0
    for key, workflow, platform, seed in instances:
        case = realised_case(workflow, platform, seed, cfg, key)
        added += kb.add_cases([case])
        if progress:
            progress(1)
    return added
