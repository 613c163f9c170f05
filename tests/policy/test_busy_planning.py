"""Planning on a busy cluster: every scheduler starts from the same occupancy (sim.occupancy)."""

from __future__ import annotations

import pytest

from policy.base import ListScheduler, StaticScheduler, plan_and_simulate
from policy.heft import HEFT
from policy.peft import PEFT
from policy.registry import get_scheduler, scheduler_names
from policy.validate import check_schedule
from sim.engine import simulate
from sim.model import Platform, Workflow
from sim.occupancy import Hold, Occupancy, OccupancyError
from tests.policy.conftest import LEARNED_VARIANTS, ZOO

LIST_SCHEDULERS = ("heft", "cpop", "peft", "minmin", "maxmin", "sjf", "ljf")
DYNAMIC = ("slurm", "wass", "random", "policy")
FOREVER = 1e7
"""A hold no sensible plan waits for."""


def _busy(platform: Platform) -> Occupancy:
    """The first node held for good, the second half held for a while."""
    first, second = platform.nodes[0], platform.nodes[1]
    return Occupancy(
        (
            Hold(first.name, first.cores, FOREVER, "job-1"),
            Hold(second.name, max(1, second.cores // 2), 30.0, "job-2"),
        )
    )


@pytest.mark.parametrize("name", LIST_SCHEDULERS)
@pytest.mark.parametrize(("workflow", "platform"), ZOO, ids=[f"{w.name}@{p.name}" for w, p in ZOO])
def test_list_schedulers_plan_around_the_holds(
    name: str, workflow: Workflow, platform: Platform
) -> None:
    scheduler = get_scheduler(name)
    assert isinstance(scheduler, ListScheduler)
    occupancy = _busy(platform)
    plan = scheduler.plan(workflow, platform, occupancy)
    held = platform.nodes[0].name
    assert all(plan.placement[t] != held or plan.start[t] >= FOREVER for t in plan.placement)
    assert max(plan.finish.values()) < FOREVER  # it went elsewhere rather than wait
    check_schedule(workflow, platform, plan.to_result(name))
    replayed = simulate(workflow, platform, plan.to_schedule(name), "ideal", occupancy)
    assert replayed.makespan < FOREVER


@pytest.mark.parametrize("name", LIST_SCHEDULERS)
def test_an_idle_occupancy_plans_as_before(name: str) -> None:
    workflow, platform = ZOO[-1]
    scheduler = get_scheduler(name)
    assert isinstance(scheduler, StaticScheduler)
    ended = Occupancy((Hold(platform.nodes[0].name, 1, 0.0),))
    before = scheduler.schedule(workflow, platform)
    assert scheduler.schedule(workflow, platform, Occupancy()) == before
    assert scheduler.schedule(workflow, platform, ended) == before


def test_a_hold_shifts_heft_onto_the_free_nodes() -> None:
    workflow, platform = ZOO[-1]
    idle = HEFT().plan(workflow, platform)
    favourite = max(platform.node_names, key=list(idle.placement.values()).count)
    node = platform.node_by_name[favourite]
    busy = HEFT().plan(workflow, platform, Occupancy((Hold(favourite, node.cores, FOREVER),)))
    assert favourite in idle.placement.values()
    assert favourite not in busy.placement.values()
    assert idle.makespan <= busy.makespan < FOREVER


@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_schedulers_see_the_holds(name: str) -> None:
    workflow, platform = ZOO[-1]
    result = plan_and_simulate(
        get_scheduler(name, seed=0), workflow, platform, "fair", _busy(platform)
    )
    held = platform.nodes[0].name
    assert all(r.start >= FOREVER for r in result.tasks if r.node == held)
    if name != "random":  # the others estimate finish times, so they avoid the held node
        assert result.makespan < FOREVER


@pytest.mark.parametrize("name", ["rag-guarded", "rag-guarded-lookahead"])
@pytest.mark.parametrize(("workflow", "platform"), ZOO[-4:], ids=[p.name for _, p in ZOO[-4:]])
def test_rag_guarded_judges_its_candidates_on_the_same_load(
    workflow: Workflow, platform: Platform, name: str
) -> None:
    occupancy = _busy(platform)
    guard = get_scheduler(name)
    schedule = guard.schedule(workflow, platform, occupancy)  # type: ignore[union-attr]
    mine = simulate(workflow, platform, schedule, "fair", occupancy).makespan
    classics = min(
        simulate(
            workflow, platform, s.schedule(workflow, platform, occupancy), "fair", occupancy
        ).makespan
        for s in (HEFT(), PEFT())
    )
    assert mine <= classics + 1e-9
    assert schedule.planned_makespan == pytest.approx(mine)


def test_holds_that_do_not_fit_are_refused_by_the_planner() -> None:
    workflow, platform = ZOO[0]
    bad = Occupancy((Hold("nowhere", 1, 5.0),))
    with pytest.raises(OccupancyError, match="unknown node 'nowhere'"):
        HEFT().schedule(workflow, platform, bad)


def test_every_static_scheduler_takes_an_occupancy() -> None:
    """The registry's static schedulers all accept the keyword (the lookahead's own checks
    under a load: tests/learned/test_lookahead_load.py)."""
    workflow, platform = ZOO[3]
    for name in scheduler_names():
        if name in LEARNED_VARIANTS and name not in ("rag-guarded", "policy-lookahead"):
            continue
        scheduler = get_scheduler(name, seed=0)
        if isinstance(scheduler, StaticScheduler):
            schedule = scheduler.schedule(workflow, platform, _busy(platform))
            assert set(schedule.assignment) == {t.id for t in workflow.tasks}
