"""GPU use: the Slurm version rule of gres/gpuutil, TRES units, "not recorded", advice, the
synthetic GPU jobs, and the report's GPU section (docs/analytics.md "GPU usage")."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.support import no_settings_file
from wass_chat.analytics.analysis import analyze
from wass_chat.analytics.efficiency_questions import job_facts, period_facts
from wass_chat.analytics.gpu_usage import (
    NOT_RECORDED,
    RULES,
    gpu_memory_bytes,
    gpu_table,
    job_gpu_figures,
    parse_version,
    per_gpu_utilisation,
)
from wass_chat.analytics.job_efficiency import describe_job, jobs_efficiency
from wass_chat.report.gpu_views import gpu_headline
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.parse import parse_sacct_file, parse_sacct_text
from wass_chat.sacct.render import write_sacct_file
from wass_chat.sacct.synth import synthesize

HEADER = "JobID|State|Elapsed|NCPUS|NTasks|AllocTRES|TRESUsageInTot|TRESUsageInMax|Start|End"


def export(*rows: str) -> pl.DataFrame:
    result = parse_sacct_text("\n".join([HEADER, *rows]))
    assert result.malformed == 0 and result.bad_values == {}
    return result.jobs


def gpu_job(tot: str, tasks: int = 1, gpus: int = 4, kind: str = "a100") -> list[str]:
    """A job that held ``gpus`` GPUs and one step whose tasks report ``tot`` (TRES text)."""
    alloc = f"cpu=8,gres/gpu:{kind}={gpus},gres/gpu={gpus},mem=64G,node=1"
    times = "2024-05-01T10:00:00|2024-05-01T12:00:00"
    return [
        f"1|COMPLETED|02:00:00|8||{alloc}|||{times}",
        f"1.0|COMPLETED|02:00:00|8|{tasks}|{alloc}|cpu=01:00:00,{tot}|cpu=01:00:00,{tot}|{times}",
        f"1.extern|COMPLETED|02:00:00|8|1|{alloc}|gres/gpumem=0,gres/gpuutil=0|"
        f"gres/gpumem=0,gres/gpuutil=0|{times}",
    ]


def figures(jobs: pl.DataFrame, version: str | None = None):
    jobs = jobs.with_columns(pl.lit(version, pl.String).alias("slurm_version"))
    allocations = jobs.filter(~pl.col("is_step"))
    (row,) = gpu_table(allocations, jobs.filter(pl.col("is_step"))).iter_rows(named=True)
    return job_gpu_figures(row)


# --- the version rule --------------------------------------------------------------------------
def test_before_24_05_1_a_task_reports_its_last_gpu_from_it_the_sum():
    """One task on 4 GPUs: Slurm 24.05.1+ prints the sum (200 = 4 x 50%); older ones the last
    GPU (50), which is all they say about the other three."""
    new = per_gpu_utilisation(200, ntasks=1, gpus=4, version=(24, 5, 1))
    assert new.mean_pct == 50 and new.gpus_seen == 4 and "24.05.1 or newer" in new.rule
    old = per_gpu_utilisation(50, ntasks=1, gpus=4, version=(24, 5, 0))
    assert old.mean_pct == 50 and old.gpus_seen == 1 and "before 24.05.1" in old.rule
    assert per_gpu_utilisation(50, 1, 4, (23, 11, 10)).gpus_seen == 1
    # one GPU per task: both rules read the same
    for version in ((23, 2, 0), (24, 11, 5), None):
        same = per_gpu_utilisation(200, ntasks=4, gpus=4, version=version)
        assert same.mean_pct == 50 and same.gpus_seen == 4
    # version unknown: above 100% per task can only be a sum; else assumed, the other kept
    assert per_gpu_utilisation(250, 1, 4, None).mean_pct == 62.5
    unsure = per_gpu_utilisation(80, 1, 4, None)
    assert unsure.mean_pct == 20 and unsure.other_reading_pct == 80 and "unknown" in unsure.rule


def test_the_table_reads_the_rule_as_the_function_does():
    """gpu_table (vectorised, for a year of jobs) against per_gpu_utilisation on a grid."""
    versions = {"24.05.1": (24, 5, 1), "23.11.4": (23, 11, 4), None: None}
    for (tot, tasks, gpus), (text, version) in itertools.product(
        [(90, 1, 1), (200, 1, 4), (50, 1, 4), (300, 2, 4), (160, 8, 2), (0, 1, 2)],
        versions.items(),
    ):
        got = figures(export(*gpu_job(f"gres/gpuutil={tot}", tasks, gpus)), text)
        want = per_gpu_utilisation(tot, tasks, gpus, version)
        assert got.utilisation_pct == pytest.approx(want.mean_pct), (tot, tasks, gpus, text)
        assert got.rule == want.rule, (tot, tasks, gpus, text)
        assert got.other_reading_pct == want.other_reading_pct
        assert got.rule in RULES


def test_versions_as_sacct_prints_them():
    assert parse_version("slurm 24.11.5") == (24, 11, 5)
    assert parse_version("22.05") == (22, 5, 0) and parse_version("") is None


# --- units and steps ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("printed", "expected"),
    [("37956M", 37956 * 2**20), ("20500736K", 20500736 * 2**10), ("21474836480", 21474836480)],
)
def test_gpumem_with_a_suffix_only_when_exact_and_raw_bytes_with_noconvert(printed, expected):
    g = figures(export(*gpu_job(f"gres/gpumem={printed},gres/gpuutil=80", gpus=1)), "24.11.5")
    assert g.memory_peak_bytes == expected
    assert g.utilisation_pct == 80 and "step 1.0" in g.source  # not .extern's 0


def test_the_job_row_carries_none_the_busiest_step_counts():
    """A batch script that only launches srun: .batch at 0, step .0 busy, .extern 0."""
    alloc = "cpu=4,gres/gpu:h100=1,gres/gpu=1,node=1"
    times = "2024-05-01T10:00:00|2024-05-01T11:00:00"
    jobs = export(
        f"7|COMPLETED|01:00:00|4||{alloc}|||{times}",
        f"7.batch|COMPLETED|01:00:00|4|1|{alloc}|gres/gpumem=0,gres/gpuutil=0||{times}",
        f"7.0|COMPLETED|00:50:00|4|1|{alloc}|gres/gpumem=4G,gres/gpuutil=70||{times}",
        f"7.extern|COMPLETED|01:00:00|4|1|{alloc}|gres/gpumem=0,gres/gpuutil=0||{times}",
    )
    g = figures(jobs, "24.11.5")
    assert g.utilisation_pct == 70 and "7.0" in g.source and g.gpu_type == "h100"
    assert g.memory_per_gpu_bytes == 80 * 2**30  # the smallest H100 holds 4 GiB
    assert g.memory_share_pct == pytest.approx(5.0)
    assert g.gpu_hours_held == 1 and g.gpu_hours_used == pytest.approx(0.7)
    assert gpu_memory_bytes("v100", 20 * 2**30) == 32 * 2**30
    assert gpu_memory_bytes("mystery", 1) is None


def test_gpus_held_without_any_usage_field_are_not_recorded_never_zero():
    alloc = "cpu=2,gres/gpu=2,node=1"
    jobs = export(
        f"9|COMPLETED|01:00:00|2||{alloc}|||2024-05-01T10:00:00|2024-05-01T11:00:00",
        f"9.batch|COMPLETED|01:00:00|2|1|{alloc}|cpu=00:10:00,mem=100M|||",
    )
    (job,) = jobs_efficiency(jobs.lazy())
    assert job.gpu is not None and not job.gpu["recorded"]
    assert job.gpu["utilisation_pct"] is None and job.gpu["gpu_hours_idle"] is None
    text = describe_job(job.to_dict())
    assert f"GPU use: {NOT_RECORDED}" in text and "gres/gpuutil" in text
    assert "GPUs held: 2 (AllocTRES gres/gpu); 2.00 GPU-hours" in text


def test_advice_names_fewer_gpus_a_smaller_type_and_a_cpu_partition():
    idle = jobs_efficiency(export(*gpu_job("gres/gpumem=0,gres/gpuutil=0")).lazy())[0]
    assert any("CPU-only partition" in t for t in idle.suggestions)
    spread = export(*gpu_job("gres/gpumem=2G,gres/gpuutil=40", tasks=1, gpus=4))
    spread = spread.with_columns(pl.lit("24.11.5").alias("slurm_version"))
    (job,) = jobs_efficiency(spread.lazy())
    tips = " ".join(job.suggestions)
    assert "1 GPU would do (--gpus=1)" in tips  # 10% per GPU over 4
    assert "smaller GPU type" in tips and "40 GiB per GPU" in tips


# --- synthetic GPU jobs, the cache, the report ---------------------------------------------
def test_synthetic_gpu_jobs_record_use_on_their_batch_step_and_survive_a_round_trip(
    tmp_path: Path,
):
    table = synthesize(3000, seed=3, with_steps=True)
    batch = table.filter(pl.col("job_id").str.ends_with(".batch") & (pl.col("gpus") > 0))
    assert batch.height > 100 and batch["gpu_util_tot_pct"].null_count() == 0
    assert (
        table.filter(~pl.col("is_step"))["gpu_util_tot_pct"].null_count()
        == table.filter(~pl.col("is_step")).height
    )  # the job row carries none
    path = tmp_path / "sacct.txt"
    write_sacct_file(table, path)
    parsed = parse_sacct_file(path)
    assert parsed.malformed == 0 and parsed.bad_values == {}
    columns = ["job_id", "gpus", "gpu_type", "gpu_util_tot_pct", "gpu_mem_tot_bytes"]
    assert parsed.jobs.select(columns).equals(table.select(columns))


def _cache_with(tmp_path: Path, table: pl.DataFrame) -> Path:
    root = tmp_path / "sacct"
    SacctCache(root).write(table.with_columns(pl.lit("synthetic").alias("source")))
    return root


def test_the_period_gpu_section_and_its_absence(tmp_path: Path):
    table = synthesize(4000, seed=5, with_steps=True)
    a = analyze(SacctCache(_cache_with(tmp_path / "a", table)).scan(), compare=False)
    g = a.gpu_use
    assert g is not None and g.recorded_jobs == g.gpu_jobs > 50
    assert 0 < g.used_gpu_hours < g.recorded_gpu_hours
    by_user = a.tables["gpu_waste_by_user"]
    assert by_user["wasted_gpu_hours"].sum() == pytest.approx(g.wasted_gpu_hours)
    assert a.tables["gpu_idle_jobs"].height == g.idle_jobs > 0
    assert set(a.tables["gpu_waste_by_gpu_type"]["gpu_type"]) == {"a100"}
    assert "wasted" in gpu_headline(a)
    cpu_only = table.filter(pl.col("partition") != "gpu")
    b = analyze(SacctCache(_cache_with(tmp_path / "b", cpu_only)).scan(), compare=False)
    assert b.gpu_use is None and not any(n.startswith("gpu_waste") for n in b.tables)


def test_sacct_efficiency_json_gives_each_gpu_figure_with_its_source(tmp_path: Path):
    path = tmp_path / "export.txt"
    path.write_text("\n".join([HEADER, *gpu_job("gres/gpumem=30G,gres/gpuutil=240")]) + "\n")
    env = {
        **os.environ,
        "WASS_HOME": str(tmp_path / "home"),
        "WASS_CONFIG": no_settings_file(tmp_path),
    }
    base = [sys.executable, "-m", "wass_chat.cli"]
    subprocess.run(
        [*base, "sacct", "import", "--from-file", str(path)],
        env=env,
        check=True,
        capture_output=True,
    )
    done = subprocess.run(
        [*base, "sacct", "efficiency", "1", "--json", "--no-live"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    g = row["gpu"]
    assert g["gpus"] == 4 and g["gpu_type"] == "a100" and g["held_source"] == "AllocTRES gres/gpu"
    assert g["utilisation_pct"] == 60 and g["source"].startswith("sacct TRESUsageInTot")
    assert g["memory_peak_bytes"] == 30 * 2**30 and g["gpu_hours_held"] == 8


def test_the_assistant_answers_gpu_questions_from_the_same_figures(tmp_path: Path):
    """ "How well did job 1 use its GPUs?" and "who wasted the most GPU hours?" (the efficiency
    facts the chat and `ask` answer from) quote sacct efficiency's and the report's numbers."""
    jobs = export(*gpu_job("gres/gpumem=30G,gres/gpuutil=240"))
    facts = job_facts(jobs.lazy(), ["1"])
    assert (
        "Its 4 a100 GPUs ran at 60.0% on average (4.80 of 8.00 GPU-hours used)." in facts["verdict"]
    )
    assert facts["jobs"][0]["gpu"]["utilisation_pct"] == 60
    table = synthesize(4000, seed=5, with_steps=True)
    cache = SacctCache(_cache_with(tmp_path, table)).scan()
    period = period_facts(cache, None, None, "the period")
    a = analyze(cache, compare=False)
    top = a.tables["gpu_waste_by_user"].row(0, named=True)
    assert period["gpu_wasters"][0]["user"] == top["user"]
    assert period["gpu_wasters"][0]["wasted_gpu_hours"] == pytest.approx(top["wasted_gpu_hours"])
    assert any(
        line.startswith("1. " + top["user"]) and "wasted GPU-hours" in line
        for line in period["lines"]
    )
