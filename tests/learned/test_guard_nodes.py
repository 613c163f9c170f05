"""``rag-guarded`` with a recurring fit: a plan on a node the earlier runs never compared is
judged as uncertain, not as the point estimate says (real simulator, demo instance)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from policy.learned.rag_guarded import RagGuarded, regret_quantile
from sim.demo import demo_platform, demo_workflow
from sim.model import REFERENCE_SPEED, Platform, Workflow
from sim.schedule import StaticSchedule
from sim.uncertainty import RuntimePredictions


def _one_node(workflow: Workflow, node: str) -> StaticSchedule:
    order = workflow.topological_order
    return StaticSchedule({t: node for t in order}, {node: order}, f"on {node}")


def _instance() -> tuple[Workflow, Platform, str, str]:
    """The demo fork-join as the guard's calibrated view: two nodes of equal cores, the second
    predicted 5% faster (slowdown 0.95), the others very slow."""
    workflow, platform = demo_workflow("fork-join-20"), demo_platform()
    first = platform.nodes[0]
    a, b = first.name, platform.nodes[1].name
    speeds = {a: first.speed, b: first.speed / 0.95}
    nodes = tuple(
        replace(n, speed=speeds[n.name], cores=first.cores)
        if n.name in speeds
        else replace(n, speed=n.speed / 100)
        for n in platform.nodes
    )
    return workflow, replace(platform, nodes=nodes), a, b


def _predictions(workflow: Workflow, a: str, b: str, b_variance: float) -> RuntimePredictions:
    """Every task measured on ``a`` only; ``b`` predicted 5% faster, with ``b_variance``."""
    return RuntimePredictions(
        tasks={t.id: t.work / REFERENCE_SPEED for t in workflow.tasks},
        nodes={a: 1.0, b: 0.95},
        task_log_spread=0.02,
        runs=3,
        node_covariance={a: {a: 1e-4, b: 0.0}, b: {a: 0.0, b: b_variance}},
        task_nodes={t.id: {a: 1.0} for t in workflow.tasks},
    )


def test_a_plan_on_a_node_the_runs_never_compared_is_judged_uncertain() -> None:
    workflow, platform, a, b = _instance()
    schedules = {"heft": _one_node(workflow, a), "peft": _one_node(workflow, a)}
    schedules["policy"] = _one_node(workflow, b)
    scores = {}
    for label, variance in (("compared", 1e-4), ("never compared", 0.2**2)):
        guard = RagGuarded(draws=32).with_predictions(
            _predictions(workflow, a, b, variance), calibrated=True
        )
        spans = guard.draw_makespans(schedules, workflow, platform)
        # the classics' plan keeps what the runs measured on a in every draw
        assert np.ptp(spans["heft"]) < 0.15 * spans["heft"].mean()
        scores[label] = regret_quantile(spans)["policy"]
    # well compared, the 5% faster node wins in the bad draws too; never compared, it can lose
    assert scores["compared"] < 1.0 < scores["never compared"]
