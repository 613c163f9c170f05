"""Aggregate statistics over instances: geometric means with confidence intervals, ratios,
win/tie/loss counts. Pure functions of plain numbers; the bootstrap is seeded.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Estimate:
    """A geometric mean with a 95% confidence interval (``low`` <= ``value`` <= ``high``)."""

    value: float
    low: float
    high: float
    count: int

    def as_dict(self) -> dict[str, float | int]:
        return {"value": self.value, "low": self.low, "high": self.high, "count": self.count}


def geometric_mean_bootstrap_ci(
    values: Sequence[float],
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    clusters: Sequence[Hashable] = (),
) -> Estimate:
    """Geometric mean of positive ``values`` with a percentile-bootstrap interval on the logs.

    ``clusters`` (one label per value, optional): values sharing a label are resampled
    together, so the same instance measured under several loads counts as one draw, not as
    several independent ones (a cluster bootstrap; wider, and honest, when they correlate).
    With every label distinct it is the plain bootstrap, draw for draw.
    """
    logs = np.log(np.asarray(values, dtype=float))
    if logs.size == 0:
        nan = float("nan")
        return Estimate(nan, nan, nan, 0)
    centre = float(np.exp(logs.mean()))
    if logs.size == 1:
        return Estimate(centre, centre, centre, 1)
    rng = np.random.default_rng(seed)
    if len(clusters) and len(clusters) != logs.size:
        raise ValueError(f"{len(clusters)} cluster labels for {logs.size} values")
    if len(set(clusters)) not in (0, logs.size):
        means = _cluster_means(logs, clusters, rng, resamples)
    else:
        picks = rng.integers(0, logs.size, size=(resamples, logs.size))
        means = logs[picks].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return Estimate(centre, float(np.exp(low)), float(np.exp(high)), int(logs.size))


def _cluster_means(
    logs: np.ndarray, clusters: Sequence[Hashable], rng: np.random.Generator, resamples: int
) -> np.ndarray:
    """Bootstrap means of ``logs`` drawing whole clusters with replacement."""
    index = {label: k for k, label in enumerate(dict.fromkeys(clusters))}
    which = np.array([index[label] for label in clusters])
    sums = np.bincount(which, weights=logs, minlength=len(index))
    sizes = np.bincount(which, minlength=len(index)).astype(float)
    picks = rng.integers(0, len(index), size=(resamples, len(index)))
    return sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)


@dataclass(frozen=True, slots=True)
class WinTieLoss:
    wins: int
    ties: int
    losses: int

    def as_dict(self) -> dict[str, int]:
        return {"wins": self.wins, "ties": self.ties, "losses": self.losses}


def win_tie_loss(
    ours: Mapping[str, float], theirs: Mapping[str, float], rel_tol: float = 1e-6
) -> WinTieLoss:
    """Instances where ``ours`` is shorter / equal within ``rel_tol`` / longer than ``theirs``."""
    wins = ties = losses = 0
    for instance, value in ours.items():
        other = theirs.get(instance)
        if other is None:
            continue
        if math.isclose(value, other, rel_tol=rel_tol):
            ties += 1
        elif value < other:
            wins += 1
        else:
            losses += 1
    return WinTieLoss(wins, ties, losses)


def ratios(ours: Mapping[str, float], reference: Mapping[str, float]) -> list[float]:
    """``ours / reference`` on every instance both have, in instance order."""
    return [ours[i] / reference[i] for i in ours if i in reference and reference[i] > 0]


def best_per_instance(makespans: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Instance -> shortest makespan over schedulers (``makespans[scheduler][instance]``)."""
    best: dict[str, float] = {}
    for per_instance in makespans.values():
        for instance, value in per_instance.items():
            best[instance] = min(value, best.get(instance, math.inf))
    return best


def improvement_percent(baseline: float, value: float) -> float:
    """How much shorter ``value`` is than ``baseline``, in percent (negative: longer)."""
    return 100.0 * (baseline - value) / baseline
