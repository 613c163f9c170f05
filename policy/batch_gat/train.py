"""PPO for the queue policy (clipped objective, GAE), readable top to bottom.

Each update replays ``windows_per_update`` sampled training windows with the sampling
policy, computes GAE advantages from the dense wait rewards and the critic's values, and
runs ``epochs`` passes of clipped PPO over shuffled minibatches of decisions. The budget is a
number of updates (steps), never wall-clock time; everything is seeded (numpy for the
windows, a torch generator for the actions, torch's global seed for the initial weights and
the minibatch order), so the same seed and budget give the same weights.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from policy.batch_gat.imitate import cem_decisions, clone
from policy.batch_gat.model import Batch, NetConfig, QueuePolicy
from policy.batch_gat.rollout import Episode, run_episode, sample_window
from policy.ppo import PPOCoefficients
from policy.ppo import ppo_update as shared_ppo_update
from sim.batch.learn import Period


@dataclass(frozen=True)
class PPOConfig:
    """The training budget and PPO's knobs."""

    updates: int = 60
    """PPO updates (the step budget)."""
    windows_per_update: int = 4
    window_jobs: int = 400
    """Jobs per training window (consecutive, replayed from an empty cluster)."""
    epochs: int = 4
    minibatch: int = 256
    lr: float = 1e-3
    clip: float = 0.2
    gamma: float = 0.995
    lam: float = 0.95
    entropy: float = 0.01
    value_coef: float = 0.5
    max_grad_norm: float = 0.5
    energy_weight: float = 0.0
    imitation_windows: int = 0
    """Warm start: windows replayed with the linear order choosing, cloned before PPO (0: none)."""
    imitation_epochs: int = 8
    seed: int = 0
    net: NetConfig = field(default_factory=NetConfig)


def gae(ep: Episode, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and value targets of one episode (the last decision is terminal)."""
    n = len(ep.actions)
    values = np.asarray(ep.values, np.float64)
    adv = np.zeros(n)
    last = 0.0
    for t in reversed(range(n)):
        next_value = values[t + 1] if t + 1 < n else 0.0
        delta = ep.rewards[t] + gamma * next_value - values[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv, adv + values


def ppo_update(
    net: QueuePolicy, opt: torch.optim.Optimizer, episodes: list[Episode], cfg: PPOConfig
) -> dict[str, float]:
    """Clipped PPO (:func:`policy.ppo.ppo_update`) over every decision of ``episodes``, in
    minibatches of single decisions; the last minibatch's losses."""
    views = [v for ep in episodes for v in ep.views]
    if not views:
        return {}
    parts = [gae(ep, cfg.gamma, cfg.lam) for ep in episodes if ep.views]
    adv = np.concatenate([a for a, _ in parts])
    actions = torch.tensor([a for ep in episodes for a in ep.actions])

    def minibatches() -> Iterator[tuple[np.ndarray, list[int]]]:
        order = torch.randperm(len(views))
        for lo in range(0, len(views), cfg.minibatch):
            idx = order[lo : lo + cfg.minibatch].tolist()
            yield np.asarray(idx), idx

    def evaluate(idx: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, values = net(Batch.of([views[i] for i in idx]))
        logp_all = torch.log_softmax(logits, -1)
        logp = logp_all.gather(1, actions[idx].unsqueeze(1)).squeeze(1)
        entropy = -(logp_all.exp() * logp_all).masked_fill(~net_mask(logits), 0.0).sum(-1)
        return logp, entropy, values

    return shared_ppo_update(
        net,
        opt,
        minibatches,
        evaluate,
        np.array([lp for ep in episodes for lp in ep.logps], dtype=np.float32),
        (adv - adv.mean()) / (adv.std() + 1e-8),
        np.concatenate([r for _, r in parts]),
        PPOCoefficients(
            cfg.epochs, cfg.clip, cfg.value_coef, cfg.entropy, cfg.max_grad_norm, value_scale=1.0
        ),
    )


def net_mask(logits: torch.Tensor) -> torch.Tensor:
    """The valid choices behind masked logits."""
    return logits > torch.finfo(logits.dtype).min


def train(
    periods: Sequence[Period],
    cfg: PPOConfig | None = None,
    progress: Callable[[int, dict[str, float]], None] | None = None,
) -> tuple[QueuePolicy, dict[str, Any]]:
    """Train a fresh policy on windows of ``periods``; returns it and the training record."""
    cfg = cfg or PPOConfig()
    torch.set_num_threads(1)  # one core of a shared machine, and the same sums every run
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    generator = torch.Generator().manual_seed(cfg.seed)
    net = QueuePolicy(cfg.net)
    net.eval()
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    began = time.process_time()
    imitation: dict[str, float] = {}
    if cfg.imitation_windows:
        windows = [
            sample_window(periods, cfg.window_jobs, rng) for _ in range(cfg.imitation_windows)
        ]
        views, actions = cem_decisions(windows, cfg.net.window)
        agree = clone(net, opt, views, actions, cfg.imitation_epochs, cfg.minibatch)
        imitation = {"decisions": float(len(views)), "agreement": agree}
    history = []
    decisions = 0
    for update in range(1, cfg.updates + 1):
        windows = [
            sample_window(periods, cfg.window_jobs, rng) for _ in range(cfg.windows_per_update)
        ]
        episodes = [run_episode(net, w, generator, cfg.energy_weight) for w in windows]
        decisions += sum(len(ep.actions) for ep in episodes)
        stats = ppo_update(net, opt, episodes, cfg)
        stats["wait_ratio"] = float(
            np.exp(np.mean([np.log(max(ep.wait_ratio, 1e-6)) for ep in episodes]))
        )
        stats["decisions"] = float(sum(len(ep.actions) for ep in episodes))
        history.append(stats)
        if progress is not None:
            progress(update, stats)
    record: dict[str, Any] = {
        "config": asdict(cfg),
        "updates": cfg.updates,
        "episodes": cfg.updates * cfg.windows_per_update,
        "decisions": decisions,
        "train_cpu_s": time.process_time() - began,
        "history": history,
        "imitation": imitation,
        "parameters": sum(p.numel() for p in net.parameters()),
    }
    return net, record
