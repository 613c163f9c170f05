"""Metric functions on hand-computed instances, the one definition both commands print, and
the Gantt lanes they share with the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sim.engine import simulate
from sim.gantt import core_lanes, trace
from sim.metrics import (
    critical_path_bound,
    efficiency,
    lower_bound,
    mean_utilization,
    schedule_length_ratio,
    sequential_time,
    speedup,
    summary,
    utilization,
    work_bound,
)
from sim.model import Node, Task
from sim.platforms import save_platform
from sim.wfformat import write_workflow
from tests.sim.engine_builders import node, pinned, platform, workflow
from wass_chat.cli import main


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
    assert schedule_length_ratio(result.makespan, 4.0) == pytest.approx(4.5 / 4.0)
    assert speedup(result.makespan, 4.5) == pytest.approx(1.0)
    assert efficiency(result.makespan, 4.5, 2) == pytest.approx(0.5)
    assert utilization(result, pf) == pytest.approx({"fast": 1.0, "slow": 0.0})
    assert mean_utilization(result, pf) == pytest.approx(4.5 / (3 * 4.5))
    report = summary(result, wf, pf)
    assert report["makespan"] == result.makespan and report["tasks"] == 4
    assert (report["slr"], report["speedup"], report["efficiency"]) == pytest.approx(
        (4.5 / 4.0, 1.0, 0.5)
    )


def fast_node_too_small() -> tuple:
    """The fastest node (2 Gflop/s) has one core; ``b`` needs two, which only ``wide`` has."""
    wf = workflow(
        [
            Task("a", 2e9),
            Task("b", 4e9, cores=2, parents=("a",)),
            Task("c", 2e9, parents=("a",)),
        ],
        {},
    )
    return wf, platform(Node("fast", 1, speed=2e9), node("wide", cores=2))


def test_sequential_time_is_the_best_single_node_that_hosts_every_task() -> None:
    wf, pf = fast_node_too_small()
    # Topcuoglu et al. 2002: every task on one processor. Only "wide" hosts b: 2 + 2 + 2 s
    # (a node-hopping sum, a and c on "fast", would claim 1 + 2 + 1 = 4 s).
    assert sequential_time(wf, pf) == pytest.approx(6.0)
    # CP_MIN: a and b each on its fastest host, 1 + 2 s; the work bound 8e9 / 4e9 flop/s.
    assert critical_path_bound(wf, pf) == pytest.approx(3.0)
    assert work_bound(wf, pf) == pytest.approx(2.0)


def test_without_a_node_for_every_task_each_task_runs_on_its_fastest_host() -> None:
    wf = workflow([Task("gpu", 2e9, gpus=1), Task("cpu", 4e9, cores=4)], {})
    pf = platform(node("accel", gpus=1), Node("big", 4, speed=2e9))
    # accel cannot host the 4-core task, big has no GPU: 2e9 / 1e9 + 4e9 / (2e9 x 4).
    assert sequential_time(wf, pf) == pytest.approx(2.5)


def test_undefined_ratios_are_nan_not_a_flattering_number() -> None:
    assert math.isnan(schedule_length_ratio(3.0, 0.0))
    assert math.isnan(speedup(0.0, 5.0))


def test_simulate_and_bench_print_the_same_metrics_for_the_same_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both commands compute through this module: equal SLR and speedup, on the platform where
    the two former definitions parted (its fastest node cannot host every task)."""
    wf, pf = fast_node_too_small()
    wf_path, pf_path = tmp_path / "wf.json", tmp_path / "pf.yaml"
    write_workflow(wf, wf_path)
    save_platform(pf, pf_path)
    common = ["--network-model", "ideal"]
    assert (
        main(["simulate", str(wf_path), "-p", str(pf_path), "-s", "heft", *common, "--json"]) == 0
    )
    simulated = json.loads(capsys.readouterr().out)
    bench_json = tmp_path / "bench.json"
    argv = ["bench", "--workflows", str(wf_path), "--platforms", str(pf_path)]
    assert (
        main([*argv, "--schedulers", "heft", "--seeds", "1", *common, "--json", str(bench_json)])
        == 0
    )
    (record,) = json.loads(bench_json.read_text())["records"]
    assert record["makespan"] == simulated["makespan"]
    assert record["slr"] == simulated["slr"] == simulated["makespan"] / 3.0
    assert record["speedup"] == simulated["speedup"] == 6.0 / simulated["makespan"]


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
