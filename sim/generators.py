"""One entry point for every workload generator: WfCommons recipes and synthetic shapes.

``generate_workflow("montage", 200, seed=1)`` and ``generate_workflow("fork-join", 20, seed=1,
ccr=0.5)`` look the same to callers (the CLI, benchmarks, the knowledge-base builder).
See :mod:`sim.recipes` and :mod:`sim.shapes` for what each kind produces.
"""

from __future__ import annotations

import math

from sim.errors import InputError
from sim.model import Workflow
from sim.recipes import RECIPES, generate_recipe, recipe_minimum_tasks
from sim.shapes import SHAPES, ShapeConfig, generate_shape

WORKFLOW_KINDS: tuple[str, ...] = (*RECIPES, *SHAPES)


def generate_workflow(
    kind: str, num_tasks: int | None, seed: int, *, ccr: float | None = None
) -> Workflow:
    """A workflow of ``kind`` (a recipe or a shape), deterministic in ``seed``.

    ``num_tasks`` None means the kind's default: a recipe's minimum size, 20 tasks for a shape
    (49 for genomics). ``ccr`` None keeps a recipe's own file sizes and gives shapes a CCR of 1.
    """
    if ccr is not None and not (math.isfinite(ccr) and ccr >= 0):  # NaN passes every `<`
        raise InputError("--ccr", [f"CCR must be a finite number >= 0, got {ccr}"])
    if kind in RECIPES:
        size = recipe_minimum_tasks(kind) if num_tasks is None else num_tasks
        return generate_recipe(kind, size, seed, ccr=ccr)
    if kind in SHAPES:
        config = ShapeConfig() if ccr is None else ShapeConfig(ccr=ccr)
        return generate_shape(kind, num_tasks, seed, config)
    raise InputError(
        kind,
        [
            f"unknown workflow kind {kind!r} "
            f"(recipes: {', '.join(RECIPES)}; shapes: {', '.join(SHAPES)})"
        ],
    )


__all__ = [
    "RECIPES",
    "SHAPES",
    "WORKFLOW_KINDS",
    "ShapeConfig",
    "generate_recipe",
    "generate_shape",
    "generate_workflow",
    "recipe_minimum_tasks",
]
