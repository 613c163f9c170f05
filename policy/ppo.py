"""One clipped-PPO update loop (Schulman et al., 2017), written as CleanRL's ``ppo.py`` does, for
both learners: the workflow placement policy (:mod:`policy.learned.train`) and the batch queue
policy (:mod:`policy.batch_gat.train`).

The learners differ only in what a minibatch is (whole episodes, so a graph network sees each
workflow once; or single decisions) and how a decision is evaluated, so they pass those in:
``minibatches`` yields, for each minibatch of one epoch in the learner's own random order, the
indices of its decisions and a handle the learner understands (which episodes, which views),
and ``evaluate(handle)`` returns the log-probability of the action taken, the entropy and the
value of those decisions, in that order, with gradients. The rest is the same for both:

* ratio ``r = exp(log pi - log pi_old)``; policy loss ``max(-A r, -A clip(r, 1 - e, 1 + e))``;
* value loss ``value_scale * (V - R)^2`` (CleanRL's 0.5 for the workflow policy, 1 for the
  queue policy, as each was trained);
* ``loss = policy loss - entropy_coef * entropy + value_coef * value loss``; gradients
  clipped to ``max_grad_norm``; one Adam step per minibatch;
* reported: the last minibatch's losses, and over every minibatch the mean approximate KL
  (``(r - 1) - log r``, CleanRL's estimator) and the fraction of clipped ratios.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import torch
from torch import nn

Handle = TypeVar("Handle")


@dataclass(frozen=True)
class PPOCoefficients:
    """The constants of one clipped-PPO update."""

    epochs: int
    clip: float
    value_coef: float
    entropy_coef: float
    max_grad_norm: float
    value_scale: float = 0.5
    """Factor on the squared value error (CleanRL's 0.5)."""


def ppo_update(
    net: nn.Module,
    opt: torch.optim.Optimizer,
    minibatches: Callable[[], Iterable[tuple[np.ndarray, Handle]]],
    evaluate: Callable[[Handle], tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
    old_logp: np.ndarray,
    advantages: np.ndarray,
    returns: np.ndarray,
    coef: PPOCoefficients,
) -> dict[str, float]:
    """``coef.epochs`` passes of clipped PPO over the decisions ``minibatches`` yields; returns
    the last minibatch's losses, the mean approximate KL and the clipped fraction."""
    b_logp_old = torch.as_tensor(old_logp, dtype=torch.float32)
    b_adv = torch.as_tensor(advantages, dtype=torch.float32)
    b_ret = torch.as_tensor(returns, dtype=torch.float32)
    approx_kls: list[float] = []
    clipfracs: list[float] = []
    stats: dict[str, float] = {}
    net.train()
    for _ in range(coef.epochs):
        for idx, handle in minibatches():
            logp, entropy, value = evaluate(handle)
            index = torch.as_tensor(idx, dtype=torch.long)
            logratio = logp - b_logp_old[index]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kls.append(float(((ratio - 1) - logratio).mean()))
                clipfracs.append(float(((ratio - 1.0).abs() > coef.clip).float().mean()))
            mb_adv = b_adv[index]
            pg_loss = torch.max(
                -mb_adv * ratio, -mb_adv * ratio.clamp(1 - coef.clip, 1 + coef.clip)
            ).mean()
            v_loss = coef.value_scale * ((value - b_ret[index]) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - coef.entropy_coef * entropy_loss + v_loss * coef.value_coef
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), coef.max_grad_norm)
            opt.step()
            stats = {
                "ppo/pg_loss": float(pg_loss.detach()),
                "ppo/value_loss": float(v_loss.detach()),
                "ppo/entropy": float(entropy_loss.detach()),
            }
    net.eval()
    if not approx_kls:
        return {}
    return {
        **stats,
        "ppo/approx_kl": float(np.mean(approx_kls)),
        "ppo/clipfrac": float(np.mean(clipfracs)),
    }
