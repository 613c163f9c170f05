"""Held-out evaluation of a checkpoint: makespan ratio to HEFT on instances never trained on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from policy.learned.agent import LearnedPolicy
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.model import PolicyNet
from policy.learned.rollout import reference_makespan
from sim.schedule import NetworkModel


@dataclass(frozen=True)
class Evaluation:
    """Geometric-mean makespan ratio policy/HEFT with a 95% confidence interval."""

    instances: int
    ratio_gm: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int
    per_instance: dict[str, float]


def geometric_mean_ci(ratios: Sequence[float]) -> tuple[float, float, float]:
    """Geometric mean and a t-based 95% interval on the log scale."""
    logs = np.log(np.asarray(ratios, dtype=np.float64))
    mean = float(logs.mean())
    if len(logs) < 2:
        return math.exp(mean), math.exp(mean), math.exp(mean)
    from scipy import stats

    half = float(stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / math.sqrt(len(logs)))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def evaluate(
    net: PolicyNet, specs: Sequence[InstanceSpec], network_model: NetworkModel = "fair"
) -> Evaluation:
    """Greedy policy against noise-free HEFT on each spec, in the simulator.

    Both are scored as static plans replayed under ``network_model`` (how they are deployed).
    """
    from sim.engine import simulate

    per: dict[str, float] = {}
    for spec in specs:
        workflow, platform = materialize(spec)
        rollout = simulate(workflow, platform, LearnedPolicy(net), network_model)
        made = simulate(workflow, platform, rollout.to_schedule(), network_model).makespan
        per[spec.label] = made / reference_makespan(spec, network_model)
    ratios = list(per.values())
    gm, low, high = geometric_mean_ci(ratios)
    wins = sum(r < 1 - 1e-9 for r in ratios)
    losses = sum(r > 1 + 1e-9 for r in ratios)
    return Evaluation(len(ratios), gm, low, high, wins, len(ratios) - wins - losses, losses, per)


def regime_name(ccr: float) -> str:
    return f"ccr{ccr:g}" if ccr else "native"


def evaluate_regimes(
    net: PolicyNet,
    recipes: tuple[str, ...],
    count: int,
    seed: int,
    tasks: tuple[int, int],
    nodes: tuple[int, ...],
    ccrs: tuple[float, ...],
    network_model: NetworkModel = "fair",
) -> dict[str, Evaluation]:
    """One held-out evaluation per data regime (instances from evaluation seeds only)."""
    from policy.learned.instances import sample_specs

    return {
        regime_name(ccr): evaluate(
            net,
            sample_specs(recipes, count, seed, tasks, nodes, evaluation=True, ccrs=(ccr,)),
            network_model,
        )
        for ccr in ccrs
    }
