"""The learned queue order: its estimate feature, a tiny training run and the evaluation's
bookkeeping (the held-out figures themselves are a command's output: docs/cluster-whatif.md)."""

from __future__ import annotations

import numpy as np

from sim.batch.engine import simulate_batch
from sim.batch.learn import FEATURES, LearnConfig, Period, evaluate, policy_config, train
from sim.batch.model import BatchCluster, BatchNode, Partition, make_workload


def test_a_negative_estimate_weight_runs_short_jobs_first():
    c = BatchCluster((BatchNode("n1", 4, 100),), (Partition("p", ("n1",)),))
    w = make_workload(
        [
            dict(id="a", submit=0, runtime=100, limit=100, cpus=4),
            dict(id="long", submit=1, runtime=500, limit=1000, cpus=4),
            dict(id="short", submit=2, runtime=10, limit=20, cpus=4),
        ],
        ["p"],
    )
    assert simulate_batch(c, w, policy_config([0, 0, 0, 0])).start_s.tolist() == [0, 100, 600]
    assert simulate_batch(c, w, policy_config([0, 0, 0, -5000])).start_s.tolist() == [0, 110, 100]


def periods(seed: int, n: int = 2) -> list[Period]:
    rng = np.random.default_rng(seed)
    c = BatchCluster(
        tuple(BatchNode(f"n{i}", 4, 100) for i in range(3)), (Partition("p", ("n0", "n1", "n2")),)
    )
    out = []
    for k in range(n):
        jobs = [
            dict(
                id=str(i),
                submit=int(i * 15),
                runtime=int(rng.integers(5, 300)),
                limit=int(rng.choice([60, 600, 3600])),
                nodes=int(rng.choice([1, 1, 2])),
                cpus=int(rng.integers(1, 5)),
            )
            for i in range(150)
        ]
        out.append(Period(f"p{k}", c, make_workload(jobs, ["p"])))
    return out


def test_training_never_ends_worse_than_easy_and_evaluation_counts_every_period():
    lc = LearnConfig(generations=2, population=4, seed=1)
    fitted = train(periods(0), lc)
    assert set(fitted["weights"]) == set(FEATURES)
    assert fitted["train_reward"] <= fitted["history"][0] == 1.0  # EASY's own reward is 1
    assert fitted["history"] == sorted(fitted["history"], reverse=True)
    report = evaluate(periods(5, 3), fitted["weights"], lc)
    assert len(report["periods"]) == 3
    for base in ("fifo", "sjf", "easy"):
        c = report["learned_vs"][base]["wait"]
        assert c["wins"] + c["ties"] + c["losses"] == 3
        assert c["ci95"][0] <= c["geomean_ratio"] <= c["ci95"][1]
