"""The greedy network's decisions in the compiled core (policy.learned.compiled_head) are the
network's: the same features bit for bit, the same node whenever it decides, the same plans."""

from __future__ import annotations

from dataclasses import replace

import pytest

from policy.learned.agent import LearnedPolicy
from policy.learned.compiled_head import compiled_chooser
from policy.learned.features import candidate_features
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.lookahead import LookaheadPolicy
from policy.learned.planner import load_policy_net
from policy.learned.rollout import replayed_makespan
from sim import fast
from sim.demo import demo_platform
from sim.model import Platform, Workflow
from sim.occupancy import Hold, Occupancy
from sim.platforms import ClusterSpec, generate_platform
from sim.recipes import generate_recipe
from sim.schedule import ClusterView
from sim.uncertainty import task_category

pytestmark = [
    pytest.mark.skipif(not fast.AVAILABLE, reason="sim._core is not built"),
    pytest.mark.usefixtures("one_torch_thread"),
]


def _picky_montage() -> tuple[Workflow, Platform]:
    """Montage at CCR 1 where some tasks need 8 cores or a GPU: nodes that cannot host them."""
    workflow = generate_recipe("montage", 60, seed=2, ccr=1.0)
    tasks = tuple(
        replace(t, cores=8) if i % 5 == 1 else replace(t, gpus=1) if i % 7 == 3 else t
        for i, t in enumerate(workflow.tasks)
    )
    return Workflow(workflow.name, tasks, workflow.files), demo_platform()


class _Checked(LearnedPolicy):
    """The greedy network, checking the compiled chooser against it at every decision."""

    decisions = 0
    decided_in_c = 0

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        super().reset(workflow, platform)
        self.chooser = compiled_chooser(self.context, self.net, self._emb, self.context.upward)

    def choose_node(self, task: str, view: ClusterView) -> str:
        feats, _ = candidate_features(self.context, task, view)
        core, t_idx = view.run.core, self.context.task_index[task]  # type: ignore[attr-defined]
        assert self.chooser.features(core, t_idx) == feats.tobytes()
        node = super().choose_node(task, view)
        compiled = self.chooser.choose(core, t_idx)
        if compiled >= 0:  # when it decides, it decides as the network
            assert self.context.platform.nodes[compiled].name == node
            self.decided_in_c += 1
        self.decisions += 1
        return node


def test_compiled_features_and_decisions_are_the_networks() -> None:
    from sim.engine import simulate

    net = load_policy_net()
    montage, demo = _picky_montage()
    categories = sorted({task_category(t) for t in montage.tasks})
    spreads = tuple((c, 0.1 * (i + 1)) for i, c in enumerate(categories))
    held = Occupancy((Hold("gpu02", 20, 300.0), Hold("cpu04", 16, 90.0)))
    cases = [
        (montage, demo, None, ()),
        (montage, demo, held, spreads),  # held cores in the projections, nonzero spreads
        (*materialize(InstanceSpec("cycles", 70, 12, 5, 1.0)), None, ()),
        (*materialize(InstanceSpec("genome", 60, 16, 3, 0.0)), None, ()),
    ]
    for workflow, platform, occupancy, spread in cases:
        policy = _Checked(net, spreads=spread)
        with fast.engine("compiled"):
            simulate(workflow, platform, policy, "fair", occupancy)
        assert policy.decisions == len(workflow.tasks)
        assert policy.decided_in_c > 0.9 * policy.decisions  # distinct nodes: few near-ties
    assert any(t.cores == 8 for t in montage.tasks) and demo.nodes[0].cores < 8  # unfit rows


def _lookahead(
    workflow: Workflow, platform: Platform, compiled: bool, occupancy: Occupancy | None = None
) -> tuple[object, ...]:
    expert = LookaheadPolicy(load_policy_net(), workflow, platform, "fair", occupancy=occupancy)
    expert.compiled = compiled
    with fast.engine("compiled"):
        makespan, plan = replayed_makespan(workflow, platform, expert, "fair", occupancy)
    labels = [b.tolist() for b in expert.trajectory.best]
    return (makespan, plan.assignment, plan.order, labels, expert.changed), expert.asked


def test_lookahead_plans_the_same_with_the_compiled_chooser() -> None:
    """The search's plans before (every rollout decision by the network) and after."""
    montage, demo = _picky_montage()
    homogeneous = generate_platform(ClusterSpec(4, heterogeneous=False), seed=4)
    cases = [
        (*materialize(InstanceSpec("montage", 60, 8, 1, 1.0)), None),
        (montage, demo, Occupancy((Hold("gpu02", 32, 500.0),))),
        (generate_recipe("blast", 45, seed=4), homogeneous, None),
    ]
    overruled = left_to_python = 0
    for workflow, platform, occupancy in cases:
        after, asked = _lookahead(workflow, platform, True, occupancy)
        before, asked_before = _lookahead(workflow, platform, False, occupancy)
        assert after == before  # makespan, placements, orders, labels, overrules
        assert asked < asked_before
        overruled += after[-1]  # type: ignore[operator]
        left_to_python += asked
    assert overruled > 0  # the search changed decisions, so plans could have differed
    assert left_to_python > 0  # identical idle nodes tie: the Python fallback ran too
