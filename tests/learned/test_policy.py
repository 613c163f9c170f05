"""The learned policy: state encoding, masking, advantages, the guard and a tiny training run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from policy.base import plan_and_simulate
from policy.heft import HEFT
from policy.learned.agent import LearnedPolicy, Trajectory
from policy.learned.evaluate import evaluate
from policy.learned.features import EDGE_TYPES, build_graph
from policy.learned.instance_context import CANDIDATE_FEATURES, PRIOR_GAP, InstanceContext
from policy.learned.instances import InstanceSpec, sample_specs
from policy.learned.model import PolicyNet, load_checkpoint
from policy.learned.planner import LearnedPlanner, SampledPlanner
from policy.learned.rag_guarded import RagGuarded
from policy.learned.rollout import Episode, run_episode
from policy.learned.train import (
    TrainConfig,
    advantages,
    train,
    validation_ratio,
    validation_specs,
)
from policy.peft import PEFT
from policy.validate import validate_schedule
from sim.demo import demo_platform, demo_workflow
from sim.engine import simulate
from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow


def _wide_task_platform() -> tuple[Workflow, Platform]:
    """Four-core tasks on a platform where half the nodes have only two cores."""
    files = [File(f"f{i}", 10**8) for i in range(6)]
    tasks = [Task("t0", 4e10, cores=4, outputs=("f0",))]
    tasks += [
        Task(f"t{i}", 2e10 * i, cores=4 if i % 2 else 1, inputs=("f0",), outputs=(f"f{i}",))
        for i in range(1, 6)
    ]
    nodes = tuple(
        Node(f"n{i}", cores=2 if i < 2 else 8, speed=REFERENCE_SPEED * (1 + i / 4))
        for i in range(4)
    )
    return Workflow("wide", tuple(tasks), tuple(files)), Platform("mixed", nodes)


def test_graph_has_every_edge_type_and_its_reverse() -> None:
    wf, pf = demo_workflow("genomics-49"), demo_platform()
    graph = build_graph(InstanceContext.of(wf, pf))
    assert graph["task"].x.shape[0] == len(wf.tasks)
    assert graph["compute"].x.shape[0] == len(pf.nodes)
    for src, rel, dst in EDGE_TYPES:
        forward = graph[src, rel, dst].edge_index
        backward = graph[dst, f"rev_{rel}", src].edge_index
        assert torch.equal(forward.flip(0), backward)
    precedes = graph["task", "precedes", "task"].edge_index
    assert precedes.shape[1] == sum(len(p) for p in wf.parents.values())


def test_masked_nodes_are_never_sampled_and_carry_no_probability() -> None:
    wf, pf = _wide_task_platform()
    net = PolicyNet()
    net.eft_prior.data.fill_(0.0)  # uniform over valid nodes: the mask alone must exclude
    for seed in range(20):
        policy = LearnedPolicy(net, mode="sample", seed=seed)
        result = simulate(wf, pf, policy, "fair")
        for record in result.tasks:
            if wf.task_by_id[record.task].cores == 4:
                assert record.node in {"n2", "n3"}
        for mask in policy.trajectory.masks:
            assert mask.any()
    policy = LearnedPolicy(net, mode="sample", seed=0)
    simulate(wf, pf, policy, "fair")
    tr = policy.trajectory
    feats = torch.from_numpy(np.stack(tr.feats))
    mask = torch.from_numpy(np.stack(tr.masks))
    with torch.no_grad():
        emb = net.encode(build_graph(policy.context))
        logits = net.logits(net.candidate_inputs(emb, torch.tensor(tr.task_idx), feats), mask)
    probs = torch.softmax(logits, dim=-1)
    assert float(probs[~mask].max()) == 0.0
    assert feats.shape[-1] == CANDIDATE_FEATURES


def _fan_in_behind_a_slow_nic() -> tuple[Workflow, Platform]:
    """Six GPU producers write 2 GB each; an 8-core consumer reads all 12 GB.

    The consumer fits two nodes only: ``cpu`` (twice the core speed, a 1 GB/s NIC) and ``nic``
    (a 10 GB/s NIC). Charging only the largest input per source, as the simulator's estimate
    does, ``cpu`` finishes first (2 s + 5 s against 0.2 s + 10 s); through one shared NIC the
    12 GB take 12 s there, so ``nic`` finishes first (1.2 s + 10 s).
    """
    gb = 2 * 10**9
    files = [File(f"d{i}", gb) for i in range(6)]
    tasks = [Task(f"p{i}", 1e9, gpus=1, outputs=(f"d{i}",)) for i in range(6)]
    tasks.append(Task("c", 8 * 10 * REFERENCE_SPEED, cores=8, inputs=tuple(f.id for f in files)))
    nodes = [Node(f"gpu{i}", cores=4, gpus=1, bandwidth=1e10) for i in range(6)]
    nodes += [
        Node("cpu", cores=8, speed=2 * REFERENCE_SPEED, bandwidth=1e9),
        Node("nic", cores=8, speed=REFERENCE_SPEED, bandwidth=1e10),
    ]
    return Workflow("fan-in", tuple(tasks), tuple(files)), Platform("nics", tuple(nodes))


def test_the_prior_charges_inputs_that_converge_on_one_nic() -> None:
    wf, pf = _fan_in_behind_a_slow_nic()
    torch.manual_seed(0)
    policy = LearnedPolicy(PolicyNet(), mode="greedy")
    policy.record = True  # keep the features of each decision
    result = simulate(wf, pf, policy, "fair")
    placed = {r.task: r for r in result.tasks}
    assert placed["c"].node == "nic"
    decision = policy.trajectory.task_idx.index(policy.context.task_index["c"])
    feats = policy.trajectory.feats[decision]
    cpu, nic = (policy.context.node_index[n] for n in ("cpu", "nic"))
    assert feats[cpu, 1] == 0.0 < feats[nic, 1]  # the simulator's estimate prefers cpu
    assert feats[nic, PRIOR_GAP] == 0.0 < feats[cpu, PRIOR_GAP]  # the data-aware one does not
    # ...and the simulation agrees: 12 GB through a 1 GB/s NIC would take longer than 10 s.
    assert placed["c"].end - placed["c"].ready == pytest.approx(11.2, rel=0.05)


def _episode(spec: InstanceSpec, ratio: float, decisions: int = 3) -> Episode:
    tr = Trajectory(
        task_idx=[0] * decisions,
        feats=[np.zeros((2, CANDIDATE_FEATURES), np.float32)] * decisions,
        masks=[np.ones(2, bool)] * decisions,
        actions=[0] * decisions,
        logps=[0.0] * decisions,
        values=[0.0] * decisions,
        progress=[0.0] * decisions,
        rewards=[0.0] * decisions,
    )
    return Episode(spec, tr, makespan=ratio * 100.0, reference=100.0)


def test_group_baseline_compares_samples_of_the_same_instance() -> None:
    a, b = InstanceSpec("blast", 50, 8, 1), InstanceSpec("genome", 60, 8, 2)
    # b is much worse than HEFT in both samples, but that is the instance, not the actions.
    episodes = [_episode(a, 0.9), _episode(a, 1.1), _episode(b, 1.5), _episode(b, 1.5)]
    adv, _ = advantages(episodes, lam=0.95)
    per_episode = adv.reshape(4, 3)[:, 0]
    assert per_episode[0] > 0 > per_episode[1]
    assert per_episode[2] == pytest.approx(0.0) and per_episode[3] == pytest.approx(0.0)


@pytest.mark.parametrize("network_model", ["fair", "ideal"])
def test_rag_guarded_is_never_worse_than_heft_or_peft(network_model: str) -> None:
    pf = demo_platform()
    for name in ("genomics-49", "fork-join-20", "epigenomics-50"):
        wf = demo_workflow(name)
        guarded = RagGuarded(network_model=network_model)  # type: ignore[arg-type]
        mine = plan_and_simulate(guarded, wf, pf, network_model)  # type: ignore[arg-type]
        assert validate_schedule(wf, pf, mine) == []
        heft = plan_and_simulate(HEFT(), wf, pf, network_model).makespan  # type: ignore[arg-type]
        peft = plan_and_simulate(PEFT(), wf, pf, network_model).makespan  # type: ignore[arg-type]
        assert mine.makespan <= min(heft, peft) * (1 + 1e-9)
        assert guarded.last_choice is not None
        assert set(guarded.last_choice.makespans) == {"policy", "heft", "peft"}


def test_sampled_planner_keeps_the_best_of_its_rollouts_and_is_repeatable() -> None:
    pf = demo_platform()
    greedy, sampled = LearnedPlanner(), SampledPlanner(samples=4)
    improved = 0
    for name in ("genomics-49", "epigenomics-50"):
        wf = demo_workflow(name)
        base = plan_and_simulate(greedy, wf, pf, "fair").makespan
        run = plan_and_simulate(sampled, wf, pf, "fair")
        assert validate_schedule(wf, pf, run) == []
        assert run.makespan <= base * (1 + 1e-9)  # the greedy rollout is a candidate
        assert sampled.schedule(wf, pf) == sampled.schedule(wf, pf)  # fixed sampling seeds
        improved += run.makespan < base * (1 - 1e-9)
    # Sampling actually explores: at least one instance gains from it, or every sampled
    # rollout of both reproduced the greedy makespan (checked directly).
    if not improved:
        wf = demo_workflow("genomics-49")
        spans = {
            simulate(wf, pf, LearnedPolicy(greedy.net, "sample", seed), "fair").makespan
            for seed in range(4)
        }
        assert len(spans) > 1


def test_evaluation_scores_the_replayed_plan_and_heft_against_the_lower_bound() -> None:
    specs = [InstanceSpec("srasearch", 30, 4, 11), InstanceSpec("srasearch", 28, 4, 12, 1.0)]
    net = PolicyNet()
    ev = evaluate(net, specs)
    for spec in specs:
        expected = run_episode(net, spec, "greedy", 0, "fair").ratio
        assert ev.per_instance[spec.label] == pytest.approx(expected)
    assert ev.wins + ev.ties + ev.losses == ev.instances == 2
    assert ev.heft_over_bound_gm >= 1.0 - 1e-9  # no schedule beats a lower bound
    assert 0 <= ev.heft_near_bound <= 2


def test_evaluation_seeds_never_overlap_training_seeds() -> None:
    train_specs = sample_specs(("blast",), 50, 0)
    eval_specs = sample_specs(("blast",), 50, 0, evaluation=True)
    assert not {s.seed for s in train_specs} & {s.seed for s in eval_specs}


@pytest.mark.slow
def test_a_tiny_training_run_keeps_the_best_validated_weights(tmp_path: Path) -> None:
    cfg = TrainConfig(
        recipes=("srasearch",),
        tasks=(24, 30),
        nodes=(4,),
        train_instances=2,
        ccrs=(0.0, 1.0),
        updates=2,
        instances_per_update=2,
        samples_per_instance=2,
        ppo_epochs=1,
        use_rag=False,
        workers=0,
        out_dir=str(tmp_path),
        validation_instances=2,
        validate_every=1,
    )
    result = train(cfg)
    rows = [json.loads(r) for r in result.metrics_path.read_text().splitlines()]
    assert sum("ppo/ratio_to_heft_gm" in r for r in rows) == 2
    ppo = [r for r in rows if "ppo/update" in r]
    # approx-KL is >= 0 up to rounding; one epoch starts at the old policy, so it stays small
    assert all(-1e-6 <= r["ppo/approx_kl"] < 1.0 and 0.0 <= r["ppo/clipfrac"] <= 1.0 for r in ppo)
    scores = {r["val/update"]: r["val/ratio_to_heft_gm"] for r in rows if "val/update" in r}
    assert sorted(scores) == [0, 1, 2]  # the untrained network, then after each update
    assert result.best_update == min(scores, key=lambda u: (scores[u], u))
    net, extra = load_checkpoint(str(result.checkpoint))
    assert extra["best_update"] == result.best_update
    validation = validation_specs(
        cfg, sample_specs(cfg.recipes, 2, 0, (24, 30), (4,), ccrs=cfg.ccrs)
    )
    assert not set(validation) & set(sample_specs(cfg.recipes, 2, 0, (24, 30), (4,), ccrs=cfg.ccrs))
    assert validation_ratio(net, validation, cfg, None) == pytest.approx(scores[result.best_update])
    wf, pf = demo_workflow("fork-join-20"), demo_platform()
    run = simulate(wf, pf, LearnedPolicy(net), "fair")
    assert validate_schedule(wf, pf, run) == []
