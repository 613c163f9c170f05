"""Our HEFT and CPOP against SAGA's on instances SAGA represents exactly.

With SAGA's averaging conventions (``HEFT(convention="saga")``, ``CPOP(convention="saga")``,
see sim.ranks and policy.cpop) the makespans, simulated by our engine under the ideal
network, must equal SAGA's own within 1e-6 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

from policy.base import plan_and_simulate
from policy.bench.instances import random_dag, random_platform
from policy.cpop import CPOP
from policy.heft import HEFT
from policy.peers.saga import exact_in_saga, representable_instance, run_saga, saga_available
from policy.validate import validate_schedule
from sim.model import Platform, Workflow
from sim.recipes import generate_recipe
from tests.support import require


def _random_instances() -> list[tuple[Workflow, Platform]]:
    rng = np.random.default_rng(2024)
    return [
        (
            random_dag(rng, int(rng.integers(5, 30)), float(rng.uniform(0.1, 0.5))),
            random_platform(rng, int(rng.integers(2, 6))),
        )
        for _ in range(20)
    ]


def _recipe_instances() -> list[tuple[Workflow, Platform]]:
    rng = np.random.default_rng(7)
    chosen = [("epigenomics", 50), ("blast", 50), ("srasearch", 50), ("genome", 54)]
    return [
        representable_instance(generate_recipe(name, size, seed=3), random_platform(rng, 4))
        for name, size in chosen
    ]


@pytest.mark.slow
def test_heft_and_cpop_match_saga() -> None:
    require(saga_available(), "SAGA (anrg-saga) is not installed")
    instances = _random_instances() + _recipe_instances()
    worst = 0.0
    for workflow, platform in instances:
        assert exact_in_saga(workflow, platform) == []
        for ours, theirs in ((HEFT(convention="saga"), "heft"), (CPOP(convention="saga"), "cpop")):
            result = plan_and_simulate(ours, workflow, platform, "ideal")
            assert validate_schedule(workflow, platform, result) == []
            saga_makespan = run_saga(theirs, workflow, platform).makespan
            worst = max(worst, abs(result.makespan - saga_makespan) / saga_makespan)
    assert len(instances) >= 20
    assert worst <= 1e-6


def test_saga_peer_schedules_replay_validly() -> None:
    require(saga_available(), "SAGA (anrg-saga) is not installed")
    from policy.peers.saga import SAGA_SCHEDULERS, SagaPeer

    rng = np.random.default_rng(5)
    workflow = random_dag(rng, 12, 0.3, with_inputs=True)
    platform = random_platform(rng, 3, cores=2, latency=1e-3)
    assert exact_in_saga(workflow, platform) != []
    for peer in SAGA_SCHEDULERS:
        result = plan_and_simulate(SagaPeer(peer=peer), workflow, platform, "fair")
        assert validate_schedule(workflow, platform, result) == []
        assert result.scheduler == f"saga-{peer}"
