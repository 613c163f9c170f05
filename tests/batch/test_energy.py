"""Energy by hand: one node type with round numbers, checked against the replay and the record."""

from __future__ import annotations

import pytest

from sim.batch.cluster_file import cluster_from_dict
from sim.batch.config import PowerSaving, scheduler_preset
from sim.batch.energy import PowerProfile, recorded_energy
from sim.batch.engine import simulate_batch
from sim.batch.metrics import summarise
from sim.batch.model import make_workload
from sim.errors import PlatformError

PLATFORM = {
    "nodes": [{"prefix": "n", "count": 2, "cpus": 4, "memory_gb": 1, "gpus": 2, "type": "box"}],
    "partitions": [{"name": "p", "nodes": ["n"]}],
    "power": {
        "pue": 1.5,
        "types": {"box": {"idle_w": 100, "cpu_w": 200, "gpu_w": 50, "off_w": 10, "boot_w": 300}},
    },
}


def test_replay_energy_by_hand():
    cluster, model = cluster_from_dict(PLATFORM)
    assert model.profiles["box"] == PowerProfile(100, 200, 50, 10, 300)
    # One job: 2 CPUs and 1 GPU on one node for 100 s. Two nodes idle at 100 W throughout.
    w = make_workload(
        [dict(id="a", submit=0, runtime=100, limit=200, cpus=2, gpus=1, recorded_start=0)], ["p"]
    )
    r = simulate_batch(cluster, w, scheduler_preset("fifo"), power_model=model)
    s = summarise(cluster, w, r, model)
    it_j = 2 * 100 * 100 + 200 * 0.5 * 100 + 50 * 1 * 100
    assert s["energy"]["it_kwh"] == pytest.approx(it_j / 3.6e6)
    assert s["energy"]["facility_kwh"] == pytest.approx(1.5 * it_j / 3.6e6)
    job_j = 100 * 0.5 * 100 + 200 * 0.5 * 100 + 50 * 100  # idle share (half the node) + dynamic
    assert s["energy"]["jobs_kwh"] == pytest.approx(job_j / 3.6e6)
    assert s["energy"]["jobs_kwh"] + s["energy"]["idle_off_boot_kwh"] == pytest.approx(
        s["energy"]["it_kwh"]
    )
    recorded = recorded_energy(cluster, w, model)
    assert recorded["it_kwh"] == pytest.approx(it_j / 3.6e6)
    assert recorded["by_partition_kwh"]["p"] == pytest.approx(job_j / 3.6e6)


def test_powered_down_nodes_draw_off_power_and_boot_power():
    cluster, model = cluster_from_dict(PLATFORM)
    w = make_workload(
        [dict(id="a", submit=0, runtime=10, cpus=4), dict(id="b", submit=1000, runtime=10, cpus=4)],
        ["p"],
    )
    r = simulate_batch(cluster, w, scheduler_preset("fifo"), PowerSaving(100, 50), model)
    # n1: busy 0-10 (100 + 200), idle 10-110, off 110-1000, boots 1000-1050, busy 1050-1060.
    # n2: idle 0-100, off 100-1060. The replay ends when b ends (1060).
    n1 = 10 * 300 + 100 * 100 + 890 * 10 + 50 * 300 + 10 * 300
    n2 = 100 * 100 + 960 * 10
    assert r.start_s.tolist() == [0, 1050]
    assert r.node_energy_j.tolist() == [n1, n2]


def test_a_bad_platform_file_names_every_problem():
    with pytest.raises(PlatformError, match="2 problems"):
        cluster_from_dict(
            {"nodes": [{"prefix": "n", "cpus": "many"}], "partitions": [{"nodes": ["n"]}]}
        )
