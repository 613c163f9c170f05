"""The report's views, insights and findings against independent computations on hand-made jobs."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import polars as pl
import pytest

from tests.analytics.conftest import at, make_jobs
from wass_chat.analytics import waits
from wass_chat.analytics.analysis import analyze
from wass_chat.analytics.anomalies import failing_users
from wass_chat.analytics.capacity import stated_capacity
from wass_chat.analytics.period import Period, load_period, period_of
from wass_chat.analytics.resources import gpu_by
from wass_chat.analytics.summary import summarize

PERIOD = Period(at(0), at(24))


def started(i, wait_h, state="COMPLETED", submit_h=0.0, **extra):
    """A started job submitted ``submit_h`` hours into the day that waited ``wait_h`` hours."""
    row = dict(
        job_id=str(1000 + i),
        user=f"u{i % 3}",
        state=state,
        submit=at(submit_h),
        start=at(submit_h + wait_h),
        end=None if state == "RUNNING" else at(submit_h + wait_h + 0.1),
        elapsed_s=360,
        node_list="n01",
    )
    return row | extra


@pytest.fixture
def mixed():
    """100 completed jobs waiting 0.5 h, 3 running jobs waiting 5 h, one job waiting 19.5 d."""
    rows = [started(i, 0.5) for i in range(100)]
    rows += [started(100 + i, 5.0, "RUNNING") for i in range(3)]
    rows.append(started(200, 19.5 * 24))
    return make_jobs(rows)


def test_wait_insight_weighs_samples_and_names_the_maximum(mixed):
    analysis = analyze(mixed.lazy(), at(0), at(24 * 21), compare=False)
    insight = next(c for c in analysis.charts if c.id == "chart-wait-by-state").insight
    assert "the longest wait was 19.5 d (a COMPLETED job)" in insight
    assert "RUNNING jobs" not in insight  # 3 jobs are too few to single out


def test_default_period_is_the_span_of_submissions():
    rows = [started(i, 1.0, submit_h=24 * i) for i in range(3)]
    rows[-1] |= dict(end=at(24 * 12), elapsed_s=11 * 86400)  # ends 10 days after the rest
    period = period_of(make_jobs(rows).lazy(), None, None)
    assert period.start == at(0)
    assert period.end == at(24 * 2 + 1) + timedelta(seconds=1)  # last start, not last end
    assert "first submission" in period.origin


def test_pending_reasons_and_queue_age():
    rows = [
        dict(user="a", state="PENDING", submit=at(20), reason="Resources", elapsed_s=0),
        dict(user="a", state="PENDING", submit=at(22), reason="Resources", elapsed_s=0),
        dict(user="b", state="PENDING", submit=at(1), reason="Priority", elapsed_s=0),
        dict(user="b", state="CANCELLED", submit=at(1), end=at(2), reason="Priority", elapsed_s=0),
        started(9, 1.0),
    ]
    loaded = load_period(make_jobs(rows).lazy(), PERIOD)
    pending = waits.pending_at_end(loaded, PERIOD)
    table = {r["reason"]: r for r in waits.pending_reasons(pending).to_dicts()}
    assert table["Resources"]["jobs"] == 2 and table["Resources"]["share_pct"] == pytest.approx(
        100 * 2 / 3, abs=0.05
    )
    assert table["Resources"]["max_age_h"] == 4.0 and table["Priority"]["max_age_h"] == 23.0
    ages = dict(waits.queue_age(pending).rows())
    assert ages == {"1-24 h": 3}


def test_wait_by_partition_and_size_match_numpy():
    rows = [
        started(i, w, partition=p, nnodes=n, node_list=f"n[01-{n:02d}]" if n > 1 else "n01")
        for i, (w, p, n) in enumerate(
            [(1, "batch", 1), (3, "batch", 1), (2, "gpu", 4), (8, "gpu", 20), (4, "gpu", 20)]
        )
    ]
    loaded = load_period(make_jobs(rows).lazy(), PERIOD)
    by_part = {
        r["partition"]: r for r in waits.wait_by(loaded, "partition", "partition").to_dicts()
    }
    assert by_part["gpu"]["median_wait_h"] == np.percentile([2, 8, 4], 50)
    assert by_part["gpu"]["p90_wait_h"] == pytest.approx(np.percentile([2, 8, 4], 90))
    assert by_part["batch"]["max_wait_h"] == 3
    by_size = waits.wait_by_size(loaded)
    assert by_size["size"].to_list() == ["1 node", "2-4 nodes", "17-64 nodes"]
    assert by_size.filter(pl.col("size") == "17-64 nodes")["median_wait_h"].item() == 6.0


def test_filters_keep_only_matching_jobs():
    rows = [started(i, 1.0, account="A" if i < 4 else "B", partition="p") for i in range(10)]
    analysis = analyze(make_jobs(rows).lazy(), at(0), at(24), account="B", compare=False)
    assert analysis.summary.jobs == 6 and analysis.filters == {"account": "B"}


def test_gpu_hours_from_alloc_tres():
    rows = [
        started(1, 0, alloc_tres="cpu=8,gres/gpu=4,node=1", elapsed_s=7200, partition="gpu"),
        started(2, 0, alloc_tres="cpu=8,gres/gpu:a100=2,node=1", elapsed_s=3600, partition="gpu"),
        started(3, 0, alloc_tres="cpu=8,node=1", elapsed_s=3600, partition="batch"),
    ]
    table = gpu_by(load_period(make_jobs(rows).lazy(), PERIOD), "partition")
    assert table.rows() == [("gpu", 2, 10.0, 100.0)]  # 4 GPUs x 2 h + 2 GPUs x 1 h


def test_failure_rates_are_percent():
    rows = [started(i, 0, user="bad", state="FAILED" if i < 15 else "COMPLETED") for i in range(20)]
    rows += [started(100 + i, 0, user="ok") for i in range(80)]
    loaded = load_period(make_jobs(rows).lazy(), PERIOD)
    anomaly = failing_users(loaded, summarize(loaded).failure_rate or 0)
    assert anomaly.examples.row(0, named=True)["failure_pct"] == 75.0
    assert anomaly.rule.endswith("= 30.0%")  # max(2 x 15%, 15% + 10 points), not 0.3


def test_previous_period_and_findings_quote_the_tables():
    rows = [started(i, 0.5, submit_h=24 + i % 20) for i in range(60)]
    rows += [started(100 + i, 0.2, submit_h=i % 20) for i in range(30)]
    rows += [started(200 + i, 30.0, partition="slow", submit_h=24 + i % 20) for i in range(40)]
    analysis = analyze(make_jobs(rows).lazy(), at(24), at(48), capacity=stated_capacity(8, None))
    assert analysis.previous is not None and analysis.previous.jobs == 30
    found = {f.topic: f for f in analysis.findings}
    assert f"30 -> {analysis.summary.jobs:,} jobs" in found["trend"].text
    slow = (
        analysis.tables["wait_by_partition"]
        .filter(pl.col("partition") == "slow")
        .row(0, named=True)
    )
    assert f"over {slow['jobs']:,} jobs" in found["partitions"].text
    assert "in slow waited 30.0 h at the median" in found["partitions"].text


def test_every_finding_quotes_its_table():
    """On synthetic data where several rules fire, each finding's numbers are the tables'."""
    from wass_chat.analytics.insights import human_duration, percent
    from wass_chat.sacct.synth import synthesize

    analysis = analyze(synthesize(20_000, seed=5).lazy())
    s, found = analysis.summary, {f.topic: f.text for f in analysis.findings}
    assert {"walltime", "pending", "failures"} <= set(found) and "capacity" not in found
    assert f"{s.over_request_median:.1f}x" in found["walltime"]
    assert percent(s.under_half_share) in found["walltime"]
    top = analysis.tables["pending_reasons"].row(0, named=True)
    pending = int(analysis.tables["pending_reasons"]["jobs"].sum())
    of = f"{top['jobs']:,} of the {pending:,} jobs pending at the end ({top['share_pct']:.1f}%)"
    assert of in found["pending"]
    assert human_duration(top["max_age_h"] * 3600) in found["pending"]
    failing = next(a for a in analysis.anomalies if a.kind == "failing_users")
    worst = failing.examples.row(0, named=True)
    assert f"{failing.count:,} users" in found["failures"]
    assert f"{worst['failure_pct']:.1f}% of {worst['finished']:,}" in found["failures"]


def test_pending_jobs_without_a_recorded_reason_are_not_said_to_wait_for_one():
    """sacct said ``None`` for jobs squeue showed pending for Priority (live cluster): the finding
    says no reason is recorded and points at the live queue, not 'waited for (none recorded)'."""
    from wass_chat.analytics.findings import _pending
    from wass_chat.analytics.insights import pending_insight

    rows = [
        dict(user="a", state="PENDING", submit=at(20 + i), reason=None, elapsed_s=0)
        for i in range(3)
    ] + [dict(user="b", state="PENDING", submit=at(23), reason="Priority", elapsed_s=0)]
    pending = waits.pending_at_end(load_period(make_jobs(rows).lazy(), PERIOD), PERIOD)
    table = waits.pending_reasons(pending)
    finding = _pending(table)
    assert finding is not None
    assert finding.text.startswith("3 of the 4 jobs pending at the end (75.0%) have no pending")
    assert "waited for" not in finding.text and "squeue" in finding.recommendation
    assert "no reason is recorded for 3 of them (75.0%)" in pending_insight(table, 4)
