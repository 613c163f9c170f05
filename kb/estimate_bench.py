"""The bench's ``kb`` estimates: history seeding, per-instance predictions, estimate errors.

Glue between the bench matrix (:mod:`policy.bench`) and the knowledge base (:mod:`kb`), which
``policy`` may not import: the history is the same recipes and platform kinds as the bench
under seeds the bench never uses (``first_seed`` onwards), realised with the same
:class:`~sim.uncertainty.UncertaintyConfig`; each bench instance gets the predictions its
retrieved cases make, computed here in the parent process and handed to the workers as data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kb.estimates import RECURRING_HISTORY, retrieve_predictions, seed_history
from kb.store import KnowledgeBase
from policy.bench.matrix import Instance, PlatformSource, WorkflowSource, build_matrix
from policy.bench.stats import geometric_mean_bootstrap_ci
from policy.planning_views import instance_views
from sim.uncertainty import RuntimePredictions, UncertaintyConfig, estimate_error

HISTORY_FIRST_SEED = 1000
"""History instances take seeds from here on; bench instances use 0..N-1."""
ERROR_MODES: tuple[str, ...] = ("user", "mean", "kb")


def history_matrix(
    workflows: list[WorkflowSource],
    platforms: list[PlatformSource],
    seeds: int,
    first_seed: int = HISTORY_FIRST_SEED,
) -> list[Instance]:
    """Every workflow x platform under seeds ``first_seed .. first_seed + seeds - 1``."""
    base = build_matrix(workflows, platforms, seeds)
    return [Instance(i.workflow, i.platform, i.seed + first_seed) for i in base]


def fill_history(
    kb: KnowledgeBase,
    instances: Sequence[Instance],
    cfg: UncertaintyConfig,
    progress: Callable[[int], None] | None = None,
    runs: int = 0,
) -> int:
    """Realised executions of every history instance into ``kb``; returns cases added.

    ``runs`` = 0: one execution each (run 0). ``runs`` = K: runs 1..K of each instance, the
    earlier runs of a recurring workflow (the bench measures run 0 of its instances, so with
    the bench's own seeds this is their history, never the execution it measures).
    """
    built = [
        (f"realised;{i.id}", i.workflow.build(i.seed), i.platform.build(i.seed), i.seed)
        for i in instances
    ]
    return seed_history(kb, built, cfg, progress, range(1, runs + 1) if runs else (0,))


def instance_predictions(
    kb: KnowledgeBase, instances: Sequence[Instance], cfg: UncertaintyConfig, k: int = 8
) -> dict[str, RuntimePredictions]:
    """Instance id -> the runtime predictions of its ``k`` most similar stored executions.

    The query is the instance as submitted: its user requests on its nominal platform.
    """
    found = {}
    wider = kb.recurring_cases(RECURRING_HISTORY)  # the same for every instance: read once
    for instance in instances:
        workflow = instance.workflow.build(instance.seed)
        platform = instance.platform.build(instance.seed)
        views = instance_views(workflow, platform, instance.seed, "user", cfg)
        found[instance.id] = retrieve_predictions(kb, views.planning[0], platform, k, wider)
    return found


def estimate_errors(
    instances: Sequence[Instance],
    cfg: UncertaintyConfig,
    predictions: dict[str, RuntimePredictions],
) -> dict[str, Any]:
    """Per estimate mode: MAPE of planned over actual compute time per (task, node) pair,
    the geometric mean of the per-instance bias, and a 95% CI of the mean MAPE over instances.
    """
    per_mode: dict[str, list[dict[str, float]]] = {m: [] for m in ERROR_MODES}
    for instance in instances:
        workflow = instance.workflow.build(instance.seed)
        platform = instance.platform.build(instance.seed)
        for mode in ERROR_MODES:
            views = instance_views(
                workflow,
                platform,
                instance.seed,
                mode,  # type: ignore[arg-type]
                cfg,
                predictions.get(instance.id),
            )
            per_mode[mode].append(estimate_error(views.planning, views.actual))
    summary: dict[str, Any] = {"instances": len(instances)}
    for mode, rows in per_mode.items():
        mapes = [r["mape"] for r in rows]
        summary[mode] = {
            "mape": float(np.mean(mapes)),
            "mape_ci": _mean_ci(mapes),
            "median_abs_log_ratio": float(np.median([r["median_abs_log_ratio"] for r in rows])),
            "bias": geometric_mean_bootstrap_ci([r["bias"] for r in rows]).as_dict(),
        }
    return summary


def _mean_ci(values: list[float], resamples: int = 2000, seed: int = 0) -> list[float]:
    """Percentile-bootstrap 95% interval of the arithmetic mean (seeded)."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return [float(data.mean()), float(data.mean())] if data.size else [np.nan, np.nan]
    picks = np.random.default_rng(seed).integers(0, data.size, size=(resamples, data.size))
    low, high = np.quantile(data[picks].mean(axis=1), [0.025, 0.975])
    return [float(low), float(high)]
