"""CPU and memory efficiency per job, as jobstats and reportseff compute them, and who wastes most.

A job's usage is spread over sacct rows: the allocation row carries TotalCPU (the sum over its
steps), its steps (``123.batch``, ``123.0``) carry MaxRSS and TRESUsageInTot. Per job:

* CPU time used = the allocation row's TotalCPU, else the sum over its steps of TotalCPU (else
  of the ``cpu=`` part of TRESUsageInTot);
* CPU efficiency = CPU time used / (Elapsed x NCPUS); wasted core-hours = (Elapsed x NCPUS -
  CPU time used) / 3600, at least 0;
* peak memory = the largest MaxRSS among the job's rows (the max across its steps);
* memory efficiency = peak memory / the request per node (ReqMem for the whole job, as the
  parser stores it after multiplying out a per-node ``n`` or per-CPU ``c`` suffix, divided by
  NNodes). MaxRSS is one task's peak on one node, so this is a per-node figure, as jobstats gives.

Only finished jobs submitted in the period that ran for more than 0 s on at least one CPU are
measured, and only those whose usage was recorded (older caches, imported before these fields,
have none: the view then says so). GPU-hours need only AllocTRES (:mod:`.resources`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from wass_chat.sacct.parse import duration_seconds

BIN_LABELS = (*(f"{lo}-{lo + 10}%" for lo in range(0, 100, 10)), ">100%")
"""Histogram bins of efficiency: ten of 10 points, then one above 100% (hyperthreads, bursts)."""
TOP_WASTERS = 15
"""Users drawn in the wasted core-hours chart and listed in the view (all of them in the CSV)."""
LOW_MEMORY_EFFICIENCY = 0.25
"""Jobs under this share of their per-node memory request count as heavy memory over-askers."""


@dataclass(frozen=True)
class EfficiencySummary:
    """The period's efficiency headline (None where no job was measured)."""

    measured_jobs: int
    """Finished jobs with CPU usage recorded."""
    allocated_core_hours: float
    used_core_hours: float
    wasted_core_hours: float
    cpu_efficiency_pct: float | None
    """Used over allocated core-hours, all measured jobs together."""
    median_cpu_efficiency_pct: float | None
    memory_jobs: int
    """Finished jobs with a peak memory and a memory request recorded."""
    median_memory_efficiency_pct: float | None
    low_memory_jobs_pct: float | None
    """Share of memory_jobs using less than LOW_MEMORY_EFFICIENCY of their request."""


def step_usage(jobs: pl.LazyFrame, since: datetime) -> pl.LazyFrame:
    """Per parent job id: summed step CPU seconds and the largest step MaxRSS.

    ``since`` prunes the scan: a step starts (its Submit is its start) after its job's
    submission, so the steps of jobs submitted from ``since`` on all have Submit >= ``since``.
    """
    recent = pl.col("submit").is_null() | (pl.col("submit") >= since)
    steps = jobs.filter(pl.col("is_step") & recent)
    cpu = pl.coalesce("total_cpu_s", tres_cpu_seconds())
    parent = pl.col("job_id").str.split(".").list.first().alias("job_id")
    return steps.group_by(parent).agg(
        pl.when(cpu.is_not_null().any()).then(cpu.sum()).alias("step_cpu_s"),
        pl.col("max_rss_bytes").max().alias("step_rss_bytes"),
    )


def tres_cpu_seconds() -> pl.Expr:
    """CPU seconds from TRESUsageInTot's ``cpu=[D-]HH:MM:SS`` part (null without it)."""
    text = pl.col("tres_usage_in_tot").str.extract(r"(?:^|,)cpu=([^,]+)", 1)
    return duration_seconds(text)


def job_efficiency(loaded: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """One row per measured job: usage, CPU and memory efficiency (shares), wasted core-hours."""
    measured = loaded.filter(
        pl.col("in_period")
        & pl.col("finished")
        & pl.col("start").is_not_null()
        & (pl.col("elapsed_s") > 0)
        & (pl.col("ncpus") > 0)
    )
    if steps.height:  # a cache without steps (the benchmark's) skips the join on 1.5 M ids
        measured = measured.join(steps, on="job_id", how="left")
    else:
        measured = measured.with_columns(
            pl.lit(None, pl.Int64).alias("step_cpu_s"),
            pl.lit(None, pl.Int64).alias("step_rss_bytes"),
        )
    measured = measured.with_columns(pl.coalesce("total_cpu_s", "step_cpu_s").alias("cpu_used_s"))
    # TRESUsageInTot only where TotalCPU is missing: parsing it for every job costs seconds
    known = measured.filter(pl.col("cpu_used_s").is_not_null())
    fallback = measured.filter(pl.col("cpu_used_s").is_null())
    measured = pl.concat([known, fallback.with_columns(tres_cpu_seconds().alias("cpu_used_s"))])
    allocated = pl.col("elapsed_s") * pl.col("ncpus")
    peak = pl.max_horizontal("max_rss_bytes", "step_rss_bytes")
    per_node = pl.col("req_mem_bytes") / pl.col("nnodes").clip(lower_bound=1)
    table = measured.select(
        "job_id",
        "user",
        "account",
        "partition",
        "state",
        "ncpus",
        "elapsed_s",
        "cpu_used_s",
        allocated.alias("allocated_core_s"),
        peak.alias("peak_rss_bytes"),
        pl.when(pl.col("req_mem_bytes") > 0).then(per_node).alias("req_mem_per_node_bytes"),
    ).filter(pl.col("cpu_used_s").is_not_null())
    return table.with_columns(
        (pl.col("cpu_used_s") / pl.col("allocated_core_s")).alias("cpu_efficiency"),
        ((pl.col("allocated_core_s") - pl.col("cpu_used_s")).clip(lower_bound=0) / 3600).alias(
            "wasted_core_hours"
        ),
        (pl.col("peak_rss_bytes") / pl.col("req_mem_per_node_bytes")).alias("memory_efficiency"),
    )


def summarize_efficiency(per_job: pl.DataFrame) -> EfficiencySummary:
    """The headline numbers of :class:`EfficiencySummary` from :func:`job_efficiency`'s table."""
    if per_job.is_empty():
        return EfficiencySummary(0, 0.0, 0.0, 0.0, None, None, 0, None, None)
    allocated = float(per_job["allocated_core_s"].sum()) / 3600
    used = float(per_job["cpu_used_s"].sum()) / 3600
    memory = per_job["memory_efficiency"].drop_nulls()
    return EfficiencySummary(
        measured_jobs=per_job.height,
        allocated_core_hours=allocated,
        used_core_hours=used,
        wasted_core_hours=float(per_job["wasted_core_hours"].sum()),
        cpu_efficiency_pct=round(100 * used / allocated, 1) if allocated else None,
        median_cpu_efficiency_pct=round(100 * float(per_job["cpu_efficiency"].median()), 1),  # type: ignore[arg-type]
        memory_jobs=memory.len(),
        median_memory_efficiency_pct=(
            round(100 * float(memory.median()), 1) if memory.len() else None  # type: ignore[arg-type]
        ),
        low_memory_jobs_pct=(
            round(100 * float((memory < LOW_MEMORY_EFFICIENCY).mean()), 1)  # type: ignore[arg-type]
            if memory.len()
            else None
        ),
    )


def efficiency_by(per_job: pl.DataFrame, column: str, top: int | None = None) -> pl.DataFrame:
    """Per ``column`` value: jobs, allocated/used/wasted core-hours, CPU efficiency (weighted,
    percent) and median memory efficiency (percent); most wasted core-hours first."""
    table = (
        per_job.group_by(column)
        .agg(
            pl.len().alias("jobs"),
            (pl.col("allocated_core_s").sum() / 3600).alias("core_hours"),
            (pl.col("cpu_used_s").sum() / 3600).alias("used_core_hours"),
            pl.col("wasted_core_hours").sum(),
            (100 * pl.col("memory_efficiency").median()).alias("median_mem_eff_pct"),
        )
        .with_columns(
            (100 * pl.col("used_core_hours") / pl.col("core_hours")).alias("cpu_eff_pct"),
        )
        .select(
            column,
            "jobs",
            "core_hours",
            "used_core_hours",
            "wasted_core_hours",
            "cpu_eff_pct",
            "median_mem_eff_pct",
        )
        .with_columns(pl.col(pl.Float64).round(1))
        .sort(["wasted_core_hours", column], descending=[True, False])
    )
    return table.head(top) if top else table


def efficiency_histogram(per_job: pl.DataFrame) -> pl.DataFrame:
    """Per efficiency bin: the share of core-hours by CPU efficiency and of jobs by memory
    efficiency (percent of the measured core-hours / memory-measured jobs)."""

    def binned(column: str) -> pl.Expr:
        """Bin i holds (10i%, 10(i+1)%]; 0 goes to the first, anything above 100% to the last."""
        return (pl.col(column) * 10).ceil().clip(1, len(BIN_LABELS)).cast(pl.Int64) - 1

    cpu = per_job.group_by(binned("cpu_efficiency").alias("index")).agg(
        pl.col("allocated_core_s").sum().alias("core_s")
    )
    memory = (
        per_job.filter(pl.col("memory_efficiency").is_not_null())
        .group_by(binned("memory_efficiency").alias("index"))
        .agg(pl.len().alias("mem_jobs"))
    )
    bins = pl.DataFrame({"index": range(len(BIN_LABELS)), "bin": list(BIN_LABELS)})
    table = bins.join(cpu, on="index", how="left").join(memory, on="index", how="left").fill_null(0)
    core_total = float(table["core_s"].sum()) or 1.0
    job_total = float(table["mem_jobs"].sum()) or 1.0
    return table.select(
        "bin",
        (100 * pl.col("core_s") / core_total).round(1).alias("cpu_core_hours_pct"),
        (100 * pl.col("mem_jobs") / job_total).round(1).alias("memory_jobs_pct"),
    )
