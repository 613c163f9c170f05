"""CPU, memory and GPU efficiency against hand computations and an independent reading of the
same sacct text (plain Python: its own duration and memory parsers, no polars)."""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from wass_chat.analytics.analysis import analyze
from wass_chat.analytics.efficiency import BIN_LABELS
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.fields import FIELD_NAMES
from wass_chat.sacct.ingest import ingest_file
from wass_chat.sacct.parse import parse_sacct_text, schema
from wass_chat.sacct.render import render_sacct_lines, write_sacct_file
from wass_chat.sacct.synth import synthesize

HEADER = (
    "JobID|JobIDRaw|User|Account|Partition|Submit|Start|End|Elapsed|State|NNodes|NCPUS|ReqMem|"
    "AllocTRES|NodeList|TotalCPU|MaxRSS|TRESUsageInTot"
)
T0, T1, T2 = "2024-01-01T00:00:00", "2024-01-01T00:10:00", "2024-01-01T02:10:00"
HAND = "\n".join(
    [
        HEADER,
        # 4 CPUs for 1 h, TotalCPU 2 h on the allocation row; step 101.0 peaked at 3 GiB (one
        # task's MaxRSS: no NTasks, no TRESUsageInTot) of the 8 GiB the job was given
        f"101|101|alice|acc1|batch|{T0}|{T1}|{T2}|01:00:00|COMPLETED|1|4|8Gn|"
        "cpu=4,mem=8G,node=1|n01|02:00:00||",
        f"101.batch|101.batch|||||{T1}|{T2}|01:00:00|COMPLETED|1|4||cpu=4|n01|30:00.000|"
        "1048576K|cpu=00:30:00,mem=1048576K",
        f"101.0|101.0|||||{T1}|{T2}|01:00:00|COMPLETED|1|4||cpu=4|n01|01:30:00|3145728K|",
        # 8 CPUs on 2 nodes for 30 min, usage only on its steps; 1 GiB per CPU = 8 GiB in all,
        # of which its largest step used 2 GiB (not 2 of the 4 GiB a node had: 25%, not 50%)
        f"102|102|bob|acc2|batch|{T0}|{T1}|{T2}|00:30:00|COMPLETED|2|8|1Gc|"
        "cpu=8,node=2|n[02-03]|||",
        f"102.batch|102.batch|||||{T1}|{T2}|00:30:00|COMPLETED|1|4||cpu=4|n02|10:00.000|524288K|",
        f"102.0|102.0|||||{T1}|{T2}|00:30:00|COMPLETED|2|8||cpu=8|n[02-03]|01:50:00|2097152K|",
        # 2 CPUs and 2 GPUs for 30 min; CPU time only in TRESUsageInTot
        f"103|103|carol|acc1|gpu|{T0}|{T1}|{T2}|00:30:00|COMPLETED|1|2|4G|"
        "cpu=2,gres/gpu=2,mem=4G,node=1|n04|||",
        f"103.batch|103.batch|||||{T1}|{T2}|00:30:00|COMPLETED|1|2||cpu=2|n04||1048576K|"
        "cpu=00:45:00,energy=0,mem=1048576K",
        # still pending: not measured
        f"104|104|dave|acc2|batch|{T0}|Unknown|Unknown|00:00:00|PENDING|1|1|1G||||00:00:00||",
        # 1 CPU for 2 h, 2.5 h of CPU (hyperthreads): above 100%, no memory figure
        f"105|105|alice|acc1|batch|{T0}|{T1}|{T2}|02:00:00|FAILED|1|1|2G|cpu=1|n05|02:30:00||",
    ]
)


@pytest.fixture(scope="module")
def hand():
    jobs = parse_sacct_text(HAND).jobs
    return analyze(jobs.lazy(), datetime(2024, 1, 1), datetime(2024, 1, 2), compare=False)


def test_hand_made_jobs(hand):
    s = hand.efficiency
    assert s.measured_jobs == 4 and s.memory_jobs == 3
    # allocated 4 + 4 + 1 + 2 = 11 core-h, used 2 + 2 + 0.75 + 2.5 = 7.25
    assert s.allocated_core_hours == 11.0 and s.used_core_hours == 7.25
    assert s.cpu_efficiency_pct == round(100 * 7.25 / 11, 1)
    assert s.wasted_core_hours == 4.25  # 2 + 2 + 0.25 + 0 (no negative waste)
    assert s.median_cpu_efficiency_pct == 62.5  # of 50, 50, 75, 125
    assert s.median_memory_efficiency_pct == 25.0  # of 37.5 (3/8), 25 (2/8), 25 (1/4)
    by_user = {r["user"]: r for r in hand.tables["efficiency_by_user"].to_dicts()}
    assert by_user["alice"]["wasted_core_hours"] == 2.0
    assert by_user["alice"]["cpu_eff_pct"] == round(100 * 4.5 / 6, 1)  # 2 + 2.5 used of 4 + 2
    assert by_user["carol"]["median_mem_eff_pct"] == 25.0
    assert hand.tables["efficiency_by_user"]["user"][0] in {"alice", "bob"}  # most waste first
    bins = dict(hand.tables["efficiency_histogram"].select("bin", "cpu_core_hours_pct").rows())
    assert bins["40-50%"] == round(100 * 8 / 11, 1) and bins[">100%"] == round(100 * 2 / 11, 1)
    gpu = hand.tables["gpu_by_account"].to_dicts()
    assert gpu == [{"account": "acc1", "gpu_jobs": 1, "gpu_hours": 1.0, "share_pct": 100.0}]


def test_efficiency_finding_and_insights_quote_the_tables(hand):
    insight = next(c for c in hand.charts if c.id == "chart-efficiency").insight
    assert "65.9% of the 11 allocated core-hours" in insight and "median job 62.5%" in insight
    wasted = next(c for c in hand.charts if c.id == "chart-wasted-core-hours").insight
    # alice and bob both left exactly 2 core-hours idle: a tie, not an alphabetical winner
    assert "alice and bob tied for the most core-hours idle: 2 each, over 3 jobs" in wasted
    assert "left the most" not in wasted and "94.1% of all 4.2 idle core-hours" in wasted  # 4/4.25
    assert wasted.startswith("Ranked by idle core-hours")  # the ranking defined where it is shown


OLD_LAYOUT = FIELD_NAMES[:26]
"""The product's headerless layout before the usage fields (TotalCPU, MaxRSS, TRESUsageInTot)."""
NEWER = ["total_cpu_s", "max_rss_bytes", "tres_usage_in_tot", "ntasks"]
GPU_USAGE = [
    "tres_usage_in_max",
    "gpu_util_tot_pct",
    "gpu_util_max_pct",
    "gpu_mem_tot_bytes",
    "gpu_mem_max_bytes",
]
"""Columns read from the GPU usage fields (TRESUsageInMax/Ave, AdminComment), newer still."""


def test_older_exports_and_caches_without_usage_fields(tmp_path: Path):
    jobs = synthesize(200, seed=4)
    old_lines = render_sacct_lines(jobs).str.split("|").list.head(len(OLD_LAYOUT)).list.join("|")
    result = parse_sacct_text("\n".join(old_lines.to_list()))  # headerless, 26 fields a line
    assert result.malformed == 0 and result.jobs.height == 200
    assert result.jobs["total_cpu_s"].null_count() == 200
    assert result.jobs.drop(NEWER, GPU_USAGE).equals(jobs.drop(NEWER, GPU_USAGE))
    # a month file written before the usage columns existed, then a newer import beside it
    cache = SacctCache(tmp_path)
    month = tmp_path / "month=2024-01" / "jobs.parquet"
    month.parent.mkdir(parents=True)
    old = result.jobs.drop(*NEWER, "source").with_columns(pl.lit(0, pl.Int64).alias("total_cpu_s"))
    old.write_parquet(month)  # before the usage fields; TotalCPU whole seconds (Int64) then
    assert cache.scan().collect()["max_rss_bytes"].null_count() == 200
    assert cache.scan().collect()["total_cpu_s"].dtype == pl.Float64
    newer = synthesize(10, seed=5, first_job_id=5_000_000)
    cache.write(newer)
    merged = cache.scan().collect()
    assert merged.schema == pl.Schema(schema()) and merged.height == 210
    assert merged["total_cpu_s"].is_not_null().sum() == 210
    analysis = analyze(cache.scan(), compare=False)
    assert (
        analysis.efficiency.measured_jobs
        == newer.filter(
            pl.col("end").is_not_null() & (pl.col("elapsed_s") > 0) & (pl.col("state") != "RUNNING")
        ).height
    )


# --- the independent reading -------------------------------------------------------------
UNITS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
ACTIVE = {"PENDING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED"}


def seconds(text: str) -> int | None:
    if not text:
        return None
    days = 0
    if "-" in text:
        d, text = text.split("-")
        days = int(d)
    parts = [float(p) for p in text.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0.0)
    return days * 86400 + int(parts[0] * 3600 + parts[1] * 60 + int(parts[2]))


def size(text: str, nnodes: int, ncpus: int) -> float | None:
    if not text:
        return None
    scale = {"n": nnodes, "c": ncpus}.get(text[-1], 1)
    text = text.rstrip("nc")
    if text[-1] in UNITS:
        return float(text[:-1]) * UNITS[text[-1]] * scale
    return float(text) * 2**20 * scale


def independent(path: Path, start: datetime, end: datetime) -> dict[str, object]:
    lines = path.read_text().splitlines()
    rows = [dict(zip(FIELD_NAMES, line.split("|"), strict=True)) for line in lines if line]
    steps: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        if "." in r["JobID"]:
            steps[r["JobID"].split(".")[0]].append(r)
    jobs = []
    for r in rows:
        if "." in r["JobID"] or r["State"] in ACTIVE or r["End"] in ("Unknown", ""):
            continue
        if not start <= datetime.fromisoformat(r["Submit"]) < end:
            continue
        elapsed, ncpus, nnodes = seconds(r["Elapsed"]), int(r["NCPUS"]), int(r["NNodes"])
        if not elapsed or not ncpus:
            continue
        used = seconds(r["TotalCPU"])
        if used is None:
            step_cpu = [seconds(s["TotalCPU"]) for s in steps[r["JobID"]]]
            used = sum(c for c in step_cpu if c is not None) if any(step_cpu) else None
        rss = [size(x["MaxRSS"], 1, 1) for x in [r, *steps[r["JobID"]]]]
        peak = max((v for v in rss if v is not None), default=None)
        request = size(r["ReqMem"], nnodes, ncpus)
        tres = dict(kv.split("=") for kv in r["AllocTRES"].split(",") if "=" in kv)
        jobs.append(
            dict(
                user=r["User"],
                account=r["Account"],
                alloc=elapsed * ncpus,
                used=used,
                mem=peak / (request / nnodes) if peak is not None and request else None,
                gpu_h=elapsed * int(tres.get("gres/gpu", 0)) / 3600,
            )
        )
    measured = [j for j in jobs if j["used"] is not None]
    wasted: dict[str, float] = defaultdict(float)
    for j in measured:
        wasted[j["user"]] += max(j["alloc"] - j["used"], 0) / 3600
    cpu_bins = defaultdict(float)
    for j in measured:
        cpu_bins[min(max(math.ceil(10 * j["used"] / j["alloc"]), 1), 11) - 1] += j["alloc"]
    gpu: dict[str, float] = defaultdict(float)
    for j in jobs:
        gpu[j["account"]] += j["gpu_h"]
    return dict(
        measured=len(measured),
        cpu_pct=100 * sum(j["used"] for j in measured) / sum(j["alloc"] for j in measured),
        median_mem=100 * float(np.median([j["mem"] for j in measured if j["mem"] is not None])),
        wasted=dict(wasted),
        cpu_bins={BIN_LABELS[i]: 100 * v / sum(cpu_bins.values()) for i, v in cpu_bins.items()},
        gpu={k: v for k, v in gpu.items() if v > 0},
    )


@pytest.mark.parametrize("with_steps", [True, False])
def test_synthetic_report_numbers_match_an_independent_reading(tmp_path: Path, with_steps):
    text = tmp_path / "export.txt"
    write_sacct_file(synthesize(3000, seed=11, days=10, with_steps=with_steps), text)
    cache = SacctCache(tmp_path / "cache")
    ingest_file(cache, text)
    a = analyze(cache.scan(), compare=False)
    want = independent(text, a.period.start, a.period.end)
    s = a.efficiency
    assert s.measured_jobs == want["measured"] > 2000
    assert s.cpu_efficiency_pct == pytest.approx(want["cpu_pct"], abs=0.051)
    assert s.median_memory_efficiency_pct == pytest.approx(want["median_mem"], abs=0.051)
    got = dict(a.tables["efficiency_by_user"].select("user", "wasted_core_hours").rows())
    assert got.keys() == want["wasted"].keys()
    for user, hours in want["wasted"].items():
        assert got[user] == pytest.approx(hours, abs=0.051), user
    bins = dict(a.tables["efficiency_histogram"].select("bin", "cpu_core_hours_pct").rows())
    for label in BIN_LABELS:
        assert bins[label] == pytest.approx(want["cpu_bins"].get(label, 0.0), abs=0.051), label
    gpu = dict(a.tables["gpu_by_account"].select("account", "gpu_hours").rows())
    assert gpu.keys() == want["gpu"].keys()
    for account, hours in want["gpu"].items():
        assert gpu[account] == pytest.approx(hours, abs=0.051)
