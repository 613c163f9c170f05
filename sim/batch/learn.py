"""A learned job scheduler: the queue order's priority weights fitted on past periods.

What it is, honestly: not the graph-attention actor-critic the issue's seeds describe, but
the smallest learned policy that can be trained in this simulator and checked on held-out
periods. The policy is a linear score over four job features the multifactor priority
already has (age, the user's fair share, size) plus one it lacks (log2 of the runtime
estimate); EASY backfill stays on. The weights are fitted by the cross-entropy method
(Rubinstein 1999; as in Szita and Lorincz 2006): sample weight vectors from a Gaussian,
replay every training period with each, refit the Gaussian to the best, repeat. The reward
weighs wait against energy: per period, mean wait over EASY's mean wait plus
``energy_weight`` times facility energy over EASY's. It recommends a configuration; it never
replaces Slurm's scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sim.batch.config import PowerSaving, PriorityWeights, SchedulerConfig, scheduler_preset
from sim.batch.energy import PowerModel
from sim.batch.engine import simulate_batch
from sim.batch.metrics import summarise
from sim.batch.model import BatchCluster, Workload
from sim.batch.result import BatchResult

FEATURES = ("age", "fairshare", "job_size", "estimate")
WEIGHT_BOUND = 10_000
DEFAULT_RUN_WEIGHTS = {"age": 2, "fairshare": 143, "job_size": -1797, "estimate": -2603}
"""The weights ``wass-chat whatif learn`` fits with its defaults (docs/cluster-whatif.md): the
cross-entropy baseline the graph-attention policy is compared with."""


@dataclass(frozen=True)
class Period:
    """One replayable period of one workload."""

    name: str
    cluster: BatchCluster
    workload: Workload


@dataclass(frozen=True)
class LearnConfig:
    """The training budget and the reward."""

    generations: int = 8
    """Cross-entropy iterations."""
    population: int = 10
    """Weight vectors sampled per iteration."""
    elite: int = 3
    """Best vectors the next Gaussian is fitted to."""
    energy_weight: float = 0.0
    """How much facility energy counts against wait in the reward (0: wait only)."""
    power_saving: PowerSaving | None = None
    """Replay with power saving (energy then depends on the order)."""
    seed: int = 0


def policy_config(weights: Sequence[float]) -> SchedulerConfig:
    """EASY backfill with the given (age, fairshare, job_size, estimate) weights."""
    age, fairshare, job_size, estimate = (round(float(v)) for v in weights)
    learned = PriorityWeights(age=age, fairshare=fairshare, job_size=job_size, estimate=estimate)
    return replace(scheduler_preset("easy"), weights=learned)


WIDE_NODES = 16
"""Jobs on more nodes than this are 'wide': the ones a short-and-small-first order delays."""


def replay_figures(
    period: Period, cfg: SchedulerConfig, lc: LearnConfig, model: PowerModel
) -> tuple[float, float, float, float]:
    """(mean wait, facility kWh, p95 wait, mean wait of wide jobs) of one period."""
    result = simulate_batch(period.cluster, period.workload, cfg, lc.power_saving, model)
    return result_figures(period, result, model)


def result_figures(
    period: Period, result: BatchResult, model: PowerModel
) -> tuple[float, float, float, float]:
    """:func:`replay_figures` of a replay made elsewhere (a learned policy's)."""
    w = period.workload
    s = summarise(period.cluster, w, result, model)
    wide = result.waits_s(w)[w.nnodes > WIDE_NODES]
    wide_mean = float(wide.mean()) if len(wide) else 0.0
    return s["waits"]["mean_s"], s["energy"]["facility_kwh"], s["waits"]["p95_s"], wide_mean


def train(
    periods: Sequence[Period],
    lc: LearnConfig | None = None,
    model: PowerModel | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> dict[str, Any]:
    """Fit the weights on ``periods``; returns them with the reward history."""
    lc = lc or LearnConfig()
    model = model or PowerModel()
    rng = np.random.default_rng(lc.seed)
    reference = [replay_figures(p, scheduler_preset("easy"), lc, model) for p in periods]

    def reward(weights: np.ndarray) -> float:
        total = 0.0
        for period, (wait0, energy0, _, _) in zip(periods, reference, strict=True):
            wait, energy, _, _ = replay_figures(period, policy_config(weights.tolist()), lc, model)
            total += wait / max(wait0, 1.0) + lc.energy_weight * energy / max(energy0, 1e-9)
        return total / len(periods)

    mean = np.zeros(len(FEATURES))
    std = np.full(len(FEATURES), WEIGHT_BOUND / 3)
    best, best_reward = mean.copy(), reward(mean)
    history = [best_reward]
    for generation in range(lc.generations):
        samples = np.clip(
            rng.normal(mean, std, size=(lc.population, len(FEATURES))), -WEIGHT_BOUND, WEIGHT_BOUND
        )
        rewards = np.array([reward(x) for x in samples])
        order = np.argsort(rewards, kind="stable")
        elite = samples[order[: lc.elite]]
        mean, std = elite.mean(axis=0), np.maximum(elite.std(axis=0), 50.0)
        if rewards[order[0]] < best_reward:
            best, best_reward = samples[order[0]].copy(), float(rewards[order[0]])
        history.append(best_reward)
        if progress:
            progress(generation + 1, best_reward)
    return {
        "weights": dict(zip(FEATURES, (round(v) for v in best), strict=True)),
        "train_reward": best_reward,
        "history": history,
        "replays": 1 + lc.generations * lc.population,
    }


def evaluate(
    periods: Sequence[Period],
    weights: dict[str, int] | None,
    lc: LearnConfig | None = None,
    model: PowerModel | None = None,
    seed: int = 0,
    learned_replay: Callable[[Period], BatchResult] | None = None,
    extra_baselines: dict[str, SchedulerConfig | Callable[[Period], BatchResult]] | None = None,
) -> dict[str, Any]:
    """The learned order against FIFO, SJF and EASY on ``periods``: per period figures, and
    per baseline the geometric-mean ratio (learned / baseline) with a 95% bootstrap CI over
    periods and wins/ties/losses, for the mean wait (what it was trained on), energy, the
    95th percentile wait and the mean wait of wide jobs (what such an order may sacrifice).

    The learned schedule is the priority ``weights`` (the cross-entropy one) or, when given,
    ``learned_replay``'s (another learned policy); ``extra_baselines`` (scheduler configs, or
    functions replaying a period) are compared too."""
    lc = lc or LearnConfig()
    model = model or PowerModel()
    schedulers: dict[str, SchedulerConfig | Callable[[Period], BatchResult]] = {
        "fifo": scheduler_preset("fifo"),
        "sjf": scheduler_preset("sjf"),
        "easy": scheduler_preset("easy"),
        **(extra_baselines or {}),
    }
    if learned_replay is None:
        if weights is None:
            raise ValueError("evaluate needs weights or a learned_replay")
        schedulers["learned"] = policy_config([weights[k] for k in FEATURES])
    rows = []
    for period in periods:
        figures = {
            name: replay_figures(period, how, lc, model)
            if isinstance(how, SchedulerConfig)
            else result_figures(period, how(period), model)
            for name, how in schedulers.items()
        }
        if learned_replay is not None:
            figures["learned"] = result_figures(period, learned_replay(period), model)
        row: dict[str, Any] = {"period": period.name}
        for n, f in figures.items():
            row.update(
                {
                    f"{n}_wait_s": f[0],
                    f"{n}_kwh": f[1],
                    f"{n}_p95_s": f[2],
                    f"{n}_wide_wait_s": f[3],
                }
            )
        rows.append(row)
    rng = np.random.default_rng(seed)
    comparison = {}
    for base in (name for name in schedulers if name != "learned"):
        comparison[base] = {
            key: _paired(
                np.array([r[f"learned_{col}"] for r in rows]),
                np.array([r[f"{base}_{col}"] for r in rows]),
                rng,
            )
            for key, col in (
                ("wait", "wait_s"),
                ("energy", "kwh"),
                ("p95_wait", "p95_s"),
                ("wide_wait", "wide_wait_s"),
            )
        }
    return {"periods": rows, "learned_vs": comparison}


def _paired(
    learned: np.ndarray, base: np.ndarray, rng: np.random.Generator, tie: float = 0.005
) -> dict[str, Any]:
    ratio = np.maximum(learned, 1e-9) / np.maximum(base, 1e-9)
    logs = np.log(ratio)
    draws = rng.integers(0, len(logs), size=(2000, len(logs)))
    low, high = np.exp(np.percentile(logs[draws].mean(axis=1), [2.5, 97.5]))
    return {
        "geomean_ratio": float(np.exp(logs.mean())),
        "ci95": [float(low), float(high)],
        "wins": int((ratio < 1 - tie).sum()),
        "ties": int((np.abs(ratio - 1) <= tie).sum()),
        "losses": int((ratio > 1 + tie).sum()),
    }
