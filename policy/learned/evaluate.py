"""Held-out evaluation of a checkpoint: makespan ratio to HEFT on instances never trained on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

import numpy as np

from policy.learned.calibration import EXACT, Setting, actual_instance
from policy.learned.instances import InstanceSpec
from policy.learned.model import PolicyNet
from policy.learned.rollout import Predictions, reference_makespan, run_episode
from sim.schedule import NetworkModel


@dataclass(frozen=True)
class RatioSummary:
    """Geometric-mean makespan ratio policy/HEFT with a 95% CI; wins/ties/losses against HEFT."""

    instances: int
    ratio_gm: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int

    @staticmethod
    def fields_of(ratios: Sequence[float]) -> dict[str, Any]:
        """The summary's fields for ``ratios`` (a tie is within 1e-9 of HEFT)."""
        gm, low, high = geometric_mean_t_ci(ratios)
        wins = sum(r < 1 - 1e-9 for r in ratios)
        losses = sum(r > 1 + 1e-9 for r in ratios)
        return {
            "instances": len(ratios),
            "ratio_gm": gm,
            "ci_low": low,
            "ci_high": high,
            "wins": wins,
            "ties": len(ratios) - wins - losses,
            "losses": losses,
        }


@dataclass(frozen=True)
class Evaluation(RatioSummary):
    """One checkpoint on held-out instances, with how much room HEFT left."""

    heft_near_bound: int
    """Instances where HEFT is within 0.2% of the lower bound: nothing left for any policy."""
    heft_over_bound_gm: float
    """Geometric mean of HEFT's makespan over the lower bound (``sim.metrics.lower_bound``)."""
    per_instance: dict[str, float]


def geometric_mean_t_ci(ratios: Sequence[float]) -> tuple[float, float, float]:
    """Geometric mean and a t-based 95% interval on the log scale."""
    logs = np.log(np.asarray(ratios, dtype=np.float64))
    mean = float(logs.mean())
    if len(logs) < 2:
        return math.exp(mean), math.exp(mean), math.exp(mean)
    from scipy import stats

    half = float(stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / math.sqrt(len(logs)))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


class EvaluationOptions(TypedDict, total=False):
    """How :func:`evaluate` and :func:`score_instances` score (see :func:`score_instances`)."""

    network_model: NetworkModel
    lookahead: int
    workers: int
    setting: Setting
    predictions: Predictions | None


def evaluate(
    net: PolicyNet, specs: Sequence[InstanceSpec], **options: Unpack[EvaluationOptions]
) -> Evaluation:
    """Greedy policy (or its lookahead) against HEFT on each spec, in the simulator."""
    return summarize_scores(specs, score_instances(net, specs, **options))


InstanceScore = tuple[float, float]
"""(policy / HEFT makespan, HEFT / lower bound) on one instance."""


def score_instances(
    net: PolicyNet,
    specs: Sequence[InstanceSpec],
    network_model: NetworkModel = "fair",
    lookahead: int = 0,
    workers: int = 1,
    setting: Setting = EXACT,
    predictions: Predictions | None = None,
) -> list[InstanceScore]:
    """Each spec's score, in the order of ``specs``; instances are independent, so an array
    task scores its block alone (:mod:`policy.learned.evaluate_array`).

    Both are scored as static plans replayed under ``network_model`` (how they are deployed).
    ``lookahead`` > 0 scores the policy with a one-step lookahead over that many candidates
    (``policy-lookahead``) instead, spread over ``workers`` processes (exact setting only).
    Under uncertainty (``setting``) both plan on estimates (the policy's calibrated by its
    retrieved ``predictions``, if any, HEFT's the user's requests) and run on actual values.
    """
    from sim.metrics import lower_bound

    known = predictions or {}
    if lookahead > 0 and not setting.exact:
        raise ValueError("the lookahead is evaluated in the exact setting only")
    if lookahead > 0:
        from concurrent.futures import ProcessPoolExecutor

        from policy.learned.lookahead import collect_lookahead

        with ProcessPoolExecutor(workers) if workers > 1 else nullcontext() as pool:
            episodes = collect_lookahead(net, specs, network_model, pool, lookahead, workers)
    else:
        episodes = [
            run_episode(net, spec, "greedy", 0, network_model, setting, known.get(spec))
            for spec in specs
        ]
    ratio_of = {ep.spec.label: ep.ratio for ep in episodes}
    scores = []
    for spec in specs:
        bound = lower_bound(*actual_instance(spec, setting))
        heft_over_bound = reference_makespan(spec, network_model, setting) / bound
        scores.append((ratio_of[spec.label], heft_over_bound))
    return scores


def summarize_scores(specs: Sequence[InstanceSpec], scores: Sequence[InstanceScore]) -> Evaluation:
    """The evaluation of ``specs`` from their scores (in the same order)."""
    per = {spec.label: ratio for spec, (ratio, _) in zip(specs, scores, strict=True)}
    heft_over_bound = [h for _, h in scores]
    return Evaluation(
        **RatioSummary.fields_of(list(per.values())),
        heft_near_bound=sum(r <= 1.002 for r in heft_over_bound),
        heft_over_bound_gm=geometric_mean_t_ci(heft_over_bound)[0],
        per_instance=per,
    )


def regime_name(ccr: float) -> str:
    return f"ccr{ccr:g}" if ccr else "native"


@dataclass(frozen=True)
class HeldOutDraw:
    """Which held-out instances an evaluation scores: ``count`` per data regime, drawn with
    ``seed`` from evaluation seeds only."""

    recipes: tuple[str, ...]
    count: int
    seed: int
    tasks: tuple[int, int]
    nodes: tuple[int, ...]
    ccrs: tuple[float, ...]
    """One regime per CCR (0: WfCommons' own file sizes)."""

    def specs(self) -> dict[str, list[InstanceSpec]]:
        """Each regime's instances, in the order they are drawn."""
        from policy.learned.instances import sample_specs

        return {
            regime_name(ccr): sample_specs(
                self.recipes,
                self.count,
                self.seed,
                self.tasks,
                self.nodes,
                evaluation=True,
                ccrs=(ccr,),
            )
            for ccr in self.ccrs
        }


def evaluate_regimes(
    net: PolicyNet, draw: HeldOutDraw, **options: Unpack[EvaluationOptions]
) -> dict[str, Evaluation]:
    """One held-out evaluation per data regime."""
    return {regime: evaluate(net, specs, **options) for regime, specs in draw.specs().items()}


@dataclass(frozen=True)
class Pooled(RatioSummary):
    """Several runs' held-out ratios in one regime, pooled; and paired against a baseline."""

    runs: int
    paired: tuple[float, float, float] | None = None
    """Geometric mean (95% CI) over instances of run / baseline, for instances both scored."""
    paired_instances: int = 0


def pool_runs(
    runs: Sequence[dict[str, dict[str, float]]],
    baseline: Sequence[dict[str, dict[str, float]]] = (),
) -> dict[str, Pooled]:
    """Pool per-instance ratios to HEFT (regime -> instance label -> ratio) across runs.

    This is how training seeds are compared: each run (a training seed) is scored on its own
    held-out instances, all of them are pooled, and a baseline (the other arm, the untrained
    prior) is compared instance by instance, pairing on the instance label. With more than one
    regime, ``all`` pools every instance of every regime as well.
    """
    regimes = list(dict.fromkeys(r for run in runs for r in run))  # first-seen order

    def ratios_of(
        group: Sequence[dict[str, dict[str, float]]], among: list[str]
    ) -> dict[tuple[str, str], float]:
        return {(r, k): v for run in group for r in among for k, v in run.get(r, {}).items()}

    pooled: dict[str, Pooled] = {}
    for name, among in [(r, [r]) for r in regimes] + [("all", regimes)] * (len(regimes) > 1):
        ratios, base = ratios_of(runs, among), ratios_of(baseline, among)
        if not ratios:
            continue
        both = [ratios[k] / base[k] for k in ratios if k in base]
        pooled[name] = Pooled(
            **RatioSummary.fields_of(list(ratios.values())),
            runs=sum(any(r in run for r in among) for run in runs),
            paired=geometric_mean_t_ci(both) if both else None,
            paired_instances=len(both),
        )
    return pooled
