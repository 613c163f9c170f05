"""``policy-lookahead`` with retrieved predictions: it plans on what ``policy`` plans on.

A 20-task demo fork-join on the 8-node demo platform under user requests (two plans take a
tenth of a second); the real simulator, the shipped checkpoint unless a spread-reading random
network is needed.
"""

from __future__ import annotations

from functools import partial

import pytest
import torch

from policy.learned.calibration import calibrate
from policy.learned.instance_context import SPREAD, Spreads
from policy.learned.lookahead import DEFAULT_K, LookaheadPlanner, LookaheadPolicy
from policy.learned.model import PolicyNet
from policy.learned.rag_guarded import LookaheadGuarded
from policy.learned.rollout import replayed_makespan
from policy.planning_views import instance_views
from sim.demo import demo_platform, demo_workflow
from sim.model import Platform, Workflow
from sim.schedule import StaticSchedule
from sim.uncertainty import (
    CategoryPrediction,
    RuntimePredictions,
    UncertaintyConfig,
    node_class,
    task_category,
)


def _requests() -> tuple[Workflow, Platform]:
    """The user's requests for the demo fork-join (what the bench plans on under ``user``)."""
    views = instance_views(
        demo_workflow("fork-join-20"), demo_platform(), 3, "user", UncertaintyConfig()
    )
    return views.planning


def _predictions(workflow: Workflow, platform: Platform) -> RuntimePredictions:
    """Distinct runtimes and spreads per category (the first left out, as one the history
    never saw) and per-class slowdowns far from the requests' view, so the plan must move."""
    categories = sorted({task_category(t) for t in workflow.tasks})
    known = {
        c: CategoryPrediction(5.0 * 3**i, 0.1 * (i + 1), 4) for i, c in enumerate(categories[1:])
    }
    classes = sorted({node_class(n) for n in platform.nodes})
    slowdowns = {c: 1.0 + 2 * i for i, c in enumerate(classes)}
    return RuntimePredictions(known, slowdowns, request_ratio=0.25, cases=8)


def _direct(
    net: PolicyNet,
    workflow: Workflow,
    platform: Platform,
    spreads: Spreads = (),
    fork: bool = True,
    k: int = DEFAULT_K,
) -> StaticSchedule:
    """The lookahead run by hand on exactly this view: what the planner did before retrieval
    (``fork`` False: every candidate re-simulated from t=0, the reference path)."""
    expert = LookaheadPolicy(net, workflow, platform, "fair", k, spreads=spreads)
    expert.fork = fork
    _, plan = replayed_makespan(workflow, platform, expert, "fair")
    return plan


def _same(a: StaticSchedule, b: StaticSchedule) -> bool:
    return dict(a.assignment) == dict(b.assignment) and dict(a.order) == dict(b.order)


@pytest.mark.usefixtures("one_torch_thread")
def test_without_predictions_the_plan_is_the_lookahead_on_the_view_given() -> None:
    workflow, platform = _requests()
    planner = LookaheadPlanner()
    planned = planner.schedule(workflow, platform)
    assert planner.predictions is None
    assert _same(planned, _direct(planner.net, workflow, platform))
    assert LookaheadGuarded().learned_planner().predictions is None


@pytest.mark.usefixtures("one_torch_thread")
def test_with_predictions_it_plans_on_the_calibrated_view_as_policy_does() -> None:
    workflow, platform = _requests()
    predictions = _predictions(workflow, platform)
    view = calibrate(workflow, platform, predictions)
    planner = LookaheadPlanner()
    retrieved = planner.with_predictions(predictions, calibrated=False)
    assert retrieved.planning_inputs(workflow, platform) == (
        view.workflow,
        view.platform,
        view.spreads,
    )
    planned = retrieved.schedule(workflow, platform)
    assert _same(planned, _direct(planner.net, view.workflow, view.platform, view.spreads))
    on_requests = planner.schedule(workflow, platform)
    assert not _same(planned, on_requests)  # so the retrieval did move the plan
    # Given the calibrated view (``--estimates kb``) it is not re-timed twice: same plan.
    calibrated = planner.with_predictions(predictions, calibrated=True)
    assert _same(calibrated.schedule(view.workflow, view.platform), planned)


def _spread_reader() -> PolicyNet:
    """A random network that weighs the spread column heavily (the shipped ones weigh it 0)."""
    torch.manual_seed(0)
    net = PolicyNet().eval()
    h = net.cfg.hidden
    with torch.no_grad():
        net.head[0].weight[:, 2 * h + SPREAD] = 1000 * torch.randn(net.head[0].weight.shape[0])
    return net


@pytest.mark.usefixtures("one_torch_thread")
def test_spreads_reach_every_rollout_forked_or_re_simulated() -> None:
    net = _spread_reader()
    workflow, platform = _requests()
    predictions = _predictions(workflow, platform)
    view = calibrate(workflow, platform, predictions)
    plan = partial(_direct, net, view.workflow, view.platform, k=2)  # k=2: the reference is slow
    forked = plan(view.spreads)
    assert _same(forked, plan(view.spreads, fork=False))  # the compiled core reads them too
    assert not _same(forked, plan())  # so the spreads did change the search here
    planner = LookaheadPlanner(k=2)
    planner.net = net
    retrieved = planner.with_predictions(predictions, calibrated=False)
    assert _same(retrieved.schedule(workflow, platform), forked)


@pytest.mark.usefixtures("one_torch_thread")
def test_the_guarded_lookahead_hands_its_predictions_to_its_lookahead() -> None:
    workflow, platform = _requests()
    predictions = _predictions(workflow, platform)
    guard = LookaheadGuarded().with_predictions(predictions, calibrated=False)
    learned = guard.learned_planner()
    assert isinstance(learned, LookaheadPlanner) and learned.predictions is predictions
    found = guard.candidates(workflow, platform)
    assert next(iter(found)) == "policy-lookahead"
    expected = LookaheadPlanner().with_predictions(predictions, False).schedule(workflow, platform)
    assert _same(found["policy-lookahead"], expected)
    assert not _same(found["policy-lookahead"], LookaheadPlanner().schedule(workflow, platform))
