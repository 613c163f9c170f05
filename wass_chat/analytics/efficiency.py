"""CPU, memory and time efficiency per job, as seff and reportseff compute them; who wastes most.

A job's usage is spread over sacct rows: the allocation row carries TotalCPU (the sum over its
steps), its steps (``123.batch``, ``123.0``) carry MaxRSS, NTasks and TRESUsageInTot. Per job:

* CPU time used = the allocation row's TotalCPU with its fractions of a second, else the sum over
  its steps of TotalCPU (else of the ``cpu=`` part of TRESUsageInTot);
* CPU efficiency = CPU time used / (Elapsed x NCPUS); wasted core-hours = (Elapsed x NCPUS -
  CPU time used) / 3600, at least 0;
* memory used = the largest step's memory summed over its tasks: TRESUsageInTot's ``mem=``
  (the sum of every task's peak, what seff reads), else MaxRSS x NTasks (reportseff's bound),
  else MaxRSS alone (one task's peak: a lower bound, flagged by ``memory_basis``). MaxRSS alone
  is never divided by a per-node request: for a 128-task MPI job it is 1/64 of the truth;
* memory efficiency = memory used / the job's whole memory: AllocTRES ``mem=`` (what Slurm
  reserved, seff's denominator), else ReqMem for the whole job (per node ``n`` or per CPU ``c``
  multiplied out for exports older than Slurm 21.08);
* time efficiency = Elapsed / Timelimit.

docs/analytics.md compares each figure with seff, reportseff and jobstats. Only finished jobs
that ran for more than 0 s on at least one CPU are measured, and only those whose usage was
recorded (older caches, imported before these fields, have none: the view then says so).
GPU-hours need only AllocTRES (:mod:`.resources`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from wass_chat.sacct.parse import cpu_seconds
from wass_chat.sacct.tres import tres_bytes

BIN_LABELS = (*(f"{lo}-{lo + 10}%" for lo in range(0, 100, 10)), ">100%")
"""Histogram bins of efficiency: ten of 10 points, then one above 100% (hyperthreads, bursts)."""
TOP_WASTERS = 15
"""Users drawn in the wasted core-hours chart and listed in the view (all of them in the CSV)."""
LOW_MEMORY_EFFICIENCY = 0.25
"""Jobs under this share of their memory request count as heavy memory over-askers."""
MEMORY_BASES = ("TRESUsageInTot", "MaxRSS x NTasks", "MaxRSS of one task")
"""Where a job's memory figure came from, best first; the last is a lower bound."""


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
    """Finished jobs with a memory figure and a memory request recorded."""
    median_memory_efficiency_pct: float | None
    low_memory_jobs_pct: float | None
    """Share of memory_jobs using less than LOW_MEMORY_EFFICIENCY of their request."""


def step_usage(jobs: pl.LazyFrame, since: datetime | None = None) -> pl.LazyFrame:
    """Per parent job id: summed step CPU seconds and the largest step's memory (all tasks).

    ``since`` prunes the scan: a step starts (its Submit is its start) after its job's
    submission, so the steps of jobs submitted from ``since`` on all have Submit >= ``since``.
    """
    steps = jobs.filter(pl.col("is_step"))
    if since is not None:
        steps = steps.filter(pl.col("submit").is_null() | (pl.col("submit") >= since))
    cpu = pl.coalesce("total_cpu_s", tres_cpu_seconds())
    total = tres_bytes("tres_usage_in_tot")
    by_tasks = pl.col("max_rss_bytes") * pl.col("ntasks")
    memory = pl.coalesce(total, by_tasks, pl.col("max_rss_bytes").cast(pl.Float64))
    basis = (
        pl.when(total.is_not_null())
        .then(pl.lit(0))
        .when(by_tasks.is_not_null())
        .then(pl.lit(1))
        .when(pl.col("max_rss_bytes").is_not_null())
        .then(pl.lit(2))
    )
    parent = pl.col("job_id").str.split(".").list.first().alias("job_id")
    return (
        steps.with_columns(memory.alias("__mem"), basis.alias("__basis"))
        .group_by(parent)
        .agg(
            pl.when(cpu.is_not_null().any()).then(cpu.sum()).alias("step_cpu_s"),
            pl.col("__mem").max().alias("step_mem_bytes"),
            pl.col("__basis")
            .sort_by("__mem", descending=True, nulls_last=True)
            .first()
            .alias("step_mem_basis"),
        )
    )


def tres_cpu_seconds() -> pl.Expr:
    """CPU seconds from TRESUsageInTot's ``cpu=[D-]HH:MM:SS`` part (null without it)."""
    text = pl.col("tres_usage_in_tot").str.extract(r"(?:^|,)cpu=([^,]+)", 1)
    return cpu_seconds(text)


def efficiency_table(allocations: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Every figure of every allocation in ``allocations`` (null where it cannot be measured).

    ``steps`` is :func:`step_usage` collected. Columns: the job's identity and size, CPU time
    used and allocated, memory used and requested with ``memory_basis``, the three efficiencies
    as shares, and wasted core-hours.
    """
    if steps.height:  # a cache without steps (the benchmark's) skips the join on 1.5 M ids
        table = allocations.join(steps, on="job_id", how="left")
    else:
        table = allocations.with_columns(
            pl.lit(None, pl.Float64).alias("step_cpu_s"),
            pl.lit(None, pl.Float64).alias("step_mem_bytes"),
            pl.lit(None, pl.Int32).alias("step_mem_basis"),
        )
    table = table.with_columns(pl.coalesce("total_cpu_s", "step_cpu_s").alias("cpu_used_s"))
    # TRESUsageInTot only where TotalCPU is missing: parsing it for every job costs seconds
    known = table.filter(pl.col("cpu_used_s").is_not_null())
    fallback = table.filter(pl.col("cpu_used_s").is_null())
    table = pl.concat([known, fallback.with_columns(tres_cpu_seconds().alias("cpu_used_s"))])
    allocated = (pl.col("elapsed_s") * pl.col("ncpus")).cast(pl.Float64)
    own_mem = tres_bytes("tres_usage_in_tot")
    used_mem = pl.max_horizontal(own_mem, pl.col("step_mem_bytes"))
    basis = (
        pl.when(own_mem >= pl.col("step_mem_bytes").fill_null(0))
        .then(0)
        .otherwise(pl.col("step_mem_basis"))
    )
    request = pl.coalesce(tres_bytes("alloc_tres", bare_unit="M"), pl.col("req_mem_bytes"))
    limit = pl.col("timelimit_s")
    # A job that ran with TotalCPU exactly 0, no step rows and no TRES usage was not measured
    # (accounting gathered nothing): its 0% is missing data, not an idle job.
    recorded = (
        (pl.col("cpu_used_s") > 0)
        | pl.col("step_cpu_s").is_not_null()
        | pl.col("step_mem_bytes").is_not_null()
        | pl.col("tres_usage_in_tot").is_not_null()
    )
    table = table.select(
        "job_id",
        "job_id_raw",
        "array_job_id",
        "user",
        "account",
        "partition",
        "state",
        "start",
        "end",
        "nnodes",
        "ncpus",
        "elapsed_s",
        "timelimit_s",
        "cpu_used_s",
        allocated.alias("allocated_core_s"),
        used_mem.alias("mem_used_bytes"),
        pl.when(used_mem.is_not_null())
        .then(basis)
        .replace_strict(dict(enumerate(MEMORY_BASES)), default=None, return_dtype=pl.String)
        .alias("memory_basis"),
        pl.when(request > 0).then(request).alias("mem_request_bytes"),
        recorded.alias("usage_recorded"),
    )
    return table.with_columns(
        pl.when(pl.col("allocated_core_s") > 0)
        .then(pl.col("cpu_used_s") / pl.col("allocated_core_s"))
        .alias("cpu_efficiency"),
        ((pl.col("allocated_core_s") - pl.col("cpu_used_s")).clip(lower_bound=0) / 3600).alias(
            "wasted_core_hours"
        ),
        (pl.col("mem_used_bytes") / pl.col("mem_request_bytes")).alias("memory_efficiency"),
        pl.when(limit > 0).then(pl.col("elapsed_s") / limit).alias("time_efficiency"),
    )


def job_efficiency(loaded: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """One row per measured job of a period (:func:`efficiency_table`'s columns).

    Measured: submitted in the period, finished, ran for more than 0 s on at least one CPU,
    with its usage recorded (:func:`efficiency_table`'s ``usage_recorded``).
    """
    measured = loaded.filter(
        pl.col("in_period")
        & pl.col("finished")
        & pl.col("start").is_not_null()
        & (pl.col("elapsed_s") > 0)
        & (pl.col("ncpus") > 0)
    )
    table = efficiency_table(measured, steps)
    return table.filter(pl.col("cpu_used_s").is_not_null() & pl.col("usage_recorded"))


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
    percent) and median memory efficiency (percent); most wasted core-hours first.

    Values stay exact (views format them): ranked on rounded values, 0.04 and 0.03 idle
    core-hours both read 0.0 and the alphabetically first user "led"; ties on the exact value
    are found by :func:`~wass_chat.analytics.insights.leaders`."""
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
