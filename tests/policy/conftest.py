"""A zoo of small workflows and platforms that every scheduler test runs over."""

from __future__ import annotations

import numpy as np
import pytest

from policy.bench.instances import random_dag, random_platform
from policy.duplication import CopyPlan
from policy.fifo_deft import FifoDeft
from policy.tdca import Tdca
from policy.validate import validate_schedule
from sim.arrivals import Stream, StreamSpec, poisson_stream
from sim.engine import simulate
from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow
from sim.platforms import generate_platform, gpu_cluster_spec
from sim.schedule import NetworkModel, SimResult


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
    "policy-norag",
    "policy-sample",
    "policy-lookahead",
    "rag-guarded",
    "rag-guarded-lookahead",
)
"""Schedulers built on the learned planner of ``policy`` (other weights, sampling, lookahead,
guards): seconds per instance even on this zoo, ~80% of tests/policy's time when they ran over
all of it. ``policy`` itself runs over the whole zoo; these over VARIANT_ZOO."""

_VARIANT_CASES = ("multicore-diamond@hetero-4x2", "diamond@homo-3x2")
VARIANT_ZOO = [(w, p) for w, p in ZOO if f"{w.name}@{p.name}" in _VARIANT_CASES]
"""Multi-core tasks on a heterogeneous platform, and a diamond with inputs on a homogeneous one."""


def small_gpu_streams() -> list[tuple[Stream, Platform]]:
    """Three small streams of mixed shapes with GPU tasks on five-node GPU clusters, their
    communication heavy enough for duplication to pay (the online and duplication tests)."""
    cases = []
    for seed in range(3):
        spec = StreamSpec(count=6 + 3 * seed, window=200.0, tasks=(4, 14), ccr=0.5 + seed)
        cases.append((poisson_stream(spec, seed), generate_platform(gpu_cluster_spec(5), seed)))
    return cases


def fork_over_slow_links() -> tuple[Workflow, Platform]:
    """p feeds c1 and c2 with 10 GB each over a slow 1 GB/s link; p itself computes 1 s. Two
    nodes: running p again beside the second child saves a 10 s transfer."""
    files = (File("in", 0), File("a", 10**10), File("b", 10**10))
    tasks = (
        Task("p", REFERENCE_SPEED, inputs=("in",), outputs=("a", "b")),
        Task("c1", 20 * REFERENCE_SPEED, inputs=("a",)),
        Task("c2", 20 * REFERENCE_SPEED, inputs=("b",)),
    )
    nodes = (Node("n0", 1, bandwidth=1e9), Node("n1", 1, bandwidth=1e9))
    return Workflow("fork", tasks, files), Platform("two", nodes)


def checked_copy_run(
    planner: FifoDeft | Tdca, workflow: Workflow, platform: Platform, model: NetworkModel
) -> tuple[CopyPlan, SimResult]:
    """``planner``'s plan of ``workflow`` and its simulation under ``model``, both accepted by
    the validator with copies, every copy run; under the ideal model the run is the plan."""
    plan = planner.plan(workflow, platform)
    assert validate_schedule(workflow, platform, plan.to_result(planner.name), copies=True) == []
    run = plan.to_copy_schedule(planner.name)
    result = run.original_result(simulate(run.expanded, platform, run.schedule, model))
    assert validate_schedule(workflow, platform, result, copies=True) == []
    assert len(result.tasks) == len(workflow.tasks) + plan.copy_count
    if model == "ideal":
        assert result.makespan == pytest.approx(plan.makespan, rel=1e-9)
    return plan, result
