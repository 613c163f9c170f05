"""The queue policy on held-out periods, next to FIFO, SJF, EASY and the cross-entropy order.

The shipped checkpoint (``checkpoints/gat.pt``, trained by ``wass-chat whatif learn --policy
gat --train --save ...`` with the defaults) lets the comparison run without training.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from policy.batch_gat.model import QueuePolicy
from policy.batch_gat.rollout import replay_policy
from sim.batch.chosen import UniformChooser, simulate_chosen
from sim.batch.learn import (
    DEFAULT_RUN_WEIGHTS,
    FEATURES,
    LearnConfig,
    Period,
    evaluate,
    policy_config,
)

SHIPPED_CHECKPOINT = Path(__file__).parent / "checkpoints" / "gat.pt"


def evaluate_policy(
    net: QueuePolicy,
    periods: Sequence[Period],
    lc: LearnConfig | None = None,
    seed: int = 0,
    greedy: bool = False,
) -> dict[str, Any]:
    """:func:`sim.batch.learn.evaluate` with the policy choosing as "learned" (sampled with
    ``seed``, as trained, or greedily), and two extra baselines: "cem", the default run's
    cross-entropy weights, and "random", a uniform choice among the same valid jobs (what the
    choice set is worth without any learning)."""
    import torch

    torch.set_num_threads(1)  # tiny forward passes: one thread is faster, and the same sums
    lc = lc or LearnConfig()
    sample_seed = None if greedy else seed
    cem = policy_config([DEFAULT_RUN_WEIGHTS[k] for k in FEATURES])
    return evaluate(
        periods,
        None,
        lc,
        seed=seed,
        learned_replay=lambda p: replay_policy(net, p, lc.power_saving, sample_seed),
        extra_baselines={
            "cem": cem,
            "random": lambda p: simulate_chosen(
                p.cluster, p.workload, UniformChooser(seed), net.cfg.window, lc.power_saving
            ),
        },
    )
