"""Inputs of ``wass-chat train``: the recipe and CCR lists, and the estimates flags checked.

What the knowledge base gives a training run (its teacher, retrieved predictions) is made below
the CLI, in :mod:`wass_chat.learning_inputs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


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
            [
                "--estimates user with RAG needs --history DIR, a knowledge base of realised "
                "executions (fill it with `wass-chat estimates seed`)"
            ],
        )
