"""The DQN: masked nodes are never chosen, prioritized replay samples by priority, rewards add up
to the makespan, and a tiny training run goes end to end (a step budget, no wall clock)."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import torch

from policy.learned.dqn import linear_schedule, train
from policy.learned.dqn_agent import DQNPlanner, DQNPolicy, transitions
from policy.learned.dqn_config import DQNConfig
from policy.learned.dqn_model import QNet, load_qnet
from policy.learned.features import candidate_features
from policy.learned.instance_context import CANDIDATE_FEATURES, InstanceContext
from policy.learned.replay import PrioritizedReplay, Transition
from policy.validate import validate_schedule
from sim.arrivals import StreamSpec, merge_stream, poisson_stream
from sim.engine import simulate
from sim.model import node_fits
from sim.platforms import generate_platform, gpu_cluster_spec


def _gpu_stream() -> tuple[object, object]:
    """A stream where a third of the tasks need a GPU: half the nodes are invalid for them."""
    spec = StreamSpec(count=4, window=50.0, tasks=(5, 9), gpu_need=0.35, gpu_prefer=0.3)
    return merge_stream(poisson_stream(spec, seed=5)), generate_platform(gpu_cluster_spec(6), 5)


def test_q_values_of_masked_nodes_are_the_dtype_minimum_and_never_the_argmax() -> None:
    torch.manual_seed(0)
    net = QNet()
    inputs = torch.randn(64, 7, 2 * net.cfg.hidden + CANDIDATE_FEATURES) * 50.0
    mask = torch.rand(64, 7) < 0.5
    mask[:, 3] = True  # every decision keeps at least one valid node
    q = net.q_values(inputs, mask)
    assert torch.all(q[~mask] == torch.finfo(q.dtype).min)
    assert mask.gather(1, q.argmax(dim=1, keepdim=True)).all()
    assert torch.all(q.max(dim=1).values > torch.finfo(q.dtype).min)  # the target's max too


@pytest.mark.parametrize("epsilon", [0.0, 1.0])
def test_a_masked_node_is_never_chosen_greedy_or_exploring(epsilon: float) -> None:
    workflow, platform = _gpu_stream()
    agent = DQNPolicy(QNet(), epsilon=epsilon, seed=3, record=True)
    result = simulate(workflow, platform, agent, "fair")  # type: ignore[arg-type]
    assert validate_schedule(workflow, platform, result) == []  # type: ignore[arg-type]
    masked = [d for d in agent.decisions if not d.mask.all()]
    assert len(masked) >= 5  # GPU tasks: some nodes were invalid
    assert all(d.mask[d.action] for d in agent.decisions)
    by_id = workflow.task_by_id  # type: ignore[attr-defined]
    for r in result.tasks:
        assert node_fits(by_id[r.task], platform.node_by_name[r.node])  # type: ignore[attr-defined]


def test_the_mask_is_what_the_features_say_can_host_the_task() -> None:
    workflow, platform = _gpu_stream()
    ctx = InstanceContext.of(workflow, platform)  # type: ignore[arg-type]
    needs = next(t for t in workflow.tasks if t.gpus)  # type: ignore[attr-defined]

    class _View:  # only what the generic feature path asks
        now = 0.0

        def estimate_finish(self, task: str, node: str) -> float:
            return 1.0

        def available_time(self, node: str) -> float:
            return 0.0

        def free_cores(self, node: str) -> int:
            return 1

        def file_locations(self, file: str) -> frozenset[str]:
            return frozenset()

    _, mask = candidate_features(ctx, needs.id, _View())  # type: ignore[arg-type]
    assert list(mask) == [node_fits(needs, n) for n in platform.nodes]  # type: ignore[attr-defined]
    assert not mask.all() and mask.any()


def _transition(k: int) -> Transition:
    feats, mask = np.zeros((2, CANDIDATE_FEATURES), np.float32), np.ones(2, bool)
    return Transition(k, 0, feats, mask, 0, 0.0, 0, feats, mask, True)


def test_prioritized_sampling_follows_the_priorities_and_weights_correct_for_it() -> None:
    replay = PrioritizedReplay(capacity=4, alpha=1.0, eps=1e-9)
    for k in range(4):
        replay.add(_transition(k))
    replay.update_priorities(np.arange(4), np.array([1.0, 2.0, 3.0, 4.0]))
    rng = np.random.default_rng(0)
    counts = np.zeros(4)
    for _ in range(2500):
        indices, _, weights = replay.sample(8, beta=0.5, rng=rng)
        counts += np.bincount(indices, minlength=4)
        expected = (4 * np.array([1, 2, 3, 4])[indices] / 10) ** -0.5 / (4 * 0.1) ** -0.5
        assert np.allclose(weights, expected, rtol=1e-6)
    assert np.allclose(counts / counts.sum(), [0.1, 0.2, 0.3, 0.4], atol=0.01)
    replay.update_priorities(np.array([0]), np.array([0.0]))  # a perfectly predicted transition
    indices, _, _ = replay.sample(1000, beta=1.0, rng=rng)
    assert np.mean(indices == 0) < 0.001


def test_new_transitions_get_the_top_priority_and_the_oldest_are_evicted() -> None:
    replay = PrioritizedReplay(capacity=3, alpha=0.6)
    for k in range(3):
        assert replay.add(_transition(k)) is None
    replay.update_priorities(np.arange(3), np.array([10.0, 0.1, 0.1]))
    evicted = replay.add(_transition(7))
    assert evicted is not None and evicted.episode == 0
    assert replay.holds_episode(7) and not replay.holds_episode(0)
    assert replay.probabilities()[0] == pytest.approx(replay.probabilities().max())
    assert len(replay) == 3


def test_each_reward_is_minus_the_time_its_task_took_from_the_decision() -> None:
    workflow, platform = _gpu_stream()
    agent = DQNPolicy(QNet(), epsilon=0.3, seed=1, record=True)
    result = simulate(workflow, platform, agent, "fair")  # type: ignore[arg-type]
    index = {t.id: i for i, t in enumerate(workflow.tasks)}  # type: ignore[attr-defined]
    ends = [0.0] * len(index)
    for r in result.tasks:
        ends[index[r.task]] = r.end
    steps = transitions(agent.decisions, ends, 10.0, episode=0)
    assert len(steps) == len(workflow.tasks)  # type: ignore[attr-defined]
    sojourns = sum(r.end - r.ready for r in result.tasks)  # decided when ready and released
    assert sum(t.reward for t in steps) == pytest.approx(-sojourns / 10.0)
    assert all(t.reward < 0 for t in steps)
    assert [t.done for t in steps].count(True) == 1 and steps[-1].done
    assert all(t.next_task == u.task for t, u in pairwise(steps))


def test_epsilon_falls_linearly_then_stays() -> None:
    assert linear_schedule(1.0, 0.05, 100, 0) == 1.0
    assert linear_schedule(1.0, 0.05, 100, 50) == pytest.approx(0.525)
    assert linear_schedule(1.0, 0.05, 100, 1000) == 0.05


def test_a_tiny_training_run_goes_end_to_end(tmp_path: Path) -> None:
    cfg = DQNConfig(
        total_steps=120,
        learning_starts=30,
        train_frequency=2,
        batch_size=8,
        buffer_size=60,
        target_network_frequency=20,
        validate_every=60,
        validation_streams=1,
        stream_sizes=(2, 3),
        stream_tasks=(3, 5),
        nodes=(4,),
        out_dir=str(tmp_path),
    )
    result = train(cfg)
    assert result.steps == 120 and result.episodes >= 2
    net, extra = load_qnet(str(result.checkpoint))
    assert extra["steps"] == 120 and extra["kept"] in ("untrained", "step 60", "step 120")
    rows = [json.loads(line) for line in result.metrics_path.read_text().splitlines()]
    assert any("losses/td_loss" in r for r in rows)
    assert [r["val/step"] for r in rows if "val/step" in r] == [0, 60, 120]
    workflow, platform = _gpu_stream()
    planner = DQNPlanner(checkpoint=result.checkpoint)
    schedule = planner.schedule(workflow, platform)  # type: ignore[arg-type]
    replayed = simulate(workflow, platform, schedule, "fair")  # type: ignore[arg-type]
    assert validate_schedule(workflow, platform, replayed) == []  # type: ignore[arg-type]
    assert isinstance(net, QNet)
