"""Planning around other jobs' memory and queued jobs (#41 item 7): a task whose ``--mem`` does
not fit beside what a node's jobs hold waits or goes elsewhere, in the plan and in the
simulation that predicts it."""

from __future__ import annotations

import pytest

from policy.base import ListScheduler, plan_and_simulate
from policy.registry import get_scheduler
from policy.validate import check_schedule
from sim.engine import simulate
from sim.model import Node, Platform, Task, Workflow
from sim.occupancy import Hold, Occupancy, OccupancyError
from sim.schedule import StaticSchedule

GB = 2**30
LIST_SCHEDULERS = ("heft", "cpop", "peft", "minmin", "maxmin", "sjf", "ljf")
DYNAMIC = ("slurm", "wass", "random")


def _platform() -> Platform:
    """Two equal nodes, n1 listed first (ties go to it), and a small-memory n0."""
    return Platform(
        "mem",
        (
            Node("n1", cores=4, memory=4 * GB),
            Node("n2", cores=4, memory=4 * GB),
            Node("small", cores=8, memory=1 * GB),
        ),
    )


def _fork_join(width: int = 4, memory: int = 2 * GB) -> Workflow:
    """A fork, ``width`` branches, a join; every task asks ``memory`` and runs 10 s on 1 core."""
    tasks = [Task("fork", 10e9, memory=memory)]
    tasks += [Task(f"b{k}", 10e9, memory=memory, parents=("fork",)) for k in range(width)]
    tasks.append(Task("join", 10e9, memory=memory, parents=tuple(f"b{k}" for k in range(width))))
    return Workflow("fork-join", tuple(tasks), ())


# n1's free memory is 1.5 GB for 1000 s (a job holds 2.5 GB and 1 of its 4 cores).
N1_BUSY = Occupancy((Hold("n1", 1, 1000.0, "job-7", memory=int(2.5 * GB)),))


@pytest.mark.parametrize("name", LIST_SCHEDULERS)
def test_a_node_with_too_little_free_memory_is_avoided(name: str) -> None:
    scheduler = get_scheduler(name)
    assert isinstance(scheduler, ListScheduler)
    workflow, platform = _fork_join(), _platform()
    plan = scheduler.plan(workflow, platform, N1_BUSY)
    on_n1 = [t for t, node in plan.placement.items() if node == "n1"]
    assert all(plan.start[t] >= 1000.0 for t in on_n1), {t: plan.start[t] for t in on_n1}
    assert plan.makespan < 1000.0  # it went to n2 rather than wait for n1's memory
    assert "small" not in plan.placement.values()  # 1 GB: never a 2 GB task's node
    check_schedule(workflow, platform, plan.to_result(name))


def test_without_the_memory_hold_heft_takes_n1() -> None:
    """The control: the same hold without memory leaves n1 (listed first) to the fork."""
    cores_only = Occupancy((Hold("n1", 1, 1000.0, "job-7"),))
    plan = get_scheduler("heft").plan(_fork_join(), _platform(), cores_only)  # type: ignore[attr-defined]
    assert plan.placement["fork"] == "n1"
    held = get_scheduler("heft").plan(_fork_join(), _platform(), N1_BUSY)  # type: ignore[attr-defined]
    assert held.placement["fork"] == "n2"


@pytest.mark.parametrize("name", ("heft", *DYNAMIC))
def test_the_prediction_counts_the_memory_hold(name: str) -> None:
    """The simulated run (what ``submit`` predicts) never starts a task on n1 before its
    memory is freed, static plan or dynamic scheduler alike."""
    workflow, platform = _fork_join(), _platform()
    result = plan_and_simulate(get_scheduler(name, seed=0), workflow, platform, "ideal", N1_BUSY)
    for record in result.tasks:
        assert record.node != "small"
        assert record.node != "n1" or record.start >= 1000.0, record


def test_the_simulator_waits_for_a_held_memory() -> None:
    """A static schedule that puts a 2 GB task on n1 starts it when the 2.5 GB hold ends."""
    workflow = Workflow("one", (Task("t", 10e9, memory=2 * GB),), ())
    schedule = StaticSchedule({"t": "n1"}, {"n1": ("t",)}, "pinned", 0.0)
    result = simulate(workflow, _platform(), schedule, "ideal", N1_BUSY)
    assert result.record_by_task["t"].start == pytest.approx(1000.0)
    idle = simulate(workflow, _platform(), schedule, "ideal")
    assert idle.record_by_task["t"].start == 0.0


def test_a_queued_job_takes_its_node_at_its_start() -> None:
    """A hold that begins at 15 s (a pending job's predicted start) takes every core of n1
    until 100 s: the task queued behind one that runs over it waits for its end."""
    workflow = Workflow("two", (Task("a", 20e9), Task("b", 10e9)), ())
    queued = Occupancy((Hold("n1", 4, 100.0, "job-9", start=15.0),))
    schedule = StaticSchedule({"a": "n1", "b": "n1"}, {"n1": ("a", "b")}, "pinned", 0.0)
    narrow = Platform("one", (Node("n1", cores=1, memory=4 * GB),))
    result = simulate(
        workflow, narrow, schedule, "ideal", Occupancy((Hold("n1", 1, 100.0, "job-9", start=15.0),))
    )
    assert result.record_by_task["a"].start == 0.0  # free at 0: a queued job never preempts
    assert result.record_by_task["b"].start == pytest.approx(100.0)
    plan = get_scheduler("heft").plan(workflow, _platform(), queued)  # type: ignore[attr-defined]
    for task, node in plan.placement.items():  # planned around [15, 100) on n1
        if node == "n1":
            assert plan.finish[task] <= 15.0 or plan.start[task] >= 100.0


def test_holds_are_checked_per_instant() -> None:
    platform = _platform()
    apart = Occupancy(
        (
            Hold("n1", 4, 50.0, "a", memory=4 * GB),
            Hold("n1", 4, 90.0, "b", memory=4 * GB, start=50.0),
        )
    )
    apart.check(platform)  # one after the other: never more than the node at once
    together = Occupancy(
        (
            Hold("n1", 2, 50.0, "a", memory=3 * GB),
            Hold("n1", 2, 90.0, "b", memory=2 * GB, start=20.0),
        )
    )
    with pytest.raises(OccupancyError, match="memory"):
        together.check(platform)
    assert not together.from_start and Occupancy((Hold("n1", 1, 5.0),)).from_start
