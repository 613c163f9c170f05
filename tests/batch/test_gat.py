"""The graph-attention queue policy: its decision hook and masks, the shipped checkpoint's
schedules, and that a tiny PPO run learns something and repeats itself per seed (the
held-out figures are a command's output: docs/cluster-whatif.md)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from policy.batch_gat.evaluate import SHIPPED_CHECKPOINT
from policy.batch_gat.imitate import CemChooser, cem_decisions
from policy.batch_gat.model import Batch, QueuePolicy, load_checkpoint
from policy.batch_gat.rollout import replay_policy, run_episode
from policy.batch_gat.train import PPOConfig, train
from sim.batch.check import schedule_problems
from sim.batch.chosen import JOB_FEATURES, DecisionView, InvalidChoiceError, simulate_chosen
from sim.batch.config import scheduler_preset
from sim.batch.engine import simulate_batch
from sim.batch.learn import DEFAULT_RUN_WEIGHTS, FEATURES, Period, policy_config
from sim.batch.model import BatchCluster, BatchNode, Partition, make_workload
from sim.batch.priority import PriorityModel


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny forward passes: two threads on a shared machine are ten times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def two_partitions() -> BatchCluster:
    nodes = tuple(BatchNode(f"n{i}", 4, 100, gpus=2 if i >= 3 else 0) for i in range(5))
    return BatchCluster(
        nodes, (Partition("cpu", ("n0", "n1", "n2")), Partition("gpu", ("n3", "n4")))
    )


def random_periods(seed: int, n: int = 2, jobs: int = 120) -> list[Period]:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        rows = []
        for i in range(jobs):
            gpu = rng.random() < 0.3
            rows.append(
                dict(
                    id=str(i),
                    submit=int(i * 20),
                    runtime=int(rng.integers(5, 400)),
                    limit=int(rng.choice([60, 600, 3600])),
                    nodes=int(rng.choice([1, 1, 2, 3]) if not gpu else rng.choice([1, 2])),
                    cpus=int(rng.integers(1, 5)),
                    gpus=int(gpu),
                    partition="gpu" if gpu else "cpu",
                    user=f"u{int(rng.integers(4))}",
                    after=[str(i - 3)] if i >= 3 and rng.random() < 0.1 else [],
                )
            )
        out.append(Period(f"p{k}", two_partitions(), make_workload(rows, ["cpu", "gpu"])))
    return out


def test_only_the_head_and_jobs_that_fit_now_may_be_chosen():
    c = BatchCluster((BatchNode("n0", 4, 100),), (Partition("p", ("n0",)),))
    w = make_workload(
        [
            dict(id="running", submit=0, runtime=100, limit=100, cpus=2),
            dict(id="head", submit=1, runtime=10, limit=10, cpus=4),
            dict(id="fits", submit=1, runtime=10, limit=10, cpus=2),
            dict(id="too-big", submit=1, runtime=10, limit=10, cpus=3),
        ],
        ["p"],
    )
    seen: list[DecisionView] = []

    def head(view: DecisionView) -> int:
        seen.append(view)
        return 0

    simulate_chosen(c, w, head, window=8)
    first = seen[0]
    assert first.rows[:3] == (1, 2, 3) and first.mask[:3].tolist() == [True, True, False]
    assert not first.mask[3:].any()  # padding
    with pytest.raises(InvalidChoiceError):
        simulate_chosen(c, w, lambda view: 2, window=8)


def test_the_network_never_picks_a_masked_job():
    period = random_periods(3, 1)[0]
    views: list[DecisionView] = []
    rng = np.random.default_rng(0)

    def record(view: DecisionView) -> int:
        views.append(view)
        return int(rng.choice(np.flatnonzero(view.mask)))

    simulate_chosen(period.cluster, period.workload, record, window=16)
    assert len(views) > 20
    net = QueuePolicy(replace(QueuePolicy().cfg, window=16))
    with torch.no_grad():
        logits, _ = net(Batch.of(views))
    probs = torch.softmax(logits, -1)
    mask = torch.from_numpy(np.stack([v.mask for v in views]))
    assert float(probs[~mask].sum()) == 0.0
    samples = torch.multinomial(
        probs, 50, replacement=True, generator=torch.Generator().manual_seed(0)
    )
    assert bool(mask.gather(1, samples).all())


def test_always_choosing_the_head_is_fifo_easy():
    for period in random_periods(1):
        w = period.workload
        chosen = simulate_chosen(period.cluster, w, lambda view: 0, window=16)
        easy = simulate_batch(period.cluster, w, scheduler_preset("fifo-easy"))
        assert chosen.start_s.tolist() == easy.start_s.tolist()


def test_the_shipped_policy_loads_and_schedules_validly():
    assert SHIPPED_CHECKPOINT.stat().st_size < 1_000_000
    net, meta = load_checkpoint(str(SHIPPED_CHECKPOINT))
    imitation = meta["imitation"]
    assert isinstance(imitation, dict) and imitation["decisions"] and meta["train_cpu_s"]
    for period in random_periods(7):
        for seed in (0, None):  # sampled and greedy
            result = replay_policy(net, period, sample_seed=seed)
            assert (result.start_s >= 0).all()
            assert schedule_problems(period.cluster, period.workload, result) == []


def test_the_checker_finds_an_impossible_schedule():
    period = random_periods(2, 1)[0]
    w = period.workload
    result = simulate_batch(period.cluster, w, scheduler_preset("easy"))
    assert schedule_problems(period.cluster, w, result) == []
    early = result.start_s.copy()
    early[10] = w.submit_s[10] - 5
    problems = schedule_problems(period.cluster, w, replace(result, start_s=early))
    assert any("before it may" in p for p in problems)
    crowded = result.start_s.copy()
    crowded[:] = crowded.min()  # everything at once: no node has that much
    crowded = np.maximum(crowded, w.earliest_s)
    problems = schedule_problems(period.cluster, w, replace(result, start_s=crowded))
    assert any("more than it has" in p for p in problems)


def test_a_tiny_training_run_changes_the_weights_and_repeats_per_seed():
    periods = random_periods(4)
    cfg = PPOConfig(updates=2, windows_per_update=1, window_jobs=80, epochs=1, minibatch=64)
    torch.manual_seed(cfg.seed)
    fresh = QueuePolicy(cfg.net)  # the initial weights training starts from
    net_a, rec_a = train(periods, cfg)
    net_b, rec_b = train(periods, cfg)
    assert rec_a["decisions"] == rec_b["decisions"] > 0
    state_a, state_b, state_0 = net_a.state_dict(), net_b.state_dict(), fresh.state_dict()
    assert all(torch.equal(state_a[k], state_b[k]) for k in state_a)
    assert any(not torch.equal(state_a[k], state_0[k]) for k in state_a)
    net_c, _ = train(periods, replace(cfg, seed=1))
    assert any(not torch.equal(state_a[k], net_c.state_dict()[k]) for k in state_a)


def test_episode_rewards_add_up_to_the_mean_wait_ratio():
    period = random_periods(5, 1)[0]
    torch.manual_seed(0)
    ep = run_episode(QueuePolicy(), period, torch.Generator().manual_seed(0))
    assert len(ep.actions) == len(ep.rewards) > 0
    # minus (wait after the first decision) / (jobs x EASY's mean wait): at most the ratio
    assert -float(ep.rewards.sum()) <= ep.wait_ratio + 1e-9
    assert (ep.rewards <= 0).all()


def test_imitation_targets_are_the_linear_orders_choice_among_the_valid_jobs():
    period = random_periods(6, 1)[0]
    w, cluster = period.workload, period.cluster
    cfg = policy_config([DEFAULT_RUN_WEIGHTS[k] for k in FEATURES])
    prio = PriorityModel(cfg, cluster, w, w.partition)  # size and estimate terms, as Slurm's
    views, actions = cem_decisions([period], window=16)
    assert len(views) > 20
    chooser = CemChooser(period)
    for view, action in zip(views, actions, strict=True):
        assert view.mask[action]
        valid = [x for x in range(view.count) if view.mask[x]]
        expected = {
            x: prio.static[view.rows[x]]
            + cfg.weights.fairshare * float(view.jobs[x, JOB_FEATURES.index("fairshare")])
            for x in valid
        }
        got = chooser.priorities(view)
        assert all(abs(got[x] - expected[x]) <= 3 for x in valid)  # int(), age <= 2
        assert got[action] == max(got[x] for x in valid)


def test_cloning_makes_the_actor_agree_with_the_linear_order():
    periods = random_periods(8)
    cfg = PPOConfig(
        updates=0, imitation_windows=2, window_jobs=100, imitation_epochs=6, minibatch=64
    )
    net, rec = train(periods, cfg)
    views, actions = cem_decisions(periods, cfg.net.window)
    torch.manual_seed(0)
    fresh = QueuePolicy(cfg.net)
    with torch.no_grad():
        trained = net(Batch.of(views))[0].argmax(-1)
        untrained = fresh(Batch.of(views))[0].argmax(-1)
    target = torch.tensor(actions)
    agree = float((trained == target).float().mean())
    assert agree > float((untrained == target).float().mean()) + 0.1
    assert rec["imitation"]["agreement"] > 0.5
