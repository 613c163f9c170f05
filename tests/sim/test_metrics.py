"""Metric functions on hand-computed instances, and the Gantt lanes they share with the CLI."""

from __future__ import annotations

import pytest

from sim.engine import simulate
from sim.gantt import core_lanes, trace
from sim.metrics import (
    critical_path_bound,
    efficiency,
    lower_bound,
    mean_utilization,
    sequential_time,
    slr,
    speedup,
    summary,
    utilization,
    work_bound,
)
from sim.model import Node, Task
from tests.sim.engine_builders import node, pinned, platform, workflow


def diamond() -> tuple:
    wf = workflow(
        [
            Task("a", 2e9),
            Task("b", 4e9, parents=("a",)),
            Task("c", 1e9, parents=("a",)),
            Task("d", 2e9, parents=("b", "c")),
        ],
        {},
    )
    fast = Node("fast", 1, speed=2e9)
    pf = platform(fast, node("slow", cores=2))
    return wf, pf


def test_bounds_use_the_fastest_node_and_the_aggregate_rate() -> None:
    wf, pf = diamond()
    # Critical path a-b-d on the 2 Gflop/s node: (2 + 4 + 2) / 2 = 4 s.
    assert critical_path_bound(wf, pf) == pytest.approx(4.0)
    # 9e9 flop over 2e9 + 2 x 1e9 flop/s.
    assert work_bound(wf, pf) == pytest.approx(2.25)
    assert lower_bound(wf, pf) == pytest.approx(4.0)
    assert sequential_time(wf, pf) == pytest.approx(4.5)


def test_bounds_respect_which_nodes_can_host_a_task() -> None:
    wf = workflow([Task("wide", 4e9, cores=2)], {})
    pf = platform(Node("fast", 1, speed=4e9), node("slow", cores=2))
    # Only "slow" can host a 2-core task: 4e9 / (1e9 x 2).
    assert critical_path_bound(wf, pf) == pytest.approx(2.0)


def test_ratios_and_utilization_of_a_run() -> None:
    wf, pf = diamond()
    result = simulate(wf, pf, pinned({t.id: "fast" for t in wf.tasks}))
    assert result.makespan == pytest.approx(4.5)
    assert slr(result, wf, pf) == pytest.approx(4.5 / 4.0)
    assert speedup(result, wf, pf) == pytest.approx(1.0)
    assert efficiency(result, wf, pf) == pytest.approx(0.5)
    assert utilization(result, pf) == pytest.approx({"fast": 1.0, "slow": 0.0})
    assert mean_utilization(result, pf) == pytest.approx(4.5 / (3 * 4.5))
    report = summary(result, wf, pf)
    assert report["makespan"] == result.makespan and report["tasks"] == 4


def test_mean_wait_counts_time_from_ready_to_start() -> None:
    wf = workflow([Task("x", 1e9), Task("y", 1e9)], {})
    result = simulate(wf, platform(node("n1")), pinned({"x": "n1", "y": "n1"}))
    assert result.mean_wait == pytest.approx(0.5)  # y waits 1 s for the only core


def test_core_lanes_never_overlap_on_a_node() -> None:
    tasks = [Task("w", 2e9, cores=2), Task("n1", 1e9), Task("n2", 3e9), Task("late", 1e9, cores=3)]
    wf = workflow(tasks, {})
    pf = platform(node("big", cores=4))
    result = simulate(wf, pf, pinned({t.id: "big" for t in tasks}))
    lanes = core_lanes(result, wf, pf)
    assert sorted(lanes["w"] + lanes["n1"] + lanes["n2"]) == [0, 1, 2, 3]
    assert len(lanes["late"]) == 3
    data = trace(result, wf, pf)
    assert data["nodes"] == [{"name": "big", "cores": 4}]
    assert {t["task"]: t["cores"] for t in data["tasks"]}["late"] == 3
