"""The bench under uncertainty: oracle reproduces the exact bench, estimates are replayed."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from policy.bench.instances import random_dag
from policy.bench.matrix import Instance, PlatformSource, WorkflowSource, build_matrix
from policy.bench.runner import RunSpec, run_instance, run_matrix
from policy.planning_views import (
    expected_makespan,
    instance_views,
    perfect_history,
    plan,
    replay,
    reruns,
)
from policy.registry import get_scheduler
from sim.background import BackgroundConfig
from sim.uncertainty import UncertaintyConfig, estimate, typical_run
from sim.wfformat import write_workflow
from wass_chat.cli import main
from wass_chat.cli.estimate_cmds import perfect_predictions

CLASSICS = ("heft", "peft", "cpop", "minmin")


@pytest.fixture
def matrix(tmp_path: Path) -> list[Instance]:
    path = tmp_path / "dag.json"
    dag = random_dag(np.random.default_rng(5), 14, 0.3, with_inputs=True)
    write_workflow(dag, path)
    platforms = [PlatformSource("spec", "hetero:4"), PlatformSource("spec", "homo:4")]
    return build_matrix([WorkflowSource("file", str(path))], platforms, 2)


def _makespans(outcomes: list) -> dict[tuple[str, str], float]:
    return {(r.instance, r.scheduler): r.makespan for o in outcomes for r in o.records}


def test_oracle_without_noise_reproduces_the_exact_bench(matrix: list[Instance]) -> None:
    plain = run_matrix(matrix, RunSpec((*CLASSICS, "rag-guarded", "slurm")))
    oracle = run_matrix(
        matrix, RunSpec((*CLASSICS, "rag-guarded", "slurm"), estimates="oracle", noise=0.0)
    )
    assert _makespans(oracle) == _makespans(plain)
    assert [o.workflow_sha256 for o in oracle] == [o.workflow_sha256 for o in plain]


def test_user_estimates_are_planned_then_replayed_on_the_actuals(
    matrix: list[Instance],
) -> None:
    instance = matrix[0]
    spec = RunSpec(CLASSICS, estimates="user")
    outcome = run_instance(instance, spec)
    workflow = instance.workflow.build(instance.seed)
    platform = instance.platform.build(instance.seed)
    cfg = UncertaintyConfig()
    views = instance_views(workflow, platform, instance.seed, "user", cfg)
    assert views.planning[0] == estimate(workflow, cfg, "user")
    assert views.actual[0] != workflow  # realised noise
    for record in outcome.records:
        schedule = plan(get_scheduler(record.scheduler), views, "fair")
        result, makespan = replay(schedule, views, "fair")
        assert record.makespan == makespan == result.makespan
        assert record.planned_makespan == schedule.planned_makespan
        assert record.planned_makespan != pytest.approx(record.makespan, rel=1e-3)
    oracle = run_instance(instance, replace(spec, estimates="oracle"))
    heft = {r.scheduler: r.makespan for r in oracle.records}["heft"]
    assert heft == pytest.approx(
        replay(get_scheduler("heft").schedule(*views.actual), views, "fair")[1]
    )


def test_a_busy_cluster_is_planned_around_and_run_on(matrix: list[Instance]) -> None:
    instance = matrix[1]
    load = BackgroundConfig(share=1.0)
    empty = run_instance(instance, RunSpec(CLASSICS, estimates="oracle", noise=0.0))
    busy = run_instance(instance, RunSpec(CLASSICS, estimates="oracle", noise=0.0, load=load))
    workflow = instance.workflow.build(instance.seed)
    platform = instance.platform.build(instance.seed)
    views = instance_views(
        workflow, platform, instance.seed, "oracle", UncertaintyConfig().scaled(0.0), None, load
    )
    until = views.occupancy.busy_until()
    assert set(until) == set(platform.node_names)
    assert busy.load == views.occupancy.holds
    for record in busy.records:
        schedule = plan(get_scheduler(record.scheduler), views, "fair")
        result, makespan = replay(schedule, views, "fair")
        assert makespan == record.makespan == result.makespan
        assert schedule.planned_makespan == record.planned_makespan
        assert all(r.start >= until[r.node] - 1e-6 for r in result.tasks)
    before = sum(r.makespan for r in empty.records)
    assert sum(r.makespan for r in busy.records) > before


def test_a_hidden_load_is_planned_for_an_idle_machine_and_run_busy(
    matrix: list[Instance],
) -> None:
    instance = matrix[0]
    seen = BackgroundConfig(share=1.0, horizon=4.0)
    hidden = BackgroundConfig(share=1.0, horizon=4.0, seen=False)
    idle = run_instance(instance, RunSpec(CLASSICS, estimates="oracle", noise=0.0))
    shown = run_instance(instance, RunSpec(CLASSICS, estimates="oracle", noise=0.0, load=seen))
    blind = run_instance(instance, RunSpec(CLASSICS, estimates="oracle", noise=0.0, load=hidden))
    assert blind.load == shown.load != ()
    for i, b, s in zip(idle.records, blind.records, shown.records, strict=True):
        assert b.planned_makespan == i.planned_makespan  # planned as if idle
        assert s.planned_makespan is not None and i.planned_makespan is not None
        assert s.planned_makespan >= i.planned_makespan  # planned around the load
        assert b.makespan >= i.makespan
    assert sum(r.makespan for r in blind.records) > sum(r.makespan for r in idle.records)
    assert sum(r.planned_makespan or 0 for r in shown.records) > sum(
        r.planned_makespan or 0 for r in idle.records
    )


def test_a_perfect_history_knows_every_node_and_every_task_but_the_run_itself(
    matrix: list[Instance],
) -> None:
    instance = matrix[0]
    workflow = instance.workflow.build(instance.seed)
    platform = instance.platform.build(instance.seed)
    cfg = UncertaintyConfig()
    known = perfect_history(workflow, platform, instance.seed, cfg)
    views = instance_views(workflow, platform, instance.seed, "kb", cfg, known)
    actual_wf, actual_pf = views.actual
    assert [n.speed for n in views.planning[1].nodes] == pytest.approx(
        [n.speed for n in actual_pf.nodes], rel=1e-12
    )
    planned = [t.work for t in views.planning[0].tasks]
    assert planned == pytest.approx(
        [t.work for t in typical_run(actual_wf, cfg, instance.seed).tasks]
    )
    assert planned != pytest.approx([t.work for t in actual_wf.tasks], rel=1e-3)  # run 0's own draw
    # with no run-to-run variation and exact files it is the oracle: HEFT plans alike
    exact = replace(cfg, run_sigma=0.0, file_sigma=0.0)
    known = perfect_history(workflow, platform, instance.seed, exact)
    kb = instance_views(workflow, platform, instance.seed, "kb", exact, known)
    oracle = instance_views(workflow, platform, instance.seed, "oracle", exact)
    heft = get_scheduler("heft")
    on_kb, on_oracle = plan(heft, kb, "fair"), plan(heft, oracle, "fair")
    assert on_kb.assignment == on_oracle.assignment and on_kb.order == on_oracle.order
    assert on_kb.planned_makespan == pytest.approx(on_oracle.planned_makespan, rel=1e-9)


def test_reruns_give_each_plan_its_mean_over_fresh_runs_of_the_instance(
    matrix: list[Instance],
) -> None:
    instance = matrix[0]
    spec = RunSpec(("heft", "peft"), estimates="user", load=BackgroundConfig(share=0.5))
    once = run_instance(instance, spec)
    again = run_instance(instance, replace(spec, reruns=4))
    assert [r.makespan for r in again.records] == [r.makespan for r in once.records]
    assert all(r.expected_makespan is None for r in once.records)
    workflow = instance.workflow.build(instance.seed)
    platform = instance.platform.build(instance.seed)
    cfg = UncertaintyConfig()
    views = instance_views(workflow, platform, instance.seed, "user", cfg, None, spec.load)
    runs = reruns(views, cfg, instance.seed, 4)
    works = {tuple(t.work for t in w.tasks) for w in [views.actual[0], *runs]}
    assert len(works) == 5  # four fresh runs, none of them run 0
    for record in again.records:
        schedule = plan(get_scheduler(record.scheduler), views, "fair")
        by_hand = [
            replay(schedule, replace(views, actual=(w, views.actual[1])), "fair")[1] for w in runs
        ]
        assert record.expected_makespan == pytest.approx(sum(by_hand) / 4, rel=1e-12)
        assert record.expected_makespan == expected_makespan(schedule, views, runs, "fair")
        assert record.expected_makespan != pytest.approx(record.makespan, rel=1e-6)


def test_bench_cli_checks_the_uncertainty_flags(tmp_path: Path, capsys) -> None:
    args = ["bench", "--recipes", "montage:60", "--schedulers", "heft", "--seeds", "1"]
    assert main([*args, "--estimates", "psychic", "--load", "share=2,speed=1"]) == 2
    err = capsys.readouterr().err
    assert "psychic" in err and "--load: share must be in [0, 1]" in err and "speed" in err
    assert main([*args, "--estimates", "kb", "--kb", str(tmp_path / "none")]) == 2
    assert "--kb DIR" in capsys.readouterr().err
    assert main([*args, "--perfect-history"]) == 2  # no estimates to calibrate
    assert main([*args, "--estimates", "kb", "--perfect-history", "--kb", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("--perfect-history replaces --kb") == 2
    assert main([*args, "--reruns", "5"]) == 2  # the exact setting has no run variation
    assert main([*args, "--reruns", "5", "--estimates", "user", "--noise", "0"]) == 2
    assert capsys.readouterr().err.count("--reruns redraws the run's own variation") == 2
    peers = ["bench", "--recipes", "montage:60", "--schedulers", "heft", "--peers", "saga"]
    assert main([*peers, "--seeds", "1", "--load", "share=0.5"]) == 2
    assert "plans on an idle cluster only" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_cli_under_user_estimates_writes_the_settings(
    matrix: list[Instance], tmp_path: Path
) -> None:
    out = tmp_path / "b.json"
    code = main(
        [
            "bench",
            "--workflows",
            matrix[0].workflow.name,
            "--platforms",
            "hetero:4",
            "--schedulers",
            "heft,peft",
            "--seeds",
            "1",
            "--estimates",
            "user",
            "--load",
            "share=0.5,seed=2",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    document = json.loads(out.read_text())
    assert document["settings"]["estimates"] == "user"
    load = BackgroundConfig(share=0.5, seed=2)
    assert (
        document["run"]["load"]
        == document["settings"]["load"]
        == {
            "share": 0.5,
            "horizon": 1.0,
            "seed": 2,
            "seen": True,
        }
    )
    direct = run_instance(matrix[0], RunSpec(("heft", "peft"), estimates="user", load=load))
    assert [r["makespan"] for r in document["records"]] == [r.makespan for r in direct.records]
    assert document["instances"][0]["load"] == [
        {
            "node": h.node,
            "cores": h.cores,
            "until": h.until,
            "job": "background",
            "memory": h.memory,
            "start": h.start,
        }
        for h in direct.load
    ]


def test_bench_cli_plans_on_a_perfect_history(matrix: list[Instance], tmp_path: Path) -> None:
    out = tmp_path / "b.json"
    code = main(
        [
            "bench",
            "--workflows",
            matrix[0].workflow.name,
            "--platforms",
            "hetero:4",
            "--schedulers",
            "heft,rag-guarded",
            "--seeds",
            "1",
            "--estimates",
            "kb",
            "--perfect-history",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    document = json.loads(out.read_text())
    assert document["settings"]["perfect_history"] is True
    instances = [matrix[0]]
    direct = run_matrix(
        instances,
        RunSpec(("heft", "rag-guarded"), estimates="kb"),
        predictions=perfect_predictions(instances, 1.0, 0),
    )
    assert [r["makespan"] for r in document["records"]] == [
        r.makespan for o in direct for r in o.records
    ]
