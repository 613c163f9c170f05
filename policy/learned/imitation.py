"""Imitation of the one-step lookahead expert (expert iteration), and the loss it uses.

Each round, the lookahead over the current network (:mod:`policy.learned.lookahead`) labels a
few training instances; the network is then fitted to every label collected so far (as in
DAgger), and the next round's expert searches over the improved network (Anthony et al. 2017,
"Thinking fast and slow with deep learning and tree search").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch
from torch import nn

from policy.learned.config import TrainConfig
from policy.learned.features import build_graph
from policy.learned.instance_context import InstanceContext
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.model import PolicyNet
from policy.learned.rollout import Episode


def episode_logits(net: PolicyNet, ep: Episode) -> tuple[torch.Tensor, ...]:
    """Head inputs, masked logits and masks (with gradients) of an episode's decisions."""
    tr = ep.trajectory
    workflow, platform = ep.planning or materialize(ep.spec)
    emb = net.encode(build_graph(InstanceContext.of(workflow, platform)))
    feats = torch.from_numpy(np.stack(tr.feats))
    mask = torch.from_numpy(np.stack(tr.masks))
    inputs = net.candidate_inputs(emb, torch.tensor(tr.task_idx), feats)
    return inputs, net.logits(inputs, mask), mask


def imitation_loss(net: PolicyNet, episodes: list[Episode]) -> torch.Tensor:
    """Mean over lookahead decisions of ``-log P(any node that tied for the best completion)``.

    Against a single label, ties between identical nodes would be an irreducible loss and a
    noisy gradient; against the set, a decision where every candidate ties costs nothing.
    """
    losses = []
    for ep in episodes:
        if not len(ep.trajectory):
            continue
        _, logits, _ = episode_logits(net, ep)
        best = torch.from_numpy(np.stack(ep.trajectory.best))
        logp = torch.log_softmax(logits, dim=-1).masked_fill(~best, float("-inf"))
        losses.append(-torch.logsumexp(logp, dim=-1))
    return torch.cat(losses).mean()


def agreement(net: PolicyNet, episodes: list[Episode]) -> list[np.ndarray]:
    """Per episode, whether the network's greedy choice is among the expert's best, per decision."""
    hits = []
    with torch.no_grad():
        for ep in episodes:
            if not len(ep.trajectory):
                hits.append(np.zeros(0, dtype=bool))
                continue
            _, logits, _ = episode_logits(net, ep)
            top = logits.argmax(-1).numpy()
            hits.append(np.stack(ep.trajectory.best)[np.arange(len(top)), top])
    return hits


def expert_iteration(
    net: PolicyNet,
    specs: list[InstanceSpec],
    cfg: TrainConfig,
    pool: ProcessPoolExecutor | None,
    rng: np.random.Generator,
    after_round: Callable[[int, dict[str, float]], None],
    start: float,
) -> None:
    """Imitate the lookahead expert over the current network, ``cfg.expert_iterations`` times.

    Labels are aggregated across rounds (as in DAgger), so later rounds do not forget the
    states earlier networks visited. ``after_round(i, row)`` gets each round's metrics, among
    them how well the network imitates: ``exit/overruled`` (share of the round's decisions where
    the expert overruled the network that labelled them), ``exit/agree`` (share of all labels
    the fitted network reproduces) and ``exit/agree_overruled`` (the same over the overruled
    decisions alone, the ones that carry the expert's gain).
    """
    from policy.learned.lookahead import collect_lookahead

    labelled: list[Episode] = []
    overruled: list[np.ndarray] = []
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    for round_ in range(1, cfg.expert_iterations + 1):
        if cfg.past_wall_clock_cap(start):
            break
        chosen = rng.choice(len(specs), size=min(cfg.expert_instances, len(specs)), replace=False)
        fresh = collect_lookahead(
            net, [specs[i] for i in chosen], cfg.network_model, pool, cfg.expert_k, cfg.workers
        )
        labelled.extend(fresh)
        fresh_missed = [~hit for hit in agreement(net, fresh)]  # the labelling network's misses
        overruled.extend(fresh_missed)
        net.train()
        losses = []
        for _ in range(cfg.expert_epochs):
            order = rng.permutation(len(labelled))
            for k in range(0, len(order), cfg.minibatch_episodes):
                batch = [labelled[int(i)] for i in order[k : k + cfg.minibatch_episodes]]
                loss = imitation_loss(net, batch)
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                opt.step()
                losses.append(float(loss.detach()))
        net.eval()
        hits, missed = np.concatenate(agreement(net, labelled)), np.concatenate(overruled)
        new_missed = np.concatenate(fresh_missed)
        after_round(
            round_,
            {
                "exit/round": round_,
                "exit/expert_ratio_gm": float(np.exp(np.mean([np.log(ep.ratio) for ep in fresh]))),
                "exit/labels": float(sum(len(ep.trajectory) for ep in labelled)),
                "exit/loss": float(np.mean(losses)),
                "exit/overruled": float(new_missed.mean()) if len(new_missed) else 0.0,
                "exit/agree": float(hits.mean()) if len(hits) else 1.0,
                "exit/agree_overruled": float(hits[missed].mean()) if missed.any() else 1.0,
                "time/minutes": (time.monotonic() - start) / 60,
            },
        )
