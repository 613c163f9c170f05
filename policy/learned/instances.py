"""Training and evaluation instances of the learned policy, split so evaluation stays honest.

An :class:`InstanceSpec` (recipe, size, platform size, seed) names a (workflow, platform) pair
that is regenerated deterministically wherever it is needed, so worker processes receive specs,
not graphs. Training seeds and evaluation seeds never overlap (:func:`split_seeds`); the
generalisation split holds whole recipes out of training.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sim.model import Platform, Workflow

EVAL_SEED_OFFSET = 1_000_000
"""Evaluation seeds start here; training seeds stay below it."""


@dataclass(frozen=True, slots=True)
class InstanceSpec:
    """A reproducible (workflow, platform) pair."""

    recipe: str
    tasks: int
    nodes: int
    seed: int
    ccr: float = 0.0
    """Communication-to-computation ratio the file sizes are rescaled to; 0: WfCommons' own
    sizes (CCR 1e-9..1e-4: compute-bound, where HEFT is near the lower bound)."""

    @property
    def label(self) -> str:
        data = f"~ccr{self.ccr:g}" if self.ccr else ""
        return f"{self.recipe}-{self.tasks}@{self.nodes}n#{self.seed}{data}"


@lru_cache(maxsize=256)
def materialize(spec: InstanceSpec) -> tuple[Workflow, Platform]:
    """Generate the workflow and heterogeneous platform a spec names (cached per process)."""
    from sim.platforms import ClusterSpec, generate_platform
    from sim.recipes import generate_recipe

    workflow = generate_recipe(spec.recipe, spec.tasks, seed=spec.seed, ccr=spec.ccr or None)
    platform = generate_platform(ClusterSpec(spec.nodes, heterogeneous=True), seed=spec.seed)
    return workflow, platform


def sample_specs(
    recipes: tuple[str, ...],
    count: int,
    seed: int,
    tasks: tuple[int, int] = (50, 200),
    nodes: tuple[int, ...] = (8, 16, 32),
    evaluation: bool = False,
    ccrs: tuple[float, ...] = (0.0,),
) -> list[InstanceSpec]:
    """``count`` specs drawn with ``seed``; evaluation specs use seeds training never sees.

    Sizes below a recipe's WfCommons minimum are raised to it.
    """
    from sim.recipes import recipe_minimum_tasks

    rng = np.random.default_rng(seed + (EVAL_SEED_OFFSET if evaluation else 0))
    base = EVAL_SEED_OFFSET if evaluation else 0
    specs = []
    for i in range(count):
        recipe = recipes[i % len(recipes)]
        size = max(int(rng.integers(tasks[0], tasks[1] + 1)), recipe_minimum_tasks(recipe))
        node_count = int(rng.choice(nodes))
        seed_i = base + int(rng.integers(0, 10**5))
        specs.append(InstanceSpec(recipe, size, node_count, seed_i, ccrs[i % len(ccrs)]))
    return specs
