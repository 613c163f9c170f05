"""What trains the Decima-style selector and where its network ships; no torch here, so the
CLI can show the defaults without loading it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CHECKPOINT = Path(__file__).parent / "checkpoints" / "decima.pt"
"""The shipped network (retrain: ``wass-chat train decima``, docs/schedulers.md)."""


LEARNING_RATE = 3e-3
"""Adam's, for every training."""
CHECK_EVERY = 25
"""Steps between validations of the weights."""


@dataclass(frozen=True)
class DecimaTraining:
    """What ``policy.learned.decima_train.train_decima`` runs: ``steps`` updates (the budget,
    never wall clock), each over ``rollouts`` plans of one stream (their mean is the
    baseline); ``seed`` seeds the initial weights, the streams, the platforms and the orders
    drawn; the kept weights are chosen on ``validation_streams`` fixed streams (0: the last)."""

    steps: int = 400
    """Updates to train for: the budget (the shipped network's), never wall clock."""
    rollouts: int = 4
    """Plans of one stream per update, drawn from the softmax; their mean is the baseline."""
    seed: int = 0
    """Seeds the initial weights, the training streams and platforms, and the orders drawn."""
    validation_streams: int = 6
    """Fixed streams the weights are checked on every ``CHECK_EVERY`` steps (0: keep the last)."""
