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
from sim.arrivals import Arrival, Stream, StreamSpec, merge_stream, poisson_stream
from sim.engine import simulate
from sim.errors import ScheduleError
from sim.generators import generate_workflow
from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow
from sim.platforms import generate_platform, gpu_cluster_spec
from sim.schedule import NetworkModel


def _streams() -> list[tuple[Stream, Platform]]:
    cases = []
    for seed in range(3):
        spec = StreamSpec(count=6 + 3 * seed, window=200.0, tasks=(4, 14), ccr=0.5 + seed)
        cases.append((poisson_stream(spec, seed), generate_platform(gpu_cluster_spec(5), seed)))
    return cases


@pytest.mark.parametrize("model", ["fair", "ideal"])
def test_fifo_deft_duplicates_and_no_copy_ever_breaks_a_dependency(model: NetworkModel) -> None:
    copies = 0
    for stream, platform in _streams():
        merged = merge_stream(stream)
        plan = FifoDeft().plan(merged, platform)
        assert validate_schedule(merged, platform, plan.to_result("fifo-deft"), copies=True) == []
        run = plan.to_copy_schedule("fifo-deft")
        result = run.original_result(simulate(run.expanded, platform, run.schedule, model))
        assert validate_schedule(merged, platform, result, copies=True) == []
        assert len(result.tasks) == len(merged.tasks) + plan.copy_count
        if model == "ideal":  # the plan is the execution
            assert result.makespan == pytest.approx(plan.makespan, rel=1e-9)
        copies += plan.copy_count
    assert copies > 0


def _fork() -> tuple[Workflow, Platform]:
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


def test_a_copy_of_the_critical_parent_removes_the_transfer_and_shortens_the_makespan() -> None:
    workflow, platform = _fork()
    plan = FifoDeft().plan(workflow, platform)
    assert plan.copy_count == 1
    assert plan.makespan == pytest.approx(21.0 + 2e-5, rel=1e-6)  # both children start at 1 s
    heft = plan_and_simulate(HEFT(), workflow, platform, "ideal")
    assert heft.makespan > 30.0  # HEFT pays the 10 s transfer or runs the children in turn


def test_the_validator_catches_a_copy_that_feeds_a_child_too_early_or_vanishes() -> None:
    workflow, platform = _fork()
    plan = FifoDeft().plan(workflow, platform)
    result = plan.to_result("fifo-deft")
    copied = next(t for t in plan.copies)
    node = next(iter(plan.copies[copied]))
    early = replace(result, tasks=tuple(
        replace(r, start=r.start + 5.0, end=r.end + 5.0) if (r.task, r.node) == (copied, node)
        else r
        for r in result.tasks
    ))  # fmt: skip
    assert any("before its input" in p for p in validate_schedule(workflow, platform, early,
                                                                 copies=True))  # fmt: skip
    gone = replace(
        result, tasks=tuple(r for r in result.tasks if (r.task, r.node) != (copied, node))
    )
    assert any("never delivered" in p for p in validate_schedule(workflow, platform, gone,
                                                                copies=True))  # fmt: skip
    assert any("ran 2 times" in p for p in validate_schedule(workflow, platform, result))
    twice = replace(result, tasks=(*result.tasks, result.tasks[0]))
    assert any("one copy per node" in p for p in validate_schedule(workflow, platform, twice,
                                                                  copies=True))  # fmt: skip


@pytest.mark.parametrize("make", [lambda: PerArrival(HEFT()), lambda: PerArrival(MinMin()),
                                  OnlineHEFT])  # fmt: skip
@pytest.mark.parametrize("model", ["fair", "ideal"])
def test_online_plans_are_valid_and_start_nothing_before_its_arrival(
    make: object, model: NetworkModel
) -> None:
    for stream, platform in _streams():
        merged = merge_stream(stream)
        result = plan_and_simulate(make(), merged, platform, model)  # type: ignore[operator]
        assert validate_schedule(merged, platform, result) == []


def test_what_was_planned_never_depends_on_later_arrivals() -> None:
    stream, platform = _streams()[2]
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
    stream, platform = _streams()[1]
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
                used = sum(x.cores for x in plan.timelines[node.name].reservations
                           if x.start <= instant < x.end)  # fmt: skip
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
