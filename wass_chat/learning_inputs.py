"""What the knowledge base gives one training run of the learned policy: its RAG teacher and,
under runtime uncertainty, the runtime predictions it plans on.

In the exact setting the RAG arm's teacher is a performance predictor fitted on simulated
decisions with cases retrieved from the knowledge base (:func:`wass_chat.learning.build_teacher`).
Under ``user`` estimates the RAG arm plans on the runtimes that past executions predict: each
training, validation and evaluation instance is submitted as the user would (its walltime
requests on the nominal platform), the ``k`` most similar realised executions are retrieved
from the history (``--history``, filled by ``wass-chat estimates seed``) and their predictions
(:func:`kb.estimates.retrieve_predictions`) are handed to the trainer as data, since
``policy`` may not import ``kb``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policy.learned.config import TrainConfig
    from policy.learned.instances import InstanceSpec
    from policy.learned.teacher import PredictorFit, Teacher
    from sim.uncertainty import RuntimePredictions


@dataclass(frozen=True)
class TrainingInputs:
    """The teacher and predictions :func:`policy.learned.run.run_train` takes."""

    teacher: Teacher | None
    predictions: dict[InstanceSpec, RuntimePredictions] | None
    fit: PredictorFit | None
    """The exact setting's predictor, scored on held-out episodes (None otherwise)."""


def training_inputs(
    cfg: TrainConfig,
    kb_dir: Path,
    history: Path | None,
    eval_instances: int,
    teacher_instances: int,
) -> TrainingInputs:
    """The RAG arm's teacher (None for no-RAG): under ``user`` estimates the retrieved-runtime
    teacher and the predictions retrieved from ``history``; in the exact setting a predictor
    fitted on ``teacher_instances`` instances with cases from the knowledge base at
    ``kb_dir``."""
    teacher, predictions = uncertain_training(cfg, history, eval_instances)
    fit = None
    if cfg.use_rag and cfg.estimates == "oracle":
        teacher, fit = oracle_teacher(cfg, kb_dir, teacher_instances)
    return TrainingInputs(teacher, predictions, fit)


def oracle_teacher(cfg: TrainConfig, kb_dir: Path, instances: int) -> tuple[Teacher, PredictorFit]:
    """The RAG teacher of the exact setting: its predictor trained on ``instances`` simulated
    instances (training seeds) with cases retrieved from the knowledge base at ``kb_dir``."""
    from kb.store import KnowledgeBase
    from policy.learned.instances import sample_specs
    from wass_chat.learning import build_teacher

    specs = sample_specs(cfg.recipes, instances, cfg.seed + 17, cfg.tasks, cfg.nodes, ccrs=cfg.ccrs)
    built = build_teacher(KnowledgeBase(kb_dir), specs, cfg.network_model, seed=cfg.seed)
    return built.teacher, built.fit


def run_specs(cfg: TrainConfig, eval_instances: int) -> list[InstanceSpec]:
    """Every instance a run touches: training, validation and held-out evaluation."""
    from policy.learned.instances import sample_specs
    from policy.learned.train import validation_specs

    train = sample_specs(
        cfg.recipes, cfg.train_instances, cfg.seed, cfg.tasks, cfg.nodes, ccrs=cfg.ccrs
    )
    held = []
    for ccr in cfg.ccrs:
        held += sample_specs(
            cfg.recipes, eval_instances, cfg.seed, cfg.tasks, cfg.nodes, True, (ccr,)
        )
    return list(dict.fromkeys(train + validation_specs(cfg, train) + held))


def spec_predictions(
    history: Path, specs: list[InstanceSpec], cfg: TrainConfig, k: int = 8
) -> dict[InstanceSpec, RuntimePredictions]:
    """Each spec's predictions from its ``k`` most similar realised executions."""
    from kb.estimates import retrieve_predictions
    from kb.store import KnowledgeBase
    from policy.learned.calibration import planning_view
    from policy.learned.train import setting_of

    kb = KnowledgeBase(history)
    try:
        found = {}
        for spec in specs:
            request = planning_view(spec, setting_of(cfg))
            found[spec] = retrieve_predictions(kb, request.workflow, request.platform, k)
        return found
    finally:
        kb.close()


def uncertain_training(
    cfg: TrainConfig, history: Path | None, eval_instances: int
) -> tuple[Teacher | None, dict[InstanceSpec, RuntimePredictions] | None]:
    """The RAG arm's teacher and retrieved predictions under estimates (None for no-RAG)."""
    from policy.learned.teacher import RetrievedRuntimeTeacher

    if not cfg.use_rag or history is None:
        return None, None
    return RetrievedRuntimeTeacher(), spec_predictions(history, run_specs(cfg, eval_instances), cfg)
