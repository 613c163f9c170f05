"""Drawing the nodes' slowdowns from how well earlier runs compared them (sim.predicted)."""

from __future__ import annotations

import numpy as np

from sim.demo import demo_platform, demo_workflow
from sim.predicted import draw_nodes, node_draw_model
from sim.uncertainty import RuntimePredictions


def _predictions(names: list[str], task: str) -> RuntimePredictions:
    """Two nodes the runs compared well (correlated, small variances), one they never reached
    (large variance); ``task`` always ran on the first node."""
    a, b, c = names[:3]
    cov = {
        a: {a: 0.004, b: 0.002, c: 0.0},
        b: {a: 0.002, b: 0.004, c: 0.0},
        c: {a: 0.0, b: 0.0, c: 0.03},
    }
    return RuntimePredictions(node_covariance=cov, task_nodes={task: {a: 1.0}})


def test_without_a_recurring_fit_there_is_no_node_draw() -> None:
    assert node_draw_model(RuntimePredictions()) is None


def test_node_draws_follow_the_covariance_and_a_measured_task_keeps_its_runtime_there() -> None:
    workflow, platform = demo_workflow("fork-join-20"), demo_platform()
    names = [n.name for n in platform.nodes]
    task = workflow.tasks[0]
    model = node_draw_model(_predictions(names, task.id))
    assert model is not None
    rng = np.random.default_rng(5)
    shifts, on_first, on_third = [], [], []
    for _ in range(4000):
        wf, pf = draw_nodes(model, workflow, platform, rng)
        speeds = {n.name: n.speed for n in pf.nodes}
        shifts.append([np.log(n.speed / speeds[n.name]) for n in platform.nodes[:3]])
        work = wf.tasks[0].work
        on_first.append(work / speeds[names[0]])
        on_third.append(work / speeds[names[2]])
        assert [t.work for t in wf.tasks[1:]] == [t.work for t in workflow.tasks[1:]]
        assert all(speeds[n.name] == n.speed for n in platform.nodes[3:])  # not in the fit
    cov = np.cov(np.array(shifts).T)
    assert np.allclose(cov, [[0.004, 0.002, 0.0], [0.002, 0.004, 0.0], [0.0, 0.0, 0.03]], atol=3e-3)
    # where the task ran, its runtime was measured: every draw keeps it; elsewhere it moves
    # with the difference of the two nodes' draws (variance 0.004 + 0.03)
    assert np.ptp(on_first) < 1e-9 * on_first[0]
    assert 0.15 < np.std(np.log(on_third)) < 0.22
    again = draw_nodes(model, workflow, platform, np.random.default_rng(5))
    first = draw_nodes(model, workflow, platform, np.random.default_rng(5))
    assert again == first  # pure in the generator
