"""Inputs of ``wass-chat train``: recipe and CCR lists, and training under runtime uncertainty.

Under ``--estimates user`` the RAG arm plans on the runtimes that past executions predict: each
training, validation and evaluation instance is submitted as the user would (its walltime
requests on the nominal platform), the ``k`` most similar realised executions are retrieved
from the history (``--history``, filled by ``wass-chat estimates seed``) and their predictions
(:func:`kb.estimates.retrieve_predictions`) are handed to the trainer as data, since
``policy`` may not import ``kb``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policy.learned.config import TrainConfig
    from policy.learned.instances import InstanceSpec
    from policy.learned.teacher import Teacher
    from sim.uncertainty import RuntimePredictions


def recipes_of(text: str | None) -> tuple[str, ...]:
    """The recipes of ``--recipes`` (all nine when empty), or a one-line error."""
    from policy.learned.config import ALL_RECIPES
    from sim.errors import InputError

    if not text:
        return ALL_RECIPES
    names = tuple(r.strip() for r in text.split(",") if r.strip())
    unknown = [r for r in names if r not in ALL_RECIPES]
    if unknown:
        raise InputError("--recipes", [f"unknown recipe {r!r}" for r in unknown])
    return names


def ccrs_of(text: str) -> tuple[float, ...]:
    """The data regimes of ``--ccrs``, or a one-line error."""
    from sim.errors import InputError

    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError as exc:
        raise InputError("--ccrs", [f"not a list of numbers: {text!r}"]) from exc
    if not values or any(v < 0 for v in values):
        raise InputError("--ccrs", ["give one or more non-negative CCR values (0 = native)"])
    return values


def check_estimates(estimates: str, use_rag: bool, history: Path | None) -> None:
    """Refuse an unknown mode, or the RAG arm under estimates without a history to retrieve."""
    from policy.learned.calibration import SETTINGS
    from sim.errors import InputError

    if estimates not in SETTINGS:
        raise InputError("--estimates", [f"{estimates!r} is not one of {', '.join(SETTINGS)}"])
    if estimates != "oracle" and use_rag and (history is None or not history.is_dir()):
        raise InputError(
            "--history",
            ["--estimates user with RAG needs --history DIR, a knowledge base of realised "
             "executions (fill it with `wass-chat estimates seed`)"],
        )  # fmt: skip


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
