"""Every statistic against an independent, plain-Python computation on a hand-made table."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from tests.analytics.conftest import at, make_jobs
from wass_chat.analytics import breakdowns as bd
from wass_chat.analytics.anomalies import (
    failing_users,
    long_waits,
    over_requesters,
    rarely_used_nodes,
)
from wass_chat.analytics.capacity import fallback_capacity
from wass_chat.analytics.period import Period, load_period
from wass_chat.analytics.summary import summarize
from wass_chat.analytics.utilisation import (
    busy_integral,
    node_intervals,
    node_usage,
    utilisation_over_time,
)

PERIOD = Period(at(0), at(24))
FAILURE = {"FAILED", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL"}


@pytest.fixture
def loaded(hand_jobs):
    return load_period(hand_jobs.lazy(), PERIOD)


def rows_in_period(hand_jobs):
    """The module's selection, written independently: allocations submitted in the day."""
    return [
        r
        for r in hand_jobs.to_dicts()
        if not r["is_step"] and r["submit"] is not None and at(0) <= r["submit"] < at(24)
    ]


def test_the_jobs_that_ended_badly_are_named_latest_first(loaded, hand_jobs):
    """The ids of the period's failed and timed-out jobs ("which jobs failed today?"), by
    state, the latest end first, from the same table as the failure rate."""
    rows = [
        r
        for r in rows_in_period(hand_jobs)
        if r["end"] is not None and r["state"] in FAILURE | {"TIMEOUT"}
    ]
    expected: dict[str, list[str]] = {}
    for r in sorted(rows, key=lambda r: (r["end"], r["job_id"]), reverse=True):
        expected.setdefault(r["state"], []).append(r["job_id"])
    assert expected, "the hand-made day has jobs that failed or timed out"
    assert summarize(loaded).ended_badly == expected


def test_period_membership(loaded):
    assert set(loaded.filter(pl.col("in_period"))["user"]) == {"alice", "bob", "carol", "erin"}
    assert loaded.filter(~pl.col("in_period"))["user"].to_list() == ["dave"]  # ran into the period
    assert "1.batch" not in loaded["job_id"].to_list()


def test_summary_against_independent_computation(loaded, hand_jobs):
    rows = rows_in_period(hand_jobs)
    s = summarize(loaded)
    finished = [
        r for r in rows if r["end"] is not None and r["state"] not in ("PENDING", "RUNNING")
    ]
    started = [r for r in rows if r["start"] is not None]
    waits = [(r["start"] - (r["eligible"] or r["submit"])).total_seconds() for r in started]
    measured = [
        r for r in rows if r["state"] == "COMPLETED" and r["timelimit_s"] and r["elapsed_s"] > 0
    ]
    ratios = [r["timelimit_s"] / r["elapsed_s"] for r in measured]

    assert s.jobs == len(rows) == 8
    assert (s.users, s.accounts) == (4, 3)
    assert s.finished == len(finished) == 6
    assert (s.pending, s.running, s.started) == (1, 1, len(started))
    assert s.failure_rate == pytest.approx(
        sum(r["state"] in FAILURE for r in finished) / len(finished)
    )
    assert s.timeout_rate == pytest.approx(1 / 6)
    assert s.cancel_rate == pytest.approx(1 / 6)
    assert s.wait_mean_s == pytest.approx(np.mean(waits))
    assert s.wait_median_s == pytest.approx(np.percentile(waits, 50))
    assert s.wait_p90_s == pytest.approx(np.percentile(waits, 90))
    assert s.wait_max_s == max(waits) == 7200
    assert s.node_hours == pytest.approx(sum(r["elapsed_s"] * r["nnodes"] for r in rows) / 3600)
    assert s.core_hours == pytest.approx(sum(r["elapsed_s"] * r["ncpus"] for r in rows) / 3600)
    assert s.over_request_jobs == len(measured) == 2
    assert s.over_request_ratio == pytest.approx(
        sum(r["timelimit_s"] for r in measured) / sum(r["elapsed_s"] for r in measured)
    )
    assert s.over_request_median == pytest.approx(np.median(ratios))
    assert s.under_half_share == pytest.approx(np.mean([x > 2 for x in ratios]))
    assert s.backfill_share == pytest.approx(sum(r["backfilled"] for r in started) / len(started))
    assert s.state_counts["COMPLETED"] == 2 and sum(s.state_counts.values()) == 8


def test_wait_by_state(loaded, hand_jobs):
    table = {r["state"]: r for r in bd.wait_by_state(loaded).to_dicts()}
    assert table["TIMEOUT"]["median_s"] == 7200
    assert table["FAILED"]["mean_s"] == 1800  # start - eligible, not start - submit
    completed = [600.0, 0.0]
    assert table["COMPLETED"]["p90_s"] == pytest.approx(np.percentile(completed, 90))
    assert "CANCELLED" not in table and "PENDING" not in table  # never started


def test_states_per_user_and_top_entities(loaded):
    table = bd.states_per_user(loaded, top=2)
    counts = {(r["user"], r["state"]): r["jobs"] for r in table.to_dicts()}
    assert counts[("bob", "CANCELLED")] == 1 and counts[("alice", "COMPLETED")] == 2
    assert counts[("(others)", "RUNNING")] == 1 and counts[("(others)", "OUT_OF_MEMORY")] == 1
    assert table["user"].to_list()[0] == "bob"  # most jobs first
    top = bd.top_entities(loaded, "account").rows()
    assert top[0] == ("B", pytest.approx((300 + 4 * 3600) / 3600), 3)
    assert [name for name, *_ in top] == ["B", "A", "C"]


def test_rates_over_time_hourly(loaded):
    rates = {r["bucket"]: r for r in bd.rates_over_time(loaded, PERIOD).to_dicts()}
    assert rates[at(1)]["failure_rate"] == 1.0
    assert rates[at(3)]["timeout_rate"] == 1.0
    assert rates[at(0)]["finished"] == 2 and rates[at(0)]["failure_rate"] == 0.0


def test_busy_integral_matches_brute_force():
    rng = np.random.default_rng(1)
    starts = rng.integers(0, 500, 60)
    ends = starts + rng.integers(0, 200, 60)
    weights = rng.integers(1, 5, 60)
    edges = np.arange(0, 800, 37)
    busy = np.zeros(800, dtype=np.int64)
    for s, e, w in zip(starts, ends, weights, strict=True):
        busy[s:e] += w
    expected = np.array([busy[:t].sum() for t in edges])
    assert np.array_equal(busy_integral(starts, ends, weights, edges), expected)


def test_node_usage_and_utilisation(loaded):
    usage = {r["node"]: r for r in node_usage(loaded).to_dicts()}
    # n01: job 1 (1 h) + job 5 (1 h); n02: job 2 (10 min) + job 3 (5 min) + job 5 (1 h)
    assert usage["n01"]["busy_hours"] == pytest.approx(2.0) and usage["n01"]["jobs"] == 2
    assert usage["n02"]["busy_hours"] == pytest.approx(1 + 15 / 60) and usage["n02"]["jobs"] == 3
    assert usage["n05"]["busy_hours"] == pytest.approx(0.5 + 1 / 60)  # dave clipped to the period
    assert usage["n04"]["busy_hours"] == pytest.approx(2.0)  # TIMEOUT 1 h + RUNNING 1 h so far
    capacity = fallback_capacity(len(usage))
    series = utilisation_over_time(loaded, PERIOD, capacity, node_intervals(loaded))
    assert series.height == 24
    hour0 = series.row(0, named=True)
    # 00:00-01:00: dave 0.5 h x 1 node, alice#1 50 min x 1, alice#2 10 min x 2 nodes
    assert hour0["busy_nodes"] == pytest.approx(0.5 + 50 / 60 + 2 * 10 / 60)
    assert hour0["utilisation"] == pytest.approx(hour0["busy_nodes"] / 5)
    total = (series["busy_nodes"].sum()) * 3600
    assert total == pytest.approx(sum(u["busy_hours"] for u in usage.values()) * 3600)


def test_hostlist_forms():
    jobs = make_jobs(
        [
            dict(
                user="u",
                state="COMPLETED",
                submit=at(0),
                start=at(0),
                end=at(1),
                elapsed_s=3600,
                node_list=nl,
                nnodes=n,
            )
            for nl, n in (
                ("bm[001-003,007]", 4),
                ("node01,gpu[1-2]", 3),
                ("login", 1),
                ("c[1-2]n[01-02]", 4),  # two bracket groups in one name
                ("gpu-a[1-2]-b3", 2),  # text after the bracket group
            )
        ]
    )
    usage = node_usage(load_period(jobs.lazy(), PERIOD))
    assert sorted(usage["node"]) == [
        "bm001",
        "bm002",
        "bm003",
        "bm007",
        "c1n01",
        "c1n02",
        "c2n01",
        "c2n02",
        "gpu-a1-b3",
        "gpu-a2-b3",
        "gpu1",
        "gpu2",
        "login",
        "node01",
    ]
    assert usage["busy_hours"].to_list() == [1.0] * 14


def test_anomaly_rules():
    rows = []
    for i in range(100):
        rows.append(
            dict(
                user="good",
                state="FAILED" if i < 5 else "COMPLETED",
                submit=at(0),
                start=at(0),
                end=at(1),
                elapsed_s=3600,
                timelimit_s=5400,
                node_list="n01",
            )
        )
    for i in range(20):
        rows.append(
            dict(
                user="bad",
                state="FAILED" if i < 15 else "COMPLETED",
                submit=at(1),
                start=at(1),
                end=at(2),
                elapsed_s=3600,
                timelimit_s=5400,
                node_list="n02",
            )
        )
    for _ in range(20):
        rows.append(
            dict(
                user="greedy",
                state="COMPLETED",
                submit=at(2),
                start=at(2),
                end=at(3),
                elapsed_s=3600,
                timelimit_s=36000,
                node_list="n03",
            )
        )
    rows.append(
        dict(
            user="late",
            state="COMPLETED",
            submit=at(0),
            start=at(10),
            end=at(10.1),
            elapsed_s=360,
            node_list="n04",
        )
    )
    loaded = load_period(make_jobs(rows).lazy(), PERIOD)
    s = summarize(loaded)
    overall = 20 / 141
    assert s.failure_rate is not None and s.failure_rate == pytest.approx(overall)
    failing = failing_users(loaded, s.failure_rate)
    assert failing.count == 1 and failing.examples["user"].to_list() == ["bad"]
    greedy = over_requesters(loaded)
    assert greedy.examples["user"].to_list() == ["greedy"]
    assert greedy.examples["unused_node_hours"].item() == pytest.approx(20 * 9.0)
    waits = long_waits(loaded)
    assert waits.count == 1 and waits.examples["wait_h"].item() == 10.0
    nodes = pl.DataFrame(
        {
            "node": [f"n{i:02d}" for i in range(11)],
            "busy_hours": [10.0] * 10 + [0.5],
            "jobs": [1] * 11,
        }
    )
    rare = rarely_used_nodes(nodes)
    assert rare.count == 1 and rare.examples["node"].item() == "n10"


def test_a_job_started_without_a_time_limit_is_not_an_over_request() -> None:
    """Slurm records a job that started without a limit as ``365-00:00:00``; counting it made a
    live cluster's jobs 'ask for 2299500x the walltime they used'."""
    rows = [
        {
            "job_id": str(i),
            "user": "u",
            "state": "COMPLETED",
            "submit": at(1),
            "eligible": at(1),
            "start": at(1),
            "end": at(2),
            "elapsed_s": 3600,
            "timelimit_s": limit,
        }
        for i, limit in enumerate([7200, 365 * 86400])
    ]
    s = summarize(load_period(make_jobs(rows).lazy(), PERIOD))
    assert s.over_request_jobs == 1 and s.over_request_ratio == pytest.approx(2.0)
