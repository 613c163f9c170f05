"""The hierarchical node fit: other recurring workflows measure the nodes this one never used."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kb.estimate_bench import estimate_errors, fill_history, history_matrix, instance_predictions
from kb.estimates import observations
from kb.node_fit import NODE_SIGMA
from kb.store import KnowledgeBase
from policy.bench.matrix import PlatformSource, WorkflowSource, build_matrix
from policy.planning_views import instance_views
from sim.uncertainty import UncertaintyConfig, class_slowdown, node_class
from sim.wfformat import write_workflow
from tests.kb.test_estimates import staged_workflow


def test_recurring_runs_elsewhere_predict_the_nodes_a_workflow_never_used(tmp_path: Path) -> None:
    path = tmp_path / "staged.json"
    write_workflow(staged_workflow(), path)
    workflows = [WorkflowSource("file", str(path))]
    platforms = [PlatformSource("spec", "hetero:8")]
    bench = build_matrix(workflows, platforms, 1)
    cfg = UncertaintyConfig()
    kb = KnowledgeBase(tmp_path / "kb")
    try:
        fill_history(kb, bench, cfg, runs=3)  # this workflow's own earlier runs
        alone = instance_predictions(kb, bench, cfg)
        own_runs = kb.recurring_cases()
        # the same pipeline recurring on four other platforms: runs that measured their classes
        fill_history(kb, history_matrix(workflows, platforms, 4), cfg, runs=3)
        assert len(kb.recurring_cases()) == 15 and len(kb.recurring_cases(limit=4)) == 4
        wider = instance_predictions(kb, bench, cfg)
    finally:
        kb.close()
    (only,) = bench
    workflow, platform = only.workflow.build(only.seed), only.platform.build(only.seed)
    used = {o.node for c in own_runs for o in observations(c)}
    unseen = [n for n in platform.nodes if n.name not in used]
    actual = instance_views(workflow, platform, only.seed, "oracle", cfg).actual[1]
    slowdown = {
        n.name: n.speed / a.speed for n, a in zip(platform.nodes, actual.nodes, strict=True)
    }
    assert unseen, "HEFT on loose requests leaves some nodes of hetero:8 unused"
    # alone, an unseen node of a class the runs never reached stays at nominal speed; with the
    # others' runs, it gets its class's slowdown
    reached = {node_class(n) for n in platform.nodes if n.name in used}
    classes = {node_class(n) for n in unseen} - reached
    assert classes, "some class of hetero:8 is left unused"
    nominal = [n for n in unseen if node_class(n) in classes]
    assert all(alone[only.id].nodes[n.name] == 1.0 for n in nominal)
    assert all(wider[only.id].nodes[n.name] != 1.0 for n in nominal)

    def error(p: dict[str, float]) -> float:
        return float(np.mean([abs(math.log(p[n.name] / slowdown[n.name])) for n in unseen]))

    assert error(wider[only.id].nodes) < error(alone[only.id].nodes)
    # and the class each unseen node was given is its class's true slowdown, within its noise
    for klass in classes:
        members = [n for n in nominal if node_class(n) == klass]
        predicted = np.mean([math.log(wider[only.id].nodes[n.name]) for n in members])
        assert abs(predicted - math.log(class_slowdown(cfg, klass))) < 0.15
    # how well the runs compared the nodes: a node no run reached keeps at least its prior
    # variance, and is less certain than a node the runs used
    cov = wider[only.id].node_covariance
    assert sorted(cov) == sorted(n.name for n in platform.nodes)
    assert all(cov[n.name][n.name] >= NODE_SIGMA**2 for n in unseen)
    assert min(cov[n][n] for n in used) < min(cov[n.name][n.name] for n in unseen)
    shares = wider[only.id].task_nodes
    assert sorted(shares) == sorted(wider[only.id].tasks)
    assert all(abs(sum(w.values()) - 1.0) < 1e-9 and set(w) <= used for w in shares.values())
    errors = {
        name: estimate_errors(bench, cfg, p)["kb"]["mape"]
        for name, p in (("alone", alone), ("wider", wider))
    }
    assert errors["wider"] < errors["alone"]
