"""The CP-SAT optimum is a floor for every scheduler on small instances."""

from __future__ import annotations

import importlib.util

import pytest

from policy.base import plan_and_simulate
from policy.bench.optimality import mean_gaps, optimality_study, small_instances
from policy.optimal import solve_optimal
from policy.registry import get_scheduler, scheduler_names
from policy.validate import validate_schedule
from sim.engine import simulate
from tests.support import require


def _require_ortools() -> None:
    found = importlib.util.find_spec("ortools") is not None
    require(found, "OR-Tools (the bench extra) is not installed")


CLASSIC = tuple(n for n in scheduler_names() if not n.startswith(("policy", "rag-guarded")))
"""The list schedulers (milliseconds each); the learned ones take seconds."""


@pytest.mark.slow
def test_optimum_is_at_most_every_scheduler() -> None:
    _require_ortools()
    for k, (workflow, platform) in enumerate(small_instances(5, seed=9)):
        solution = solve_optimal(workflow, platform)
        assert solution.proven_optimal
        replayed = simulate(workflow, platform, solution.schedule, "ideal")
        assert validate_schedule(workflow, platform, replayed) == []
        assert solution.lower_bound <= replayed.makespan <= solution.makespan + 1e-9
        # The learned schedulers (seconds each) on the first instance; the classic ones on all.
        for name in scheduler_names() if k == 0 else CLASSIC:
            result = plan_and_simulate(get_scheduler(name, seed=0), workflow, platform, "ideal")
            assert solution.lower_bound <= result.makespan + 1e-9


def test_gap_study_reports_nonnegative_gaps() -> None:
    _require_ortools()
    records = optimality_study(("heft", "peft", "slurm"), count=3, seed=1)
    gaps = mean_gaps(records)
    assert set(gaps) == {"heft", "peft", "slurm"}
    assert all(g >= -1e-4 for g in gaps.values())  # within the solver's rounding
    assert gaps["slurm"] >= gaps["heft"] - 1e-4
