"""Random placement: the floor every scheduler must beat, reproducible from its seed."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from policy.dynamic_hosts import host_names
from sim.model import Platform, Workflow
from sim.schedule import ClusterView


class RandomPolicy:
    """Each ready task goes to a uniformly random node able to host it; random priorities.

    The generator is re-created from ``seed`` on every :meth:`reset`, so one seed gives one
    schedule however often it is simulated.
    """

    name: str = "random"
    description: ClassVar[str] = "Random node among those that fit (seeded)"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self._hosts: dict[str, tuple[str, ...]] = {}
        self._priority: dict[str, float] = {}

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self._rng = np.random.default_rng(self.seed)
        self._hosts = host_names(workflow, platform)
        draws = self._rng.random(len(workflow.tasks))
        self._priority = {t.id: float(d) for t, d in zip(workflow.tasks, draws, strict=True)}

    def priority(self, task: str) -> float:
        return self._priority[task]

    def choose_node(self, task: str, view: ClusterView) -> str:
        candidates = self._hosts[task]
        return candidates[int(self._rng.integers(len(candidates)))]
