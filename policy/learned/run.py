"""One `wass-chat train policy` run as a library call: :func:`run_train` trains on a
:class:`~policy.learned.config.TrainConfig`, then scores the kept weights on held-out instances
(:class:`HeldOutEvaluation`), and returns both with the JSON document the CLI prints. The CLI
only parses flags into the configs and prints.

The RAG teacher and the retrieved runtime predictions come from the knowledge base, a higher
floor, so the caller passes them in (as :func:`policy.bench.run.run_bench` takes its
predictions).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from policy.learned.config import TrainConfig, TrainProgress

if TYPE_CHECKING:
    from policy.learned.evaluate import Evaluation
    from policy.learned.rollout import Predictions
    from policy.learned.teacher import Teacher
    from policy.learned.train import TrainResult


@dataclass(frozen=True)
class HeldOutEvaluation:
    """What the trained policy is scored on after training; the defaults are `wass-chat train
    policy`'s."""

    instances: int = 24
    """Held-out instances per data regime, from evaluation seeds only (``--eval-instances``)."""
    holdout_recipes: tuple[str, ...] = ()
    """Recipes kept out of training and scored separately: the generalisation split
    (``--holdout-recipes``)."""


@dataclass(frozen=True)
class TrainRunResult:
    """What a training run produced: the training's result and the held-out evaluations."""

    cfg: TrainConfig
    train: TrainResult
    evaluations: dict[str, dict[str, Evaluation]]
    """Split (``held_out``, ``generalisation``) -> data regime -> evaluation."""

    def document(self) -> dict[str, Any]:
        """The run as `train policy --json` prints it (without the CLI's own additions)."""
        result = self.train
        return {
            "checkpoint": str(result.checkpoint),
            "metrics": str(result.metrics_path),
            "minutes": result.seconds / 60,
            "best_update": result.best_update,
            "kept": result.kept,
            "validation_ratio": result.validation_ratio,
            "rag": self.cfg.use_rag,
            "estimates": self.cfg.estimates,
            **{
                split: {regime: asdict(ev) for regime, ev in evs.items()}
                for split, evs in self.evaluations.items()
            },
        }


def run_train(
    cfg: TrainConfig,
    progress: TrainProgress | None = None,
    *,
    evaluation: HeldOutEvaluation | None = None,
    teacher: Teacher | None = None,
    predictions: Predictions | None = None,
) -> TrainRunResult:
    """Train the policy ``cfg`` describes, then score the kept weights held-out.

    ``teacher`` gives the RAG reward (needed when ``cfg.use_rag``); ``predictions`` are the
    runtime predictions retrieved for every instance the run touches, under ``user`` estimates.
    ``progress`` is called with each progress line of the training.
    """
    from functools import partial

    from policy.learned.evaluate import HeldOutDraw, evaluate_regimes
    from policy.learned.model import load_checkpoint
    from policy.learned.train import setting_of, train

    held = evaluation or HeldOutEvaluation()
    result = train(cfg, teacher=teacher, progress=progress, predictions=predictions)
    net, _ = load_checkpoint(str(result.checkpoint))
    splits = {"held_out": cfg.recipes, "generalisation": held.holdout_recipes}
    scored = partial(evaluate_regimes, setting=setting_of(cfg), predictions=predictions)
    evaluations = {
        split: scored(
            net, HeldOutDraw(rs, held.instances, cfg.seed, cfg.tasks, cfg.nodes, cfg.ccrs)
        )
        for split, rs in splits.items()
        if rs
    }
    return TrainRunResult(cfg, result, evaluations)
