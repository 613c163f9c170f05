"""The learned policy under runtime uncertainty: retrieved predictions in its view, features,
teacher and planner, and the exact setting left as it was."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from policy.learned.agent import LearnedPolicy
from policy.learned.calibration import EXACT, Setting, calibrate, planning_view
from policy.learned.features import candidate_features
from policy.learned.instance_context import (
    CANDIDATE_FEATURES,
    PLANNED_COMPUTE,
    PRIOR_GAP,
    SPREAD,
    InstanceContext,
)
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.model import PolicyNet, load_checkpoint, save_checkpoint
from policy.learned.planner import LearnedPlanner, NoRagPlanner
from policy.learned.rollout import reference_makespan, run_episode
from policy.learned.teacher import RetrievedRuntimeTeacher
from policy.planning_views import instance_views, plan
from sim.engine import simulate
from sim.errors import InputError
from sim.schedule import SHARED_FS
from sim.uncertainty import (
    CategoryPrediction,
    RuntimePredictions,
    UncertaintyConfig,
    node_class,
    task_category,
)

SPEC = InstanceSpec("srasearch", 30, 4, 7)
USER = Setting("user")


def _predictions(spec: InstanceSpec, leave_out: int = 1) -> RuntimePredictions:
    """Predictions for all but ``leave_out`` of the spec's categories, distinct per category."""
    categories = sorted({task_category(t) for t in planning_view(spec, USER).workflow.tasks})
    known = {
        c: CategoryPrediction(5.0 + 3 * i, 0.1 * (i + 1), 4)
        for i, c in enumerate(categories[leave_out:])
    }
    classes = {node_class(n) for n in materialize(spec)[1].nodes}
    return RuntimePredictions(known, {c: 1.5 for c in classes}, request_ratio=0.25, cases=8)


def _net() -> PolicyNet:
    torch.manual_seed(0)
    return PolicyNet().eval()


def test_calibration_retimes_known_categories_and_scales_the_rest_by_the_history() -> None:
    request = planning_view(SPEC, USER)
    predictions = _predictions(SPEC)
    view = calibrate(request.workflow, request.platform, predictions)
    known = predictions.categories
    widest = max(p.log_spread for p in known.values())
    for before, after in zip(request.workflow.tasks, view.workflow.tasks, strict=True):
        c = task_category(before)
        expected = known[c].runtime if c in known else before.runtime * 0.25
        assert after.runtime == pytest.approx(expected)
        assert dict(view.spreads)[c] == (known[c].log_spread if c in known else widest)
    for nominal, slowed in zip(request.platform.nodes, view.platform.nodes, strict=True):
        assert slowed.speed == pytest.approx(nominal.speed / 1.5)


def test_earlier_runs_of_this_workflow_retime_each_task_and_node_of_their_own() -> None:
    request = planning_view(SPEC, USER)
    generic = _predictions(SPEC, leave_out=0)
    first, second = request.workflow.tasks[:2]
    node = request.platform.nodes[0]
    own = {first.id: 123.0, second.id: 45.0}
    recurring = replace(generic, tasks=own, nodes={node.name: 0.8}, task_log_spread=0.07, runs=2)
    view = calibrate(request.workflow, request.platform, recurring)
    runtimes = {t.id: t.runtime for t in view.workflow.tasks}
    assert runtimes[first.id] == pytest.approx(123.0) and runtimes[second.id] == pytest.approx(45.0)
    rest = [t for t in view.workflow.tasks if t.id not in own]
    assert all(
        t.runtime == pytest.approx(generic.categories[task_category(t)].runtime) for t in rest
    )
    assert view.platform.nodes[0].speed == pytest.approx(node.speed / 0.8)
    assert view.platform.nodes[1].speed == pytest.approx(request.platform.nodes[1].speed / 1.5)
    # a category whose every task has its own runtime takes the run-to-run spread
    every = replace(recurring, tasks={t.id: 1.0 for t in request.workflow.tasks})
    assert set(dict(calibrate(request.workflow, request.platform, every).spreads).values()) == {
        0.07
    }


def test_the_exact_setting_is_the_nominal_instance_as_before() -> None:
    net = _net()
    workflow, platform = materialize(SPEC)
    assert planning_view(SPEC, EXACT).workflow is workflow
    episode = run_episode(net, SPEC, "greedy", 0, "fair")
    assert episode.planning is None
    assert (
        episode.makespan
        == simulate(
            workflow,
            platform,
            simulate(workflow, platform, LearnedPolicy(net), "fair").to_schedule(),
        ).makespan
    )
    assert episode.reference == reference_makespan(SPEC, "fair")


def test_both_arms_meet_the_same_actuals_and_only_the_rag_arm_plans_on_predictions() -> None:
    net, predictions = _net(), _predictions(SPEC)
    norag = run_episode(net, SPEC, "greedy", 0, "fair", USER)
    rag = run_episode(net, SPEC, "greedy", 0, "fair", USER, predictions)
    assert norag.reference == rag.reference  # HEFT planned on the user's requests
    assert norag.planning is not None and rag.planning is not None
    assert norag.planning[0] == planning_view(SPEC, USER).workflow
    assert rag.planning[0] != norag.planning[0]
    # HEFT's reference is its plan on the requests replayed on the realised instance.
    workflow, platform = materialize(SPEC)
    views = instance_views(workflow, platform, SPEC.seed, "user", USER.config)
    from policy.heft import HEFT

    heft = simulate(*views.actual, plan(HEFT(), views, "fair"), "fair").makespan
    assert rag.reference == pytest.approx(heft)
    assert views.actual != (workflow, platform)  # the realisation did change the instance
    # Spreads reach the candidates only in the RAG arm.
    assert all(f[:, SPREAD].max() == 0 for f in norag.trajectory.feats) or not len(norag.trajectory)
    rag_sample = run_episode(net, SPEC, "sample", 3, "fair", USER, predictions)
    assert max(f[:, SPREAD].max() for f in rag_sample.trajectory.feats) > 0


def test_spread_and_planned_compute_columns_follow_the_context() -> None:
    workflow, platform = materialize(SPEC)
    plain = InstanceContext.of(workflow, platform)
    spreads = tuple((task_category(t), 0.5) for t in workflow.tasks)
    spread_ctx = InstanceContext.of(workflow, platform, tuple(sorted(set(spreads))))
    task = workflow.tasks[0]

    class View:
        """A cluster view at time 0: inputs on the shared filesystem, every node idle."""

        now = 0.0

        def file_locations(self, f: str) -> set[str]:
            return {SHARED_FS}

        def estimate_finish(self, t: str, node: str) -> float:
            return 1.0

        def available_time(self, node: str) -> float:
            return 0.0

        def free_cores(self, node: str) -> int:
            return 1

    base, mask = candidate_features(plain, task.id, View())  # type: ignore[arg-type]
    wide, _ = candidate_features(spread_ctx, task.id, View())  # type: ignore[arg-type]
    assert base.shape[1] == CANDIDATE_FEATURES
    assert np.all(base[mask, SPREAD] == 0)
    assert np.all(wide[mask, SPREAD] > 0)
    np.testing.assert_array_equal(base[mask, PLANNED_COMPUTE], wide[mask, PLANNED_COMPUTE])
    compute = [task.work / (n.speed * task.cores) / plain.scale for n in platform.nodes]
    np.testing.assert_allclose(base[mask, PLANNED_COMPUTE], np.array(compute)[mask], rtol=1e-6)


def test_the_retrieved_runtime_teacher_rewards_only_the_candidate_the_history_favours() -> None:
    episode = run_episode(_net(), SPEC, "sample", 5, "fair", USER, _predictions(SPEC))
    RetrievedRuntimeTeacher().shape(episode, 1.0)
    rewards = np.array(episode.trajectory.rewards)
    assert len(rewards) == len(episode.trajectory) > 0
    assert np.all(rewards <= 0)
    for feats, mask, action, reward in zip(
        episode.trajectory.feats,
        episode.trajectory.masks,
        episode.trajectory.actions,
        rewards,
        strict=True,
    ):
        score = np.where(mask, feats[:, PRIOR_GAP] + feats[:, SPREAD], np.inf)
        if score[action] > score.min() + 1e-6:
            assert reward < 0
        else:
            assert reward > -1e-6


def _saved(tmp_path: Path) -> Path:
    path = tmp_path / "untrained.pt"
    save_checkpoint(_net(), str(path))
    return path


def test_the_rag_planner_plans_on_its_predictions_and_the_ablation_ignores_them(
    tmp_path: Path,
) -> None:
    checkpoint = _saved(tmp_path)
    workflow, platform = materialize(SPEC)
    predictions = _predictions(SPEC)
    views = instance_views(workflow, platform, SPEC.seed, "user", USER.config, predictions)
    assert views.predictions is predictions and not views.calibrated
    rag = plan(LearnedPlanner(checkpoint=checkpoint), views, "fair")
    norag = plan(NoRagPlanner(checkpoint=checkpoint), views, "fair")
    bare = instance_views(workflow, platform, SPEC.seed, "user", USER.config)
    assert bare.predictions is None
    plain = plan(LearnedPlanner(checkpoint=checkpoint), bare, "fair")
    assert dict(norag.assignment) == dict(plain.assignment)  # no retrieval: the requests
    view = calibrate(*views.planning, predictions)
    net = load_checkpoint(str(checkpoint))[0]
    policy = LearnedPolicy(net, spreads=view.spreads)
    direct = simulate(view.workflow, view.platform, policy, "fair").to_schedule()
    assert dict(rag.assignment) == dict(direct.assignment)
    assert dict(rag.assignment) != dict(plain.assignment)
    # Oracle views carry no predictions: the exact bench is untouched.
    oracle = instance_views(
        workflow, platform, SPEC.seed, "oracle", UncertaintyConfig(), predictions
    )
    assert oracle.predictions is None


def test_a_checkpoint_with_another_feature_count_is_a_one_line_error(tmp_path: Path) -> None:
    net = _net()
    state = net.state_dict()
    h = net.cfg.hidden
    state["head.0.weight"] = torch.zeros(h, 2 * h + CANDIDATE_FEATURES - 2)
    path = tmp_path / "old.pt"
    torch.save({"config": {"hidden": h, "layers": 2}, "state": state, "extra": {}}, path)
    with pytest.raises(InputError) as err:
        load_checkpoint(str(path))
    assert "\n" not in str(err.value) and "not a policy checkpoint" in str(err.value)


def test_train_policy_refuses_bad_estimates_before_writing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wass_chat.cli import main

    out = tmp_path / "out"
    for extra, flag in (
        (["--estimates", "guess"], "--estimates"),
        (["--estimates", "user"], "--history"),
    ):
        assert main(["train", "policy", "--out", str(out), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert flag in err and len(err.splitlines()) == 1
    assert not out.exists()


@pytest.mark.slow
def test_a_tiny_training_run_under_user_estimates_plans_on_retrieved_predictions(
    tmp_path: Path,
) -> None:
    from policy.learned.evaluate import evaluate
    from policy.learned.instances import sample_specs
    from policy.learned.train import TrainConfig, setting_of, train, validation_specs

    cfg = TrainConfig(
        recipes=("srasearch",),
        tasks=(24, 30),
        nodes=(4,),
        train_instances=2,
        ccrs=(0.0,),
        updates=1,
        instances_per_update=2,
        samples_per_instance=2,
        ppo_epochs=1,
        workers=0,
        out_dir=str(tmp_path),
        validation_instances=1,
        validate_every=1,
        estimates="user",
    )
    specs = sample_specs(cfg.recipes, 2, 0, cfg.tasks, cfg.nodes, ccrs=cfg.ccrs)
    specs += validation_specs(cfg, specs)
    predictions = {s: _predictions(s, leave_out=0) for s in specs}
    result = train(cfg, RetrievedRuntimeTeacher(), predictions=predictions)
    net, _ = load_checkpoint(str(result.checkpoint))
    held = specs[-1:]
    with_rag = evaluate(net, held, setting=setting_of(cfg), predictions=predictions)
    episode = run_episode(net, held[0], "greedy", 0, "fair", USER, predictions[held[0]])
    assert with_rag.per_instance[held[0].label] == pytest.approx(episode.ratio)
    assert episode.planning is not None
    assert episode.planning[0] == planning_view(held[0], USER, predictions[held[0]]).workflow
