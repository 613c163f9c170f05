"""Every registered scheduler yields valid executions; list schedulers plan exactly."""

from __future__ import annotations

import numpy as np
import pytest

from policy.base import ListScheduler, plan_and_simulate
from policy.bench.instances import random_dag, random_platform
from policy.heft import HEFT
from policy.registry import get_scheduler, scheduler_names
from policy.validate import validate_schedule
from sim.engine import simulate
from sim.model import Platform, Workflow
from tests.policy.conftest import LEARNED_VARIANTS, VARIANT_ZOO


def _assert_valid(name: str, network_model: str, workflow: Workflow, platform: Platform) -> None:
    scheduler = get_scheduler(name, seed=1)
    result = plan_and_simulate(scheduler, workflow, platform, network_model)  # type: ignore[arg-type]
    assert validate_schedule(workflow, platform, result) == []
    assert {r.task for r in result.tasks} == {t.id for t in workflow.tasks}


@pytest.mark.parametrize("name", [n for n in scheduler_names() if n not in LEARNED_VARIANTS])
@pytest.mark.parametrize("network_model", ["ideal", "fair"])
def test_every_scheduler_passes_the_validator(
    name: str, network_model: str, instance: tuple[Workflow, Platform]
) -> None:
    _assert_valid(name, network_model, *instance)


@pytest.mark.parametrize("name", LEARNED_VARIANTS)
@pytest.mark.parametrize("network_model", ["ideal", "fair"])
@pytest.mark.parametrize("case", VARIANT_ZOO, ids=[f"{w.name}@{p.name}" for w, p in VARIANT_ZOO])
def test_every_learned_variant_passes_the_validator(
    name: str, network_model: str, case: tuple[Workflow, Platform]
) -> None:
    _assert_valid(name, network_model, *case)


def test_the_learned_variants_are_registered() -> None:
    """A renamed variant must not drop out of both validator tests unnoticed."""
    assert set(LEARNED_VARIANTS) <= set(scheduler_names()) and len(VARIANT_ZOO) == 2


LIST_SCHEDULERS = [n for n in scheduler_names() if isinstance(get_scheduler(n), ListScheduler)]


@pytest.mark.parametrize("name", LIST_SCHEDULERS)
def test_plans_are_valid_and_exact_on_one_core_nodes(name: str) -> None:
    """Under the ideal network with one core per node, simulated makespan == planned makespan."""
    rng = np.random.default_rng(3)
    for k in range(6):
        workflow = random_dag(rng, 14, 0.3, with_inputs=bool(k % 2))
        platform = random_platform(rng, 3, latency=1e-3 * (k % 3))
        scheduler = get_scheduler(name)
        assert isinstance(scheduler, ListScheduler)
        plan = scheduler.plan(workflow, platform)
        assert validate_schedule(workflow, platform, plan.to_result(name)) == []
        simulated = simulate(workflow, platform, plan.to_schedule(name), "ideal").makespan
        assert simulated == pytest.approx(plan.makespan, rel=1e-9)


def test_heft_prefers_the_fast_node_for_a_chain() -> None:
    rng = np.random.default_rng(0)
    workflow = random_dag(rng, 5, 1.0)  # a total order: every edge i -> j
    platform = random_platform(rng, 3)
    fastest = max(platform.nodes, key=lambda n: n.speed).name
    result = plan_and_simulate(HEFT(), workflow, platform, "ideal")
    assert set(result.placements.values()) == {fastest}


def test_random_policy_is_reproducible_from_its_seed() -> None:
    rng = np.random.default_rng(4)
    workflow, platform = random_dag(rng, 20, 0.2), random_platform(rng, 5)
    runs = [
        plan_and_simulate(get_scheduler("random", seed=s), workflow, platform, "fair")
        for s in (7, 7, 8)
    ]
    assert runs[0].placements == runs[1].placements
    assert runs[0].makespan == runs[1].makespan
    assert runs[0].placements != runs[2].placements


def test_registry_resolves_aliases_and_rejects_unknown_names() -> None:
    from policy.registry import UnknownSchedulerError, canonical_name

    assert canonical_name("Min-Min") == "minmin"
    assert canonical_name("traditional-slurm") == "slurm"
    expected = {"heft", "cpop", "peft", "minmin", "maxmin", "sjf", "ljf", "slurm", "wass", "random"}
    assert expected <= set(scheduler_names())
    with pytest.raises(UnknownSchedulerError):
        canonical_name("nope")
