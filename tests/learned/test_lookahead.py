"""The one-step lookahead expert, its planner and expert iteration, on the real simulator."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from policy.base import plan_and_simulate
from policy.learned.agent import LearnedPolicy
from policy.learned.evaluate import evaluate
from policy.learned.imitation import agreement, expert_iteration, imitation_loss
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.lookahead import LookaheadPolicy, collect_lookahead
from policy.learned.model import PolicyNet, load_checkpoint
from policy.learned.planner import load_policy_net
from policy.learned.rollout import Episode, replayed_makespan
from policy.learned.train import TrainConfig, train
from policy.registry import get_scheduler
from policy.validate import validate_schedule
from sim.engine import simulate
from sim.errors import InputError
from sim.schedule import ClusterView

DATA_BOUND = InstanceSpec("montage", 60, 8, 1, 1.0)
"""Small and data-intensive: HEFT-like greedy choices leave room for the lookahead here."""


def test_lookahead_is_the_greedy_rollout_unless_it_finds_strictly_better() -> None:
    net = load_policy_net()
    overruled = {}
    for spec in (DATA_BOUND, InstanceSpec("srasearch", 28, 4, 2, 1.0)):
        workflow, platform = materialize(spec)
        greedy, _ = replayed_makespan(workflow, platform, LearnedPolicy(net), "fair")
        expert = LookaheadPolicy(net, workflow, platform, "fair", k=3)
        makespan, plan = replayed_makespan(workflow, platform, expert, "fair")
        # Rollout improvement: each overruled decision strictly lowers the best completion, so
        # the result beats greedy exactly when the expert overruled the network at least once.
        assert (expert.changed > 0) == (makespan < greedy * (1 - 1e-9))
        assert makespan <= greedy * (1 + 1e-9)
        # One labelled decision per task; the labels are the nodes the plan uses and always
        # among the nodes that tied for the best completion.
        tr = expert.trajectory
        assert len(tr) == len(workflow.tasks) == len(tr.best)
        assert all(best[action] for best, action in zip(tr.best, tr.actions, strict=True))
        names = [t.id for t in workflow.tasks]
        nodes = [n.name for n in platform.nodes]
        for t_idx, action, mask in zip(tr.task_idx, tr.actions, tr.masks, strict=True):
            assert mask[action]
            assert plan.assignment[names[t_idx]] == nodes[action]
        assert expert.simulations >= len(workflow.tasks)  # k > 1 candidates almost everywhere
        overruled[spec] = expert.changed
    assert overruled[DATA_BOUND] > 0  # so the equivalence above was tested in both directions


def test_lookahead_planner_is_registered_and_plans_a_valid_better_schedule() -> None:
    workflow, platform = materialize(DATA_BOUND)
    planner = get_scheduler("policy-lookahead")
    run = plan_and_simulate(planner, workflow, platform, "fair")
    assert validate_schedule(workflow, platform, run) == []
    greedy = plan_and_simulate(get_scheduler("policy"), workflow, platform, "fair")
    assert run.makespan < greedy.makespan


def _loss(net: PolicyNet, episodes: list[Episode]) -> float:
    with torch.no_grad():
        return float(imitation_loss(net, episodes))


def test_expert_iteration_fits_the_lookahead_labels() -> None:
    torch.manual_seed(3)
    net = PolicyNet()
    specs = [DATA_BOUND]
    labels = collect_lookahead(net, specs, "fair", None, k=3)
    missed = ~np.concatenate(agreement(net, labels))
    assert missed.any()  # the expert overruled the network somewhere
    before = _loss(net, labels)
    cfg = TrainConfig(
        expert_iterations=1,
        expert_instances=1,
        expert_epochs=6,
        workers=0,
        minibatch_episodes=1,
        learning_rate=1e-3,
    )
    rounds: list[dict[str, float]] = []
    expert_iteration(
        net,
        specs,
        cfg,
        None,
        np.random.default_rng(0),
        lambda i, row: rounds.append(row),
        time.monotonic(),
    )
    assert [r["exit/round"] for r in rounds] == [1]
    assert rounds[0]["exit/labels"] == len(labels[0].trajectory)
    # The round relabelled with the same (deterministic) expert, so these are its labels too.
    assert _loss(net, labels) < before
    assert rounds[0]["exit/expert_ratio_gm"] == pytest.approx(labels[0].ratio)
    # The imitation metrics describe these labels: before fitting, and after it.
    assert rounds[0]["exit/overruled"] == pytest.approx(missed.mean())
    after = np.concatenate(agreement(net, labels))
    assert rounds[0]["exit/agree"] == pytest.approx(after.mean())
    assert rounds[0]["exit/agree_overruled"] == pytest.approx(after[missed].mean())


def test_evaluation_with_lookahead_scores_each_instance_no_worse_than_greedy() -> None:
    net = load_policy_net()
    specs = [DATA_BOUND, InstanceSpec("srasearch", 28, 4, 12, 1.0)]
    greedy = evaluate(net, specs)
    searched = evaluate(net, specs, lookahead=2)
    assert set(searched.per_instance) == set(greedy.per_instance)
    for label, ratio in searched.per_instance.items():
        assert ratio <= greedy.per_instance[label] * (1 + 1e-9)
    assert searched.per_instance[DATA_BOUND.label] < greedy.per_instance[DATA_BOUND.label]


def test_lookahead_planner_refuses_a_workflow_too_large_to_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import policy.learned.lookahead as lookahead

    workflow, platform = materialize(DATA_BOUND)
    monkeypatch.setattr(lookahead, "MAX_TASKS", len(workflow.tasks) - 1)
    with pytest.raises(InputError, match="at most"):
        get_scheduler("policy-lookahead").schedule(workflow, platform)


def test_training_with_expert_iteration_validates_each_round_and_keeps_the_best(
    tmp_path: Path,
) -> None:
    cfg = TrainConfig(
        recipes=("srasearch",),
        tasks=(24, 30),
        nodes=(4,),
        train_instances=2,
        ccrs=(1.0,),
        expert_iterations=2,
        expert_instances=1,
        updates=0,
        use_rag=False,
        workers=0,
        out_dir=str(tmp_path),
        validation_instances=2,
    )
    result = train(cfg)
    rows = [json.loads(r) for r in result.metrics_path.read_text().splitlines()]
    assert [r["exit/round"] for r in rows if "exit/round" in r] == [1, 2]
    scores = {r["val/stage"]: r["val/ratio_to_heft_gm"] for r in rows if "val/stage" in r}
    assert list(scores) == ["untrained", "expert iteration 1", "expert iteration 2"]
    assert result.kept == min(scores, key=lambda stage: scores[stage])  # first best on ties
    assert result.best_update == 0  # no PPO update ran
    assert load_checkpoint(str(result.checkpoint))[1]["kept"] == result.kept


def test_guarded_lookahead_is_never_worse_than_its_candidates() -> None:
    from policy.learned.rag_guarded import LookaheadGuarded

    workflow, platform = materialize(DATA_BOUND)
    guarded = get_scheduler("rag-guarded-lookahead")
    assert isinstance(guarded, LookaheadGuarded)
    run = plan_and_simulate(guarded, workflow, platform, "fair")
    assert validate_schedule(workflow, platform, run) == []
    assert guarded.last_choice is not None
    spans = guarded.last_choice.makespans
    assert set(spans) == {"policy-lookahead", "heft", "peft"}
    assert run.makespan == pytest.approx(min(spans.values()))
    greedy = plan_and_simulate(get_scheduler("policy"), workflow, platform, "fair").makespan
    assert spans["policy-lookahead"] < greedy  # the lookahead's plan, not the greedy one


class _GenericView:
    """The engine's view behind the plain ClusterView calls only (no fast path applies)."""

    def __init__(self, view: object) -> None:
        self._view = view

    def __getattr__(self, name: str) -> object:
        return getattr(self._view, name)


def test_forked_rollouts_plan_exactly_what_re_simulating_from_the_start_plans() -> None:
    from policy.learned.features import candidate_features
    from policy.learned.lookahead import _GreedyHead

    net = load_policy_net()
    workflow, platform = materialize(InstanceSpec("srasearch", 28, 4, 2, 1.0))
    runs = {}
    for fork in (True, False):
        expert = LookaheadPolicy(net, workflow, platform, "fair", k=3)
        expert.fork = fork
        makespan, plan = replayed_makespan(workflow, platform, expert, "fair")
        runs[fork] = (makespan, plan.assignment, plan.order, expert)
    (fast, slow) = runs[True], runs[False]
    assert fast[:3] == slow[:3]  # same makespan, placements and per-node orders
    assert [b.tolist() for b in fast[3].trajectory.best] == [
        b.tolist() for b in slow[3].trajectory.best
    ]  # same imitation labels: every candidate's completion was the same
    assert fast[3].simulations < slow[3].simulations  # the greedy candidate's came for free

    class Checked(LearnedPolicy):
        decisions = 0

        def choose_node(self, task: str, view: ClusterView) -> str:
            feats, mask = candidate_features(self.context, task, view)
            generic = candidate_features(self.context, task, _GenericView(view))  # type: ignore[arg-type]
            assert feats.tobytes() == generic[0].tobytes() and (mask == generic[1]).all()
            node = super().choose_node(task, view)
            head = _GreedyHead(self.net, self._emb)
            action = head.choose(self.context.task_index[task], feats, mask)
            assert platform.nodes[action].name == node  # the fast head decides as the network
            self.decisions += 1
            return node

    checked = Checked(net)
    simulate(workflow, platform, checked, "fair")
    assert checked.decisions == len(workflow.tasks)
