"""Estimates and actuals (sim.uncertainty) and the background load (sim.background)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sim.background import BackgroundConfig, draw_background, draw_occupancy, parse_load
from sim.engine import simulate
from sim.errors import InputError
from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow
from sim.occupancy import Occupancy
from sim.schedule import StaticSchedule
from sim.uncertainty import (
    CategoryPrediction,
    RuntimePredictions,
    UncertaintyConfig,
    class_slowdown,
    estimate,
    estimate_error,
    node_class,
    planning_platform,
    realise,
    rerun,
    typical_run,
    user_requests,
)


def _workflow() -> Workflow:
    """Two categories: 'a' (10-40 s) feeding 'b' (5 s), files of 1 GB."""
    files = tuple(File(f"f{i}", 10**9) for i in range(4))
    tasks = tuple(
        Task(f"a{i}", (10.0 + 10 * i) * REFERENCE_SPEED, category="a", outputs=(f"f{i}",))
        for i in range(4)
    ) + tuple(
        Task(f"b{i}", 5.0 * REFERENCE_SPEED, category="b", inputs=(f"f{i}",)) for i in range(4)
    )
    return Workflow("two-step", tasks, files)


def _platform() -> Platform:
    nodes = tuple(Node(f"n{i}", cores=4 + 4 * (i % 2), speed=1e9 * (1 + i)) for i in range(4))
    return Platform("lab", nodes)


def test_exact_config_returns_the_nominal_instance() -> None:
    wf, pf = _workflow(), _platform()
    cfg = UncertaintyConfig().scaled(0.0)
    assert cfg.exact
    assert realise(wf, pf, cfg, np.random.default_rng(0)) == (wf, pf)


def test_realise_is_seeded_and_keeps_ids() -> None:
    wf, pf = _workflow(), _platform()
    cfg = UncertaintyConfig()
    one = realise(wf, pf, cfg, np.random.default_rng(3))
    again = realise(wf, pf, cfg, np.random.default_rng(3))
    other = realise(wf, pf, cfg, np.random.default_rng(4))
    assert one == again
    assert one != other
    actual_wf, actual_pf = one
    assert [t.id for t in actual_wf.tasks] == [t.id for t in wf.tasks]
    assert actual_pf.node_names == pf.node_names
    assert any(a.work != t.work for a, t in zip(actual_wf.tasks, wf.tasks, strict=True))
    assert any(a.size != f.size for a, f in zip(actual_wf.files, wf.files, strict=True))


def test_nodes_of_one_class_differ_around_a_persistent_class_slowdown() -> None:
    cfg = UncertaintyConfig(node_sigma=0.1, class_sigma=0.3)
    nodes = tuple(Node(f"n{i}", cores=8, speed=2e9) for i in range(40))
    pf = Platform("same-type", nodes)
    _, actual = realise(_workflow(), pf, cfg, np.random.default_rng(1))
    slowdowns = np.array([2e9 / n.speed for n in actual.nodes])
    assert len(set(slowdowns.round(9))) == len(nodes)  # nodes of one type differ
    expected = class_slowdown(cfg, node_class(nodes[0]))
    assert float(np.exp(np.mean(np.log(slowdowns)))) == pytest.approx(expected, rel=0.06)
    assert class_slowdown(cfg, "cpu-8c") == class_slowdown(
        UncertaintyConfig(class_sigma=0.3), "cpu-8c"
    )


def test_a_node_is_as_slow_for_every_workflow_that_runs_on_its_platform() -> None:
    """The node fit pools a platform's runs of different workflows: that is only sound if a
    node's slowdown is the machine's, not redrawn with each workflow's realisation."""
    cfg = UncertaintyConfig()
    pf = _platform()
    other_wf = Workflow("one-task", (Task("solo", 7.0 * REFERENCE_SPEED),), ())
    _, first = realise(_workflow(), pf, cfg, np.random.default_rng(1))
    _, second = realise(other_wf, pf, cfg, np.random.default_rng(2))
    assert [n.speed for n in first.nodes] == [n.speed for n in second.nodes]
    assert all(a.speed != n.speed for a, n in zip(first.nodes, pf.nodes, strict=True))
    # the same node names on another machine are other machines
    _, elsewhere = realise(_workflow(), Platform("lab-2", pf.nodes), cfg, np.random.default_rng(1))
    assert all(a.speed != b.speed for a, b in zip(first.nodes, elsewhere.nodes, strict=True))
    # and a node's own part is what node_sigma adds to its class's
    classes_only = replace(cfg, node_sigma=0.0)
    _, nominal_own = realise(_workflow(), pf, classes_only, np.random.default_rng(1))
    assert [n.speed for n in nominal_own.nodes] == [
        n.speed / class_slowdown(cfg, node_class(n)) for n in pf.nodes
    ]


def test_user_requests_are_modal_per_category_and_cover_the_longest_task() -> None:
    wf = _workflow()
    cfg = UncertaintyConfig()
    requests = user_requests(wf, cfg)
    assert set(requests) == {"a", "b"}
    assert requests["a"] >= 40.0 and requests["b"] >= 5.0
    assert all(r in cfg.modal_walltimes for r in requests.values())
    planned = estimate(wf, cfg, "user")
    runtimes = {t.id: t.runtime for t in planned.tasks}
    assert [runtimes[f"a{i}"] for i in range(4)] == [pytest.approx(requests["a"])] * 4
    assert planned.files == wf.files


def test_mean_and_oracle_estimates() -> None:
    wf = _workflow()
    cfg = UncertaintyConfig()
    means = {t.id: t.runtime for t in estimate(wf, cfg, "mean").tasks}
    assert means["a0"] == pytest.approx(25.0) and means["b3"] == pytest.approx(5.0)
    assert estimate(wf, cfg, "oracle") is wf


def test_kb_estimates_use_predictions_and_fall_back_to_calibrated_requests() -> None:
    wf, pf = _workflow(), _platform()
    cfg = UncertaintyConfig()
    predictions = RuntimePredictions(
        categories={"a": CategoryPrediction(22.0, 0.2, 12)},
        node_classes={node_class(pf.nodes[0]): 2.0},
        request_ratio=0.1,
    )
    planned = {t.id: t.runtime for t in estimate(wf, cfg, "kb", predictions).tasks}
    assert planned["a2"] == pytest.approx(22.0)
    assert planned["b0"] == pytest.approx(0.1 * user_requests(wf, cfg)["b"])
    slowed = planning_platform(pf, predictions)
    assert slowed.nodes[0].speed == pytest.approx(pf.nodes[0].speed / 2.0)
    assert slowed.nodes[1].speed == pf.nodes[1].speed
    with pytest.raises(InputError):
        estimate(wf, cfg, "kb")
    with pytest.raises(InputError):
        UncertaintyConfig().scaled(-1.0)


def test_estimate_error_is_zero_for_the_oracle_and_large_for_requests() -> None:
    wf, pf = _workflow(), _platform()
    cfg = UncertaintyConfig()
    actual = realise(wf, pf, cfg, np.random.default_rng(0))
    assert estimate_error(actual, actual)["mape"] == 0.0
    user = estimate_error((estimate(wf, cfg, "user"), pf), actual)
    assert user["mape"] > 1.0 and user["bias"] > 2.0  # requests of >= 1 min for 5-40 s tasks


def test_background_load_delays_the_workflow_and_stays_out_of_its_records() -> None:
    wf, pf = _workflow(), _platform()
    schedule = StaticSchedule(
        {**{f"a{i}": f"n{i}" for i in range(4)}, **{f"b{i}": f"n{i}" for i in range(4)}},
        {f"n{i}": (f"a{i}", f"b{i}") for i in range(4)},
    )
    free = simulate(wf, pf, schedule, "ideal")
    busy = Occupancy.whole_nodes(pf, {n: 500.0 for n in pf.node_names})
    result = simulate(wf, pf, schedule, "ideal", busy)
    assert {r.task for r in result.tasks} == {t.id for t in wf.tasks}
    assert min(r.start for r in result.tasks) >= 500.0 - 1e-6
    assert result.makespan == pytest.approx(500.0 + free.makespan, rel=1e-6)


def test_draw_background_picks_a_share_of_nodes_within_the_horizon() -> None:
    wf, pf = _workflow(), _platform()
    busy = draw_background(wf, pf, BackgroundConfig(0.5, 2.0), np.random.default_rng(0))
    assert len(busy) == 2 and set(busy) <= set(pf.node_names)
    span = 2.0 * wf.total_work / pf.total_capacity
    assert all(0 <= u <= span for u in busy.values())
    assert draw_background(wf, pf, BackgroundConfig(0.0), np.random.default_rng(0)) == {}


def test_draw_occupancy_is_seeded_by_instance_and_load_seed() -> None:
    wf, pf = _workflow(), _platform()
    cfg = BackgroundConfig(0.5, 1.0, seed=0)
    one = draw_occupancy(wf, pf, cfg, 7)
    assert one == draw_occupancy(wf, pf, cfg, 7)
    assert len(one.active()) == 2
    assert all(h.cores == pf.node_by_name[h.node].cores for h in one.holds)
    assert one != draw_occupancy(wf, pf, BackgroundConfig(0.5, 1.0, seed=1), 7)
    assert not draw_occupancy(wf, pf, BackgroundConfig(share=0.0), 7)


def test_parse_load_takes_every_parameter_and_reports_every_problem() -> None:
    assert parse_load("") is None and parse_load("none") is None
    assert parse_load("share=0.25") == BackgroundConfig(share=0.25)
    assert parse_load("share=1,horizon=2,seed=3") == BackgroundConfig(1.0, 2.0, 3)
    assert parse_load("seen=0") == BackgroundConfig(seen=False)
    with pytest.raises(InputError) as caught:
        parse_load("share=2,horizon=-1,speed=3,seed=x,seen=maybe")
    assert len(caught.value.problems) == 5


def test_reruns_vary_each_task_alike_around_run_zero_and_keep_files_and_nodes() -> None:
    wf = Workflow(
        "wide", tuple(Task(f"t{i}", 100.0 * REFERENCE_SPEED, category="t") for i in range(400)), ()
    )
    cfg = UncertaintyConfig(run_sigma=0.1)
    assert rerun(wf, cfg, seed=3, run=0) is wf  # run 0 is the realisation itself
    first, second = rerun(wf, cfg, 3, 1), rerun(wf, cfg, 3, 2)
    assert first == rerun(wf, cfg, 3, 1)  # keyed, not stateful
    assert first.files == wf.files and [t.id for t in first.tasks] == [t.id for t in wf.tasks]
    log_1 = np.log([t.work / w.work for t, w in zip(first.tasks, wf.tasks, strict=True)])
    log_2 = np.log([t.work / w.work for t, w in zip(second.tasks, wf.tasks, strict=True)])
    # run r over run 0 is exp(sigma (z_r - z_0)): spread sigma * sqrt(2); two later runs share
    # run 0's term, so they correlate by one half, as any three runs of one task would
    assert np.std(log_1) == pytest.approx(0.1 * np.sqrt(2), rel=0.15)
    assert np.corrcoef(log_1, log_2)[0, 1] == pytest.approx(0.5, abs=0.12)
    assert rerun(wf, UncertaintyConfig(run_sigma=0.0), 3, 1) is wf


def test_the_typical_run_is_what_every_run_varies_around_independently() -> None:
    wf = Workflow(
        "wide", tuple(Task(f"t{i}", 100.0 * REFERENCE_SPEED, category="t") for i in range(400)), ()
    )
    cfg = UncertaintyConfig(run_sigma=0.1)
    typical = typical_run(wf, cfg, seed=3)
    assert typical.files == wf.files and [t.id for t in typical.tasks] == [t.id for t in wf.tasks]
    runs = [rerun(wf, cfg, 3, r) for r in range(3)]
    logs = [
        np.log([t.work / c.work for t, c in zip(run.tasks, typical.tasks, strict=True)])
        for run in runs
    ]
    # around the typical run each run is its own exp(sigma z_r): spread sigma, and two runs
    # share nothing (around run 0 they correlated by one half, the test above)
    assert [np.std(x) for x in logs] == pytest.approx([0.1] * 3, rel=0.15)
    assert abs(np.corrcoef(logs[1], logs[2])[0, 1]) < 0.12
    assert abs(np.corrcoef(logs[0], logs[1])[0, 1]) < 0.12
    assert typical_run(wf, UncertaintyConfig(run_sigma=0.0), 3) is wf


def test_kb_estimates_prefer_a_task_and_a_node_of_their_own() -> None:
    wf, pf = _workflow(), _platform()
    predictions = RuntimePredictions(
        {"a": CategoryPrediction(7.0, 0.1, 4), "b": CategoryPrediction(3.0, 0.1, 4)},
        {node_class(pf.nodes[0]): 2.0},
        tasks={"a1": 19.0},
        nodes={"n0": 1.25},
        runs=3,
    )
    planned = estimate(wf, UncertaintyConfig(), "kb", predictions)
    runtimes = {t.id: t.runtime for t in planned.tasks}
    assert runtimes["a1"] == pytest.approx(19.0)  # its own
    assert runtimes["a0"] == runtimes["a2"] == pytest.approx(7.0)  # its category's
    nodes = planning_platform(pf, predictions).nodes
    assert nodes[0].speed == pytest.approx(pf.nodes[0].speed / 1.25)  # its own, not its class's
    assert nodes[2].speed == pytest.approx(pf.nodes[2].speed / 2.0)  # n2 shares n0's class
