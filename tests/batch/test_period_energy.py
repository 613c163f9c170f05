"""A recorded period's energy by hand, the cluster read from node lists, and the what-if
verdicts' rules (a CI that includes no change is said so; energy leads when it was asked)."""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl
import pytest

from sim.batch.energy import PowerModel, PowerProfile, energy_before_j
from sim.batch.model import BatchCluster, BatchNode, Partition
from wass_chat.batch.cluster_source import cluster_from_jobs
from wass_chat.batch.period_energy import assumptions, period_energy
from wass_chat.batch.whatif_verdict import whatif_verdict
from wass_chat.sacct.parse import empty_jobs
from wass_chat.slurm.hostlist import expand

T0 = datetime(2024, 3, 1)


def jobs(rows: list[dict[str, object]]) -> pl.DataFrame:
    """Allocation rows in the parsed sacct schema (missing columns null)."""
    base = empty_jobs()
    frame = pl.DataFrame(rows)
    return pl.concat(
        [base, frame.with_columns(pl.lit(False).alias("is_step"))], how="diagonal_relaxed"
    )


def row(user: str, part: str, start_h: float, hours: float, cpus: int, gpus: int = 0) -> dict:
    start = T0 + timedelta(hours=start_h)
    return {
        "job_id": f"{user}-{start_h}",
        "user": user,
        "partition": part,
        "submit": T0,  # all submitted at the period's start, so it is all recorded
        "start": start,
        "end": start + timedelta(hours=hours),
        "elapsed_s": int(hours * 3600),
        "nnodes": 1,
        "ncpus": cpus,
        "alloc_tres": f"cpu={cpus},gres/gpu={gpus}" if gpus else f"cpu={cpus}",
        "node_list": "g1" if part == "gpu" else "c1",
    }


CLUSTER = BatchCluster(
    (BatchNode("c1", 4, 0, 0, "box"), BatchNode("g1", 4, 0, 2, "gbox")),
    (Partition("cpu", ("c1",)), Partition("gpu", ("g1",))),
)
MODEL = PowerModel(
    {"box": PowerProfile(100, 200, 0, 10, 300), "gbox": PowerProfile(300, 200, 50, 10, 500)},
    pue=1.5,
)


def test_energy_of_a_period_by_hand():
    # 10 h period. alice: 2 of 4 CPUs on c1 for 4 h. bob: 4 CPUs and 1 of 2 GPUs on g1,
    # from 8 h to 12 h: only its first 2 h fall in the period.
    table = jobs([row("alice", "cpu", 1, 4, 2), row("bob", "gpu", 8, 4, 4, 1)])
    e = period_energy(table, T0, T0 + timedelta(hours=10), CLUSTER, MODEL, bucket_s=5 * 3600)
    alice = (100 * 0.5 + 200 * 0.5) * 4  # Wh: half the idle power it holds + half the CPU power
    bob = (300 * 1.0 + 200 * 1.0 + 50 * 1) * 2  # all of g1's idle (its CPUs), CPU, one GPU
    idle = (100 + 300) * 10
    dynamic = 200 * 0.5 * 4 + (200 + 50) * 2
    assert e.jobs == 2 and e.unpriced_jobs == 0
    assert e.jobs_kwh == pytest.approx((alice + bob) / 1000)
    assert e.it_kwh == pytest.approx((idle + dynamic) / 1000)
    assert e.facility_kwh == pytest.approx(1.5 * e.it_kwh)
    parts = dict(zip(e.by_partition["partition"], e.by_partition["energy_kwh"], strict=True))
    assert parts == pytest.approx({"cpu": alice / 1000, "gpu": bob / 1000})
    assert e.by_user["user"].to_list() == ["bob", "alice"]  # largest first
    # Two 5-hour buckets: alice runs 1-5 h (first), bob 8-10 h (second).
    assert e.over_time["jobs_kwh"].to_list() == pytest.approx([alice / 1000, bob / 1000])
    first = (400 * 5 + 200 * 0.5 * 4) / 1000
    assert e.over_time["it_kwh"].to_list() == pytest.approx([first, e.it_kwh - first])
    said = " ".join(assumptions(e))
    assert "not metered" in said and "PUE of 1.5" in said
    assert "box nodes (1): 100 W idle" in said and "from the platform file" in said


def test_idle_power_is_counted_only_where_jobs_were_recorded():
    table = jobs([row("alice", "cpu", 1, 4, 2)])  # recorded from T0 to T0 + 5 h (1 s after)
    e = period_energy(table, T0 - timedelta(days=30), T0 + timedelta(days=30), CLUSTER, MODEL)
    assert e.clamped and (e.start, e.end) == (T0, T0 + timedelta(hours=5, seconds=1))
    assert e.it_kwh == pytest.approx((400 * (5 + 1 / 3600) + 200 * 0.5 * 4) / 1000)


def test_jobs_of_a_partition_the_cluster_lacks_are_counted_not_priced():
    table = jobs([row("alice", "cpu", 1, 4, 2), row("carol", "huge", 1, 1, 1)])
    e = period_energy(table, T0, T0 + timedelta(hours=10), CLUSTER, MODEL)
    assert (e.jobs, e.unpriced_jobs) == (1, 1)
    assert "1 jobs ran in partitions the cluster does not have" in " ".join(assumptions(e))


def test_energy_before_each_edge_is_exact():
    # 100 W over [0, 10) and 50 W over [5, 20): edges 0, 5, 10, 20.
    drawn = energy_before_j(
        pl.Series([0.0, 5.0]).to_numpy(),
        pl.Series([10.0, 20.0]).to_numpy(),
        pl.Series([100.0, 50.0]).to_numpy(),
        pl.Series([0.0, 5.0, 10.0, 20.0]).to_numpy(),
    )
    assert drawn.tolist() == pytest.approx([0, 500, 1000 + 250, 1000 + 750])


def test_the_cluster_read_from_node_lists_matches_slurms_hostlists():
    lists = ["c[1-2]n[01-02],gpu1", "nid[000008-000011]", "nid000012", "login-a", "n[8-10]"]
    table = jobs(
        [
            {
                **row(f"u{i}", "p", 0, 1, 4 * len(expand(text))),
                "node_list": text,
                "nnodes": len(expand(text)),
            }
            for i, text in enumerate(lists)
        ]
    )
    cluster = cluster_from_jobs(table)
    names = {n.name for n in cluster.nodes}
    assert names == {name for text in lists for name in expand(text)}
    assert {"c1n01", "c2n02", "gpu1", "nid000009", "login-a", "n10"} <= names
    assert all(n.cpus == 4 for n in cluster.nodes)
    assert [n.name for n in cluster.nodes][:4] == ["c1n01", "c1n02", "c2n01", "c2n02"]


def verdict_facts(low: float, high: float, **asked: object) -> dict:
    figures = {"wait_mean_s": 600.0, "facility_kwh": 1000.0, "killed_at_limit": 3, "backfilled": 5}
    return {
        "asked": asked,
        "change_words": ["idle nodes powered off after 30 min (booting in 300 s)"],
        "window": {"words": "the last 14 days of accounting: 10 jobs"},
        "before": figures,
        "after": {**figures, "wait_mean_s": 630.0, "facility_kwh": 800.0},
        "difference": {
            "wait_mean_s": 30.0,
            "wait_mean_ci95_s": [low, high],
            "facility_kwh": -200.0,
            "facility_pct": -20.0,
            "jobs_waiting_less": 1,
            "jobs_waiting_more": 2,
        },
        "left_out": {"too_big_after_change": 0},
        "partition": None,
    }


def test_verdicts_lead_with_what_was_asked_and_say_when_a_ci_includes_no_change():
    words = whatif_verdict(verdict_facts(10.0, 50.0, power_off_after_min=30))
    assert "it would save 200 kWh at the facility (20.0% of 1,000 kWh), and the mean wait" in words
    assert "from 10.0 min to 10.5 min (+30 s, 95% CI +10 s to +50 s)" in words
    words = whatif_verdict(verdict_facts(-5.0, 50.0, add_nodes=8))
    assert "the mean wait would not change beyond chance" in words
    assert "includes no change" in words and words.index("wait") < words.index("kWh")
