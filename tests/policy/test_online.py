"""Online planning of streams and FIFO-DEFT's duplication: valid, online, and never breaking a
dependency (the validator checks every schedule, copies included)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from policy.base import plan_and_simulate
from policy.fifo_deft import FifoDeft
from policy.heft import HEFT
from policy.minmin import MinMin
from policy.online import OnlineHEFT, PerArrival, batch_workflow, held_cores
from policy.validate import validate_schedule
from sim.arrivals import Arrival, Stream, merge_stream
from sim.engine import simulate
from sim.errors import ScheduleError
from sim.generators import generate_workflow
from sim.model import File, Node, Platform, Task, Workflow
from sim.platforms import generate_platform, gpu_cluster_spec
from sim.schedule import NetworkModel
from tests.policy.conftest import checked_copy_run, fork_over_slow_links, small_gpu_streams


@pytest.mark.parametrize("model", ["fair", "ideal"])
def test_fifo_deft_duplicates_and_no_copy_ever_breaks_a_dependency(model: NetworkModel) -> None:
    copies = 0
    for stream, platform in small_gpu_streams():
        merged = merge_stream(stream)
        plan, _ = checked_copy_run(FifoDeft(), merged, platform, model)
        copies += plan.copy_count
    assert copies > 0


def test_a_copy_of_the_critical_parent_removes_the_transfer_and_shortens_the_makespan() -> None:
    workflow, platform = fork_over_slow_links()
    plan = FifoDeft().plan(workflow, platform)
    assert plan.copy_count == 1
    assert plan.makespan == pytest.approx(21.0 + 2e-5, rel=1e-6)  # both children start at 1 s
    heft = plan_and_simulate(HEFT(), workflow, platform, "ideal")
    assert heft.makespan > 30.0  # HEFT pays the 10 s transfer or runs the children in turn


def test_the_validator_catches_a_copy_that_feeds_a_child_too_early_or_vanishes() -> None:
    workflow, platform = fork_over_slow_links()
    plan = FifoDeft().plan(workflow, platform)
    result = plan.to_result("fifo-deft")
    copied = next(t for t in plan.copies)
    node = next(iter(plan.copies[copied]))
    early = replace(
        result,
        tasks=tuple(
            replace(r, start=r.start + 5.0, end=r.end + 5.0)
            if (r.task, r.node) == (copied, node)
            else r
            for r in result.tasks
        ),
    )
    assert any(
        "before its input" in p for p in validate_schedule(workflow, platform, early, copies=True)
    )
    gone = replace(
        result, tasks=tuple(r for r in result.tasks if (r.task, r.node) != (copied, node))
    )
    assert any(
        "never delivered" in p for p in validate_schedule(workflow, platform, gone, copies=True)
    )
    assert any("ran 2 times" in p for p in validate_schedule(workflow, platform, result))
    twice = replace(result, tasks=(*result.tasks, result.tasks[0]))
    assert any(
        "one copy per node" in p for p in validate_schedule(workflow, platform, twice, copies=True)
    )


@pytest.mark.parametrize(
    "make", [lambda: PerArrival(HEFT()), lambda: PerArrival(MinMin()), OnlineHEFT]
)
@pytest.mark.parametrize("model", ["fair", "ideal"])
def test_online_plans_are_valid_and_start_nothing_before_its_arrival(
    make: object, model: NetworkModel
) -> None:
    for stream, platform in small_gpu_streams():
        merged = merge_stream(stream)
        result = plan_and_simulate(make(), merged, platform, model)  # type: ignore[operator]
        assert validate_schedule(merged, platform, result) == []


def test_what_was_planned_never_depends_on_later_arrivals() -> None:
    stream, platform = small_gpu_streams()[2]
    merged = merge_stream(stream)
    early = Stream("early", stream.arrivals[:4])
    merged_early = merge_stream(early)
    for scheduler in (PerArrival(HEFT()), PerArrival(MinMin())):
        full = scheduler.schedule(merged, platform)
        part = scheduler.schedule(merged_early, platform)
        assert {t: full.assignment[t] for t in part.assignment} == dict(part.assignment)
    full_plan = FifoDeft().plan(merged, platform)
    part_plan = FifoDeft().plan(merged_early, platform)
    assert {t: full_plan.start[t] for t in part_plan.start} == part_plan.start
    # Online HEFT revisits what had not started: what started before the 5th arrival stays.
    fifth = stream.arrivals[4].time
    online = OnlineHEFT().schedule(merged, platform)
    part = OnlineHEFT().schedule(merged_early, platform)
    replayed = simulate(merged_early, platform, part, "ideal")
    started = {r.task for r in replayed.tasks if r.start < fifth}
    assert started and all(online.assignment[t] == part.assignment[t] for t in started)


def test_online_heft_on_a_single_workflow_is_heft() -> None:
    workflow = generate_workflow("layered", 30, seed=4)
    platform = generate_platform(gpu_cluster_spec(6), seed=4)
    assert OnlineHEFT().schedule(workflow, platform).assignment == (
        HEFT().schedule(workflow, platform).assignment
    )


def test_held_cores_cover_every_planned_core_and_never_exceed_a_node() -> None:
    stream, platform = small_gpu_streams()[1]
    merged = merge_stream(stream)
    plan = HEFT().plan(merged, platform)
    time = stream.arrivals[3].time
    holds = held_cores(plan, time)
    holds.check(platform)  # never more than a node has
    for node in platform.nodes:
        mine = [h for h in holds.holds if h.node == node.name]
        for r in plan.timelines[node.name].reservations:
            for instant in (max(r.start, time), (max(r.start, time) + r.end) / 2):
                if instant >= r.end:
                    continue
                used = sum(
                    x.cores
                    for x in plan.timelines[node.name].reservations
                    if x.start <= instant < x.end
                )
                held = sum(h.cores for h in mine if h.until > instant - time)
                assert held >= used


def test_a_batch_depending_on_another_batch_is_refused() -> None:
    tasks = (Task("a", 1.0, outputs=("f",)), Task("b", 1.0, inputs=("f",), release=5.0))
    workflow = Workflow("split", tasks, (File("f", 1),))
    with pytest.raises(ScheduleError, match="arrivals must be whole workflows"):
        batch_workflow(workflow, ("b",))
    with pytest.raises(ScheduleError):
        PerArrival(HEFT()).schedule(workflow, Platform("p", (Node("n", 1),)))


def test_a_stream_of_one_workflow_per_arrival_merges_ids_and_releases() -> None:
    wf = generate_workflow("chain", 3, seed=0)
    merged = merge_stream(Stream("s", (Arrival(0.0, wf), Arrival(7.0, wf))))
    assert {t.release for t in merged.tasks if t.id.startswith("w001/")} == {7.0}
    assert len(merged.tasks) == 6 and len(merged.files) == 2 * len(wf.files)
