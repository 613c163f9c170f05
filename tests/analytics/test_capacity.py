"""Utilisation against the cluster's capacity, checked by hand on a small sacct text.

The cluster: two nodes of 8 CPUs. Two 4-CPU jobs share n01 from 00:00 to 02:00; an 8-CPU job
holds n02 from 01:00 to 02:00. By hand, per hour: CPUs 8/16 then 16/16 (50%, 100%); distinct
busy nodes 1/2 then 2/2 (50%, 100%). Summing nodes per job (the old rule) gave 2/2 then 3/2:
150%.
"""

from __future__ import annotations

from datetime import datetime

import polars as pl
import pytest

from wass_chat.analytics.analysis import analyze
from wass_chat.analytics.capacity import (
    Capacity,
    capacity_note,
    parse_slurm_conf,
    stated_capacity,
)
from wass_chat.sacct.parse import parse_sacct_text

HEADER = (
    "JobID|User|Account|Partition|Submit|Eligible|Start|End|Elapsed|State|NNodes|NCPUS|NodeList"
)
SHARED = "\n".join(
    [
        HEADER,
        "1|ann|a|batch|2024-05-01T00:00:00|2024-05-01T00:00:00|2024-05-01T00:00:00|"
        "2024-05-01T02:00:00|02:00:00|COMPLETED|1|4|n01",
        "2|ann|a|batch|2024-05-01T00:00:00|2024-05-01T00:00:00|2024-05-01T00:00:00|"
        "2024-05-01T02:00:00|02:00:00|COMPLETED|1|4|n01",
        "3|bo|b|batch|2024-05-01T00:30:00|2024-05-01T00:30:00|2024-05-01T01:00:00|"
        "2024-05-01T02:00:00|01:00:00|COMPLETED|1|8|n02",
    ]
)
SLURM_CONF = """
# two nodes of 8 CPUs
NodeName=DEFAULT RealMemory=1000
NodeName=n[01-02] CPUs=8 State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES
PartitionName=small Nodes=n01
"""
START, END = datetime(2024, 5, 1), datetime(2024, 5, 1, 2)


@pytest.fixture
def jobs():
    return parse_sacct_text(SHARED).jobs.lazy()


def hourly(analysis, column="utilisation", scale=100):
    """The per-minute series (a 2-hour period) averaged per hour."""
    series = analysis.tables["utilisation"]
    means = series.group_by(pl.col("bucket").dt.hour()).agg(pl.col(column).mean()).sort("bucket")
    return [round(scale * u, 6) for u in means[column]]


def test_cpu_utilisation_matches_hand_computation(jobs):
    capacity = stated_capacity(None, 16)
    analysis = analyze(jobs, START, END, capacity=capacity)
    assert hourly(analysis) == [50.0, 100.0]
    assert hourly(analysis, "alloc_cpus", 1) == [8.0, 16.0]


def test_shared_nodes_count_once(jobs):
    analysis = analyze(jobs, START, END, capacity=stated_capacity(2, None))
    assert hourly(analysis, "busy_nodes", 1) == [1.0, 2.0]  # summed per job: 2.0, 3.0
    assert hourly(analysis) == [50.0, 100.0]
    usage = {r["node"]: r for r in analysis.node_usage.to_dicts()}
    assert usage["n01"]["busy_hours"] == 2.0 and usage["n01"]["jobs"] == 2


def test_fallback_is_labelled_and_never_above_100(jobs):
    analysis = analyze(jobs, START, END)
    assert analysis.capacity.fallback and "guessed" in analysis.capacity.label()
    assert max(hourly(analysis)) <= 100.0
    assert hourly(analysis) == [50.0, 100.0]  # 2 nodes seen
    # a fact about the tool, not the cluster: the report's note, never a finding
    assert all("capacity" not in f.text.lower() for f in analysis.findings)
    note = capacity_note(analysis.capacity)
    assert note is not None and "measured against the 2 nodes seen in accounting" in note
    assert capacity_note(Capacity(2, None, "stated: --capacity-nodes")) is None


def test_understated_cpu_capacity_is_capped_and_counted(jobs):
    analysis = analyze(jobs, START, END, capacity=stated_capacity(None, 12))
    assert hourly(analysis) == [pytest.approx(100 * 8 / 12), 100.0]
    assert hourly(analysis, "capped", 1) == [0.0, 1.0]
    utilisation = next(c for c in analysis.charts if c.id == "chart-utilisation")
    assert "In 60 intervals accounting shows more CPUs" in utilisation.insight


def test_slurm_conf_capacity_and_partitions(jobs):
    capacity = parse_slurm_conf(SLURM_CONF, "slurm.conf test")
    assert (capacity.nodes, capacity.cpus) == (2, 16)
    assert capacity.partition("small") is not None
    assert (capacity.partition("small").nodes, capacity.partition("small").cpus) == (1, 8)  # type: ignore[union-attr]
    analysis = analyze(jobs, START, END, capacity=capacity)
    table = {r["partition"]: r for r in analysis.tables["partition_utilisation"].to_dicts()}
    # batch: CPU-seconds 4*7200*2 + 8*3600 = 86400 over 16 CPUs x 7200 s = 75%
    assert table["batch"]["utilisation_pct"] == 75.0 and table["batch"]["basis"] == "CPUs"


def test_capacity_label():
    assert Capacity(4, 32, "scontrol").label() == "4 nodes / 32 CPUs (scontrol)"


def test_partition_filter_measures_against_that_partition(jobs):
    capacity = parse_slurm_conf(SLURM_CONF.replace("Nodes=ALL", "Nodes=n02"), "slurm.conf test")
    analysis = analyze(jobs, START, END, partition="batch", capacity=capacity)
    assert (analysis.capacity.nodes, analysis.capacity.cpus) == (1, 8)
    assert "partition batch" in analysis.capacity.label()
    # all 16 allocated CPUs of the second hour against batch's 8: capped at 100%, counted
    assert hourly(analysis) == [100.0, 100.0]
