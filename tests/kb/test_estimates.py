"""kb estimates: realised executions in a real Chroma store predict runtimes better than users."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kb.estimate_bench import (
    estimate_errors,
    fill_history,
    history_matrix,
    instance_predictions,
)
from kb.estimates import observations, predict_runtimes, realised_case
from kb.store import KnowledgeBase
from policy.bench.matrix import PlatformSource, WorkflowSource, build_matrix
from policy.planning_views import instance_views
from sim.model import REFERENCE_SPEED, File, Task, Workflow
from sim.platforms import ClusterSpec, generate_platform
from sim.uncertainty import UncertaintyConfig, class_slowdown
from sim.wfformat import write_workflow
from wass_chat.cli import main

RUNTIMES = {"prep": 30.0, "align": 200.0, "merge": 60.0}


def staged_workflow(seed: int = 0) -> Workflow:
    """prep -> 12 x align -> merge, runtimes spread +-20% around each category's value."""
    rng = np.random.default_rng(seed)

    def work(category: str) -> float:
        return RUNTIMES[category] * float(rng.uniform(0.8, 1.2)) * REFERENCE_SPEED

    files = [File("raw", 10**8)] + [File(f"chunk{i}", 10**7) for i in range(12)]
    files += [File(f"bam{i}", 10**7) for i in range(12)] + [File("out", 10**6)]
    tasks = [
        Task(
            "prep",
            work("prep"),
            category="prep",
            inputs=("raw",),
            outputs=tuple(f"chunk{i}" for i in range(12)),
        )
    ]
    tasks += [
        Task(
            f"align{i}",
            work("align"),
            category="align",
            inputs=(f"chunk{i}",),
            outputs=(f"bam{i}",),
        )
        for i in range(12)
    ]
    tasks += [
        Task(
            "merge",
            work("merge"),
            category="merge",
            inputs=tuple(f"bam{i}" for i in range(12)),
            outputs=("out",),
        )
    ]
    return Workflow("staged", tuple(tasks), tuple(files))


def test_the_two_way_fit_recovers_class_slowdowns_and_category_runtimes() -> None:
    cfg = UncertaintyConfig(task_sigma=0.05, file_sigma=0.0, class_sigma=0.3, node_sigma=0.0)
    cases = [
        realised_case(
            staged_workflow(s), generate_platform(ClusterSpec(8, True), seed=s), s, cfg, f"w{s}"
        )
        for s in range(6)
    ]
    assert all(observations(c) for c in cases)
    predicted = predict_runtimes(cases)
    classes = sorted(predicted.node_classes)
    assert len(classes) >= 2
    first = classes[0]
    for other in classes[1:]:  # the fit is defined up to one common factor: compare ratios
        truth = class_slowdown(cfg, other) / class_slowdown(cfg, first)
        fitted = predicted.node_classes[other] / predicted.node_classes[first]
        assert fitted == pytest.approx(truth, rel=0.1)
    scale = predicted.node_classes[first] / class_slowdown(cfg, first)
    align = predicted.categories["align"]
    assert align.runtime * scale == pytest.approx(RUNTIMES["align"], rel=0.1)
    assert align.samples == 72 and 0 < align.log_spread < 0.3
    assert predicted.request_ratio < 1.0  # requests over-ask


def test_kb_estimates_beat_user_requests_on_held_out_instances(tmp_path: Path) -> None:
    path = tmp_path / "staged.json"
    write_workflow(staged_workflow(), path)
    workflows = [WorkflowSource("file", str(path))]
    platforms = [PlatformSource("spec", "hetero:8")]
    cfg = UncertaintyConfig()
    kb = KnowledgeBase(tmp_path / "kb")
    try:
        history = history_matrix(workflows, platforms, 4)
        assert min(i.seed for i in history) >= 1000
        assert fill_history(kb, history, cfg) == 4
        assert fill_history(kb, history, cfg) == 0  # same ids: resumable, no duplicates
        bench = build_matrix(workflows, platforms, 2)
        predictions = instance_predictions(kb, bench, cfg, k=4)
    finally:
        kb.close()
    assert all(p.cases == 4 and "align" in p.categories for p in predictions.values())
    errors = estimate_errors(bench, cfg, predictions)
    assert errors["kb"]["mape"] < 0.5 < errors["user"]["mape"]
    assert errors["user"]["bias"]["value"] > 1.5


def test_estimates_commands_seed_a_history_and_report_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "staged.json"
    write_workflow(staged_workflow(), path)
    kb = str(tmp_path / "kb")
    common = ["--workflows", str(path), "--platforms", "hetero:8", "--print-json"]
    assert main(["estimates", "seed", "--kb", kb, "--seeds", "3", *common]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 3
    assert main(["estimates", "error", "--kb", kb, "--seeds", "1", *common]) == 0
    errors = json.loads(capsys.readouterr().out)
    assert errors["instances"] == 1
    assert errors["kb"]["mape"] < errors["user"]["mape"]
    assert main(["estimates", "error", "--kb", str(tmp_path / "missing"), *common]) == 2
    assert "estimates seed" in capsys.readouterr().err
    assert main(["estimates", "error", *common]) == 2  # neither --kb nor --perfect-history
    assert "either --kb DIR or --perfect-history" in capsys.readouterr().err
    assert main(["estimates", "error", "--perfect-history", "--seeds", "1", *common]) == 0
    perfect = json.loads(capsys.readouterr().out)  # only the run's own variation is unknown
    assert 0.0 < perfect["kb"]["median_abs_log_ratio"] < 0.15  # run_sigma 0.1: median 0.067
    assert perfect["kb"]["median_abs_log_ratio"] < errors["kb"]["median_abs_log_ratio"]
    assert perfect["user"] == errors["user"]
    # the bench instance's own earlier runs (a recurring workflow): keyed apart, all stored
    runs = ["--seeds", "1", "--first-seed", "0", "--runs", "2"]
    assert main(["estimates", "seed", "--kb", kb, *runs, *common]) == 0
    assert json.loads(capsys.readouterr().out) == {"planned": 2, "added": 2, "cases": 5, "kb": kb}
    assert main(["estimates", "error", "--kb", kb, "--seeds", "1", *common]) == 0
    recurring = json.loads(capsys.readouterr().out)
    assert recurring["kb"]["median_abs_log_ratio"] < errors["kb"]["median_abs_log_ratio"]


def test_earlier_runs_of_the_same_workflow_predict_each_task_and_node(tmp_path: Path) -> None:
    path = tmp_path / "staged.json"
    write_workflow(staged_workflow(), path)
    workflows = [WorkflowSource("file", str(path))]
    bench = build_matrix(workflows, [PlatformSource("spec", "hetero:8")], 1)
    cfg = UncertaintyConfig()
    kb = KnowledgeBase(tmp_path / "kb")
    try:
        # the same graph on other platforms (history seeds) teaches categories only
        fill_history(kb, history_matrix(workflows, [PlatformSource("spec", "hetero:8")], 2), cfg)
        generic = instance_predictions(kb, bench, cfg)
        assert fill_history(kb, bench, cfg, runs=3) == 3  # runs 1-3 of the bench's instance
        assert fill_history(kb, bench, cfg, runs=3) == 0  # keyed by run: resumable
        recurring = instance_predictions(kb, bench, cfg)
        # found by lookup on the platform, not by similarity: k = 1 still finds all three
        assert instance_predictions(kb, bench, cfg, k=1)[bench[0].id].runs == 3
    finally:
        kb.close()
    (only,) = bench
    before, after = generic[only.id], recurring[only.id]
    assert before.runs == 0 and not before.tasks and not before.nodes
    nodes = [n.name for n in only.platform.build(only.seed).nodes]
    assert after.runs == 3 and len(after.tasks) == 14 and sorted(after.nodes) == sorted(nodes)
    assert 0.05 < after.task_log_spread < 0.2  # run-to-run sigma 0.1
    errors = {
        name: estimate_errors(bench, cfg, {only.id: p})["kb"]["median_abs_log_ratio"]
        for name, p in (("category", before), ("own", after))
    }
    assert errors["own"] < errors["category"]
    # which task comes out slow (sigma 0.3 per task) is what the runs carry: the run the bench
    # measures (run 0, never stored) follows the predicted runtimes task by task
    workflow, platform = only.workflow.build(only.seed), only.platform.build(only.seed)
    actual, _ = instance_views(workflow, platform, only.seed, "oracle", cfg).actual
    predicted = np.log([after.tasks[t.id] for t in actual.tasks])
    assert np.corrcoef(predicted, np.log([t.runtime for t in actual.tasks]))[0, 1] > 0.95
