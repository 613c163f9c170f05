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
    rollouts: int = 4
    seed: int = 0
    validation_streams: int = 6
