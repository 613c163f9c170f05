"""The compiled batch core gives exactly what the Python engine (its specification) gives."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sim.batch import compiled
from sim.batch.config import SCHEDULERS, PowerSaving, PriorityWeights
from sim.batch.energy import PowerModel
from sim.batch.engine import _Engine
from sim.batch.model import BatchCluster, BatchNode, Partition, make_workload

pytestmark = pytest.mark.skipif(not compiled.AVAILABLE, reason="sim.batch._core is not built")


def cluster() -> BatchCluster:
    nodes = [BatchNode(f"c{i}", 8, 16_000, 0) for i in range(6)]
    nodes += [BatchNode(f"s{i}", 2, 4_000, 0) for i in range(3)]
    nodes += [BatchNode(f"g{i}", 16, 64_000, 4, "gpu") for i in range(2)]
    names = [n.name for n in nodes]
    return BatchCluster(
        tuple(nodes),
        (
            Partition("all", tuple(names), priority_job_factor=1),
            Partition("cpu", tuple(names[:6]), max_time_s=900, priority_job_factor=3),
            Partition("small", tuple(names[6:9]), priority_tier=2),
            Partition("gpu", tuple(names[9:]), priority_job_factor=2),
        ),
    )


def workload(seed: int, n: int = 400):
    rng = np.random.default_rng(seed)
    parts = ["all", "cpu", "small", "gpu"]
    jobs = []
    t = 0
    for k in range(n):
        t += int(rng.exponential(20))
        part = parts[int(rng.choice(4, p=[0.4, 0.3, 0.15, 0.15]))]
        cpus_cap = {"all": 2, "cpu": 8, "small": 2, "gpu": 16}[part]
        nodes = 1 if part in ("small", "gpu") or rng.random() < 0.7 else int(rng.integers(2, 4))
        limit = int(rng.choice([60, 300, 600, 1200, -1]))
        runtime = int(rng.lognormal(np.log(200), 1.0))
        job = dict(
            id=str(k),
            submit=t,
            runtime=runtime,
            limit=limit,
            nodes=nodes,
            cpus=int(rng.integers(1, cpus_cap + 1)),
            mem=int(rng.choice([0, 1000, 2000])),
            gpus=int(rng.integers(0, 3)) if part == "gpu" else 0,
            partition=part,
            user=f"u{int(rng.integers(0, 5))}",
        )
        if rng.random() < 0.3:
            job["estimate"] = max(1, int(runtime * rng.uniform(0.3, 1.5)))
        if rng.random() < 0.1:
            job["earliest"] = t + int(rng.integers(0, 500))
        if k > 3 and rng.random() < 0.08:
            job["after"] = [str(k - int(rng.integers(1, 4)))]
        jobs.append(job)
    return make_workload(jobs, parts)


CASES = [
    (name, seed, power)
    for seed, name in enumerate(SCHEDULERS)
    for power in (None, PowerSaving(300, 120))
]


@pytest.mark.parametrize(("scheduler", "seed", "power"), CASES)
def test_same_schedule_energy_and_counters(scheduler, seed, power):
    c, w = cluster(), workload(seed)
    cfg = replace(
        SCHEDULERS[scheduler],
        bf_interval_s=15,
        bf_resolution_s=(1, 60)[seed % 2],  # exact times and Slurm's reservation slots
        calc_period_s=120,
        completing_s=seed % 3,
        kill_grace_s=5 * (seed % 2),
        weights=PriorityWeights(
            estimate=-300 * (seed % 2),
            age=500,
            fairshare=2000,
            job_size=300,
            partition=700,
            max_age_s=3600,
            decay_half_life_s=1800,
        ),
    )
    model = PowerModel()
    py = _Engine(c, w, cfg, power, model, None).run()
    core = compiled.simulate_compiled(c, w, cfg, power, model, None)
    assert core.start_s.tolist() == py.start_s.tolist()
    assert core.end_s.tolist() == py.end_s.tolist()
    assert core.backfilled.tolist() == py.backfilled.tolist()
    assert core.alloc_nodes.tolist() == py.alloc_nodes.tolist()
    assert core.node_energy_j.tolist() == py.node_energy_j.tolist()  # bit for bit
    assert core.node_busy_cpu_s.tolist() == py.node_busy_cpu_s.tolist()
    assert core.node_off_s.tolist() == py.node_off_s.tolist()
    assert (core.events, core.passes, core.t_end_s) == (py.events, py.passes, py.t_end_s)
    assert core.backfilled.any() == (cfg.backfill and py.backfilled.any())
