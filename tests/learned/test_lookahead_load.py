"""``policy-lookahead`` on a busy cluster: every rollout starts from the holds the plan starts
from, as every other planner does (sim.occupancy; ``rag-guarded-lookahead`` judges its
candidates on the same load: tests/policy/test_busy_planning.py)."""

from __future__ import annotations

import pytest

from policy.learned.instances import InstanceSpec, materialize
from policy.learned.lookahead import LookaheadPolicy
from policy.learned.planner import load_policy_net
from policy.learned.rollout import replayed_makespan
from policy.registry import get_scheduler
from policy.validate import validate_schedule
from sim import fast
from sim.engine import simulate
from sim.model import Platform
from sim.occupancy import Hold, Occupancy

FOREVER = 1e7
"""A hold no sensible plan waits for."""
DATA_BOUND = InstanceSpec("montage", 60, 8, 1, 1.0)
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _busy(platform: Platform) -> Occupancy:
    """The fastest node held for good, the next one's cores half held for a while."""
    fast_first = sorted(platform.nodes, key=lambda n: -n.speed * n.cores)
    first, second = fast_first[0], fast_first[1]
    return Occupancy(
        (
            Hold(first.name, first.cores, FOREVER, "job-1"),
            Hold(second.name, max(1, second.cores // 2), 200.0, "job-2"),
        )
    )


def test_lookahead_plans_around_the_holds_and_never_loses_to_greedy_on_them() -> None:
    workflow, platform = materialize(DATA_BOUND)
    occupancy = _busy(platform)
    planner = get_scheduler("policy-lookahead")
    schedule = planner.schedule(workflow, platform, occupancy)  # type: ignore[union-attr]
    run = simulate(workflow, platform, schedule, "fair", occupancy)
    assert validate_schedule(workflow, platform, run) == []
    held = occupancy.holds[0].node
    assert held not in schedule.assignment.values()  # it went elsewhere rather than wait
    assert schedule.planned_makespan == pytest.approx(run.makespan)
    greedy = get_scheduler("policy").schedule(workflow, platform, occupancy)  # type: ignore[union-attr]
    greedy_span = simulate(workflow, platform, greedy, "fair", occupancy).makespan
    assert run.makespan <= greedy_span * (1 + 1e-9)  # rollout improvement, on the same load
    idle = planner.schedule(workflow, platform)  # type: ignore[union-attr]
    assert held in idle.assignment.values()  # so the load, not chance, moved the plan


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_forked_rollouts_under_load_plan_what_re_simulating_with_the_holds_plans(
    engine: str,
) -> None:
    if engine == "compiled" and not fast.AVAILABLE:
        pytest.skip("sim._core is not built")
    net = load_policy_net()
    workflow, platform = materialize(InstanceSpec("srasearch", 28, 4, 2, 1.0))
    occupancy = _busy(platform)
    runs = {}
    for fork in (True, False):
        expert = LookaheadPolicy(net, workflow, platform, "fair", occupancy=occupancy)
        expert.fork = fork
        with fast.engine(engine):
            makespan, plan = replayed_makespan(workflow, platform, expert, "fair", occupancy)
        labels = [b.tolist() for b in expert.trajectory.best]
        runs[fork] = (makespan, plan.assignment, plan.order, labels)
    assert runs[True] == runs[False]
    idle = LookaheadPolicy(net, workflow, platform, "fair")
    assert replayed_makespan(workflow, platform, idle, "fair")[1].assignment != runs[True][1]
