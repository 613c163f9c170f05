"""A zoo of small workflows and platforms that every scheduler test runs over."""

from __future__ import annotations

import numpy as np
import pytest

from policy.bench.instances import random_dag, random_platform
from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow


def _workflow(name: str, edges: list[tuple[int, int]], n: int, cores: int = 1) -> Workflow:
    """Tasks t0..t{n-1}; each edge carries its own 2 GB file; entry tasks read an input."""
    rng = np.random.default_rng(len(edges) + n)
    files = [File(f"f{a}_{b}", 2 * 10**9) for a, b in edges]
    targets = {b for _, b in edges}
    files += [File(f"in{i}", 10**9) for i in range(n) if i not in targets]
    tasks = tuple(
        Task(
            id=f"t{i}",
            work=float(rng.uniform(5, 20)) * REFERENCE_SPEED * cores,
            cores=cores if i % 2 else 1,
            inputs=tuple(f"f{a}_{b}" for a, b in edges if b == i)
            + ((f"in{i}",) if i not in targets else ()),
            outputs=tuple(f"f{a}_{b}" for a, b in edges if a == i),
        )
        for i in range(n)
    )
    return Workflow(name, tasks, tuple(files))


def zoo_workflows() -> list[Workflow]:
    rng = np.random.default_rng(11)
    return [
        _workflow("chain", [(i, i + 1) for i in range(5)], 6),
        _workflow("fork", [(0, i) for i in range(1, 6)], 6),
        _workflow("join", [(i, 5) for i in range(5)], 6),
        _workflow("diamond", [(0, 1), (0, 2), (0, 3), (1, 4), (2, 4), (3, 4)], 5),
        _workflow("multicore-diamond", [(0, 1), (0, 2), (1, 3), (2, 3)], 4, cores=2),
        random_dag(rng, 15, 0.25, with_inputs=True, name="random"),
    ]


def zoo_platforms() -> list[Platform]:
    rng = np.random.default_rng(12)
    homogeneous = Platform(
        "homo-3x2", tuple(Node(f"h{i}", cores=2, bandwidth=1e9) for i in range(3))
    )
    return [homogeneous, random_platform(rng, 4, cores=2, latency=1e-3, name="hetero-4x2")]


ZOO = [(w, p) for w in zoo_workflows() for p in zoo_platforms()]


@pytest.fixture(params=ZOO, ids=[f"{w.name}@{p.name}" for w, p in ZOO])
def instance(request: pytest.FixtureRequest) -> tuple[Workflow, Platform]:
    return request.param


LEARNED_VARIANTS = (
    "policy-norag", "policy-sample", "policy-lookahead", "rag-guarded", "rag-guarded-lookahead",
)  # fmt: skip
"""Schedulers built on the learned planner of ``policy`` (other weights, sampling, lookahead,
guards): seconds per instance even on this zoo, ~80% of tests/policy's time when they ran over
all of it. ``policy`` itself runs over the whole zoo; these over VARIANT_ZOO."""

_VARIANT_CASES = ("multicore-diamond@hetero-4x2", "diamond@homo-3x2")
VARIANT_ZOO = [(w, p) for w, p in ZOO if f"{w.name}@{p.name}" in _VARIANT_CASES]
"""Multi-core tasks on a heterogeneous platform, and a diamond with inputs on a homogeneous one."""
