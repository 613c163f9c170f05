"""Episodes of the queue policy: training windows, sampled and greedy choosers, rewards.

An episode is one window of ``jobs`` consecutive jobs of a training period, replayed from an
empty cluster with the policy choosing (sim/batch/chosen.py). Its reward is dense and exact:
decision ``i`` is charged the waiting the queue accumulates until the next decision (the
integral of the number of waiting jobs), so the rewards of an episode add up to minus its
total wait; divided by the window's jobs times EASY's mean wait on the same window, they add
up to ``-(mean wait / EASY's)`` (waiting before the first decision, which no choice can
change, aside). ``energy_weight`` adds ``-(energy / EASY's - 1)`` times itself at the last
decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from policy.batch_gat.model import Batch, QueuePolicy
from sim.batch.chosen import DecisionView, simulate_chosen
from sim.batch.config import PowerSaving, scheduler_preset
from sim.batch.engine import simulate_batch
from sim.batch.learn import Period
from sim.batch.model import Workload
from sim.batch.result import BatchResult

MIN_WAIT_SCALE_S = 60.0
"""EASY's mean wait below this counts as this (a window where nobody waits)."""


@dataclass
class Episode:
    """One window replayed with the sampling policy."""

    period: str
    views: list[DecisionView] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    logps: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    rewards: np.ndarray = field(default_factory=lambda: np.zeros(0))
    wait_ratio: float = 1.0
    """Mean wait / EASY's on the same window."""
    energy_ratio: float = 1.0


def sample_window(periods: Sequence[Period], jobs: int, rng: np.random.Generator) -> Period:
    """``jobs`` consecutive jobs (submission order) of a random training period."""
    period = periods[int(rng.integers(len(periods)))]
    n = len(period.workload)
    first = int(rng.integers(0, max(n - jobs, 0) + 1))
    rows = np.arange(first, min(first + jobs, n))
    return Period(
        f"{period.name} jobs {first}-{rows[-1]}", period.cluster, period.workload.take(rows)
    )


class SamplingChooser:
    """Samples from the policy and records every decision (for PPO)."""

    def __init__(self, net: QueuePolicy, generator: torch.Generator, episode: Episode) -> None:
        self.net, self.generator, self.episode = net, generator, episode

    def __call__(self, view: DecisionView) -> int:
        with torch.inference_mode():
            logits, value = self.net(Batch.of([view]))
        probs = torch.softmax(logits[0], -1)
        action = int(torch.multinomial(probs, 1, generator=self.generator))
        ep = self.episode
        ep.views.append(view)
        ep.actions.append(action)
        ep.logps.append(float(torch.log(probs[action])))
        ep.values.append(float(value[0]))
        return action


class PolicyChooser:
    """The policy choosing for evaluation: sampled from its distribution with ``generator``
    (as it was trained), or its most likely job when ``generator`` is None (greedy)."""

    def __init__(self, net: QueuePolicy, generator: torch.Generator | None = None) -> None:
        self.net, self.generator = net, generator

    def __call__(self, view: DecisionView) -> int:
        with torch.inference_mode():
            logits, _ = self.net(Batch.of([view]))
        if self.generator is None:
            return int(torch.argmax(logits[0]))
        probs = torch.softmax(logits[0], -1)
        return int(torch.multinomial(probs, 1, generator=self.generator))


def replay_policy(
    net: QueuePolicy,
    period: Period,
    power_saving: PowerSaving | None = None,
    sample_seed: int | None = 0,
) -> BatchResult:
    """``period`` replayed with the policy choosing (FIFO-EASY around it): sampled with
    ``sample_seed``, or greedily when it is None."""
    net.eval()
    generator = None if sample_seed is None else torch.Generator().manual_seed(sample_seed)
    chooser = PolicyChooser(net, generator)
    return simulate_chosen(period.cluster, period.workload, chooser, net.cfg.window, power_saving)


def waiting_integral(w: Workload, result: BatchResult, times: np.ndarray) -> np.ndarray:
    """Job-seconds of waiting accumulated up to each of ``times`` (jobs wait from submission)."""
    start = np.where(result.start_s >= 0, result.start_s, result.t_end_s).astype(np.float64)
    submit = w.submit_s.astype(np.float64)
    upto = np.minimum(times[:, None], start[None, :]) - submit[None, :]
    return np.clip(upto, 0.0, None).sum(axis=1)


def run_episode(
    net: QueuePolicy,
    window: Period,
    generator: torch.Generator,
    energy_weight: float = 0.0,
    power_saving: PowerSaving | None = None,
) -> Episode:
    """Replay ``window`` with the sampling policy; rewards as the module says."""
    w = window.workload
    easy = simulate_batch(window.cluster, w, scheduler_preset("easy"), power_saving)
    ep = Episode(window.name)
    chooser = SamplingChooser(net, generator, ep)
    result = simulate_chosen(window.cluster, w, chooser, net.cfg.window, power_saving)
    easy_wait = float(np.nanmean(easy.waits_s(w)))
    wait = float(np.nanmean(result.waits_s(w)))
    ep.wait_ratio = wait / max(easy_wait, MIN_WAIT_SCALE_S)
    ep.energy_ratio = float(result.node_energy_j.sum()) / max(float(easy.node_energy_j.sum()), 1.0)
    if ep.views:
        times = np.array([v.time_s for v in ep.views] + [np.inf], np.float64)
        accrued = np.diff(waiting_integral(w, result, times))
        rewards = -accrued / (len(w) * max(easy_wait, MIN_WAIT_SCALE_S))
        rewards[-1] -= energy_weight * (ep.energy_ratio - 1.0)
        ep.rewards = rewards
    return ep
