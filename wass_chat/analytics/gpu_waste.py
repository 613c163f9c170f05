"""The period's GPU use and waste: GPU-hours held, used and at 0%, by user, account, partition
and GPU type; jobs at 0%; jobs that used little of a large GPU's memory; the trend.

Per job the figures are :func:`~wass_chat.analytics.gpu_usage.gpu_table`'s, the ones
``wass-chat sacct efficiency JOB`` shows. Wasted GPU-hours = held - used, counted only over jobs
whose use was recorded; GPU-hours of jobs without a record are listed apart, never as waste.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from wass_chat.analytics.gpu_usage import (
    HOW_TO_RECORD,
    IDLE_UTILISATION_PCT,
    LARGE_GPU_BYTES,
    NOT_RECORDED,
    SMALL_MEMORY_SHARE,
    gpu_table,
)
from wass_chat.analytics.period import Period

TOP_GPU_JOBS = 25
"""Jobs listed in the 0% and small-memory views (all of them in their CSVs)."""


@dataclass(frozen=True)
class GpuUseSummary:
    """The period's GPU headline."""

    gpu_jobs: int
    """Finished jobs submitted in the period that held GPUs."""
    recorded_jobs: int
    """Of those, jobs whose GPU use a source measured."""
    gpu_hours_held: float
    recorded_gpu_hours: float
    used_gpu_hours: float
    idle_gpu_hours: float
    idle_jobs: int
    small_memory_jobs: int
    sources: dict[str, int]
    """Jobs by where their use was read (jobstats, sacct)."""

    @property
    def wasted_gpu_hours(self) -> float:
        return self.recorded_gpu_hours - self.used_gpu_hours

    @property
    def utilisation_pct(self) -> float | None:
        if not self.recorded_gpu_hours:
            return None
        return 100 * self.used_gpu_hours / self.recorded_gpu_hours

    def not_recorded_note(self) -> str | None:
        """Why some (or all) GPU jobs have no use figure, and what would record it."""
        missing = self.gpu_jobs - self.recorded_jobs
        if not missing:
            return None
        if missing == self.gpu_jobs:
            return (
                f"{NOT_RECORDED}: none of the {self.gpu_jobs:,} GPU jobs has a GPU use figure "
                f"({HOW_TO_RECORD})."
            )
        return (
            f"{NOT_RECORDED} for {missing:,} of {self.gpu_jobs:,} GPU jobs: their GPU-hours are "
            f"left out of the waste figures ({HOW_TO_RECORD})."
        )


def period_gpu_table(loaded: pl.DataFrame, jobs: pl.LazyFrame, period: Period) -> pl.DataFrame:
    """:func:`gpu_table` of the finished jobs submitted in the period that held GPUs."""
    held = loaded.filter(
        pl.col("in_period")
        & pl.col("finished")
        & ((pl.col("gpus") > 0) | (pl.col("js_gpus").fill_null(0) > 0))
    )
    if held.is_empty():
        return gpu_table(held, jobs.head(0).collect())
    steps = jobs.filter(
        pl.col("is_step")
        & (pl.col("submit").is_null() | (pl.col("submit") >= period.start))
        & pl.col("gpu_util_tot_pct").is_not_null()
    ).collect()
    return gpu_table(held, steps)


def summarize_gpu_use(per_job: pl.DataFrame) -> GpuUseSummary | None:
    """The headline of :func:`period_gpu_table`'s rows; None when no job held a GPU."""
    if per_job.is_empty():
        return None
    recorded = per_job.filter(pl.col("source").is_not_null())
    sources = dict(recorded.group_by("source").len().sort("source").iter_rows())
    return GpuUseSummary(
        gpu_jobs=per_job.height,
        recorded_jobs=recorded.height,
        gpu_hours_held=float(per_job["gpu_hours_held"].sum()),
        recorded_gpu_hours=float(recorded["gpu_hours_held"].sum()),
        used_gpu_hours=float(recorded["gpu_hours_used"].sum()),
        idle_gpu_hours=float(recorded["gpu_hours_idle"].sum()),
        idle_jobs=idle_jobs(per_job).height,
        small_memory_jobs=small_memory_jobs(per_job).height,
        sources=sources,
    )


def gpu_waste_by(per_job: pl.DataFrame, column: str) -> pl.DataFrame:
    """Per ``column`` value: GPU jobs, GPU-hours held, recorded, used, wasted and at 0%, and the
    utilisation of the recorded GPU-hours (percent); most wasted first."""
    recorded = pl.col("source").is_not_null()
    key = pl.col(column).fill_null(UNTYPED) if column == "gpu_type" else pl.col(column)
    return (
        per_job.group_by(key.alias(column))
        .agg(
            pl.len().alias("gpu_jobs"),
            pl.col("gpu_hours_held").sum().alias("gpu_hours"),
            pl.col("gpu_hours_held").filter(recorded).sum().alias("recorded_gpu_hours"),
            pl.col("gpu_hours_used").filter(recorded).sum().alias("used_gpu_hours"),
            pl.col("gpu_hours_idle").filter(recorded).sum().alias("idle_gpu_hours"),
        )
        .with_columns(
            (pl.col("recorded_gpu_hours") - pl.col("used_gpu_hours")).alias("wasted_gpu_hours"),
            pl.when(pl.col("recorded_gpu_hours") > 0)
            .then(100 * pl.col("used_gpu_hours") / pl.col("recorded_gpu_hours"))
            .alias("gpu_util_pct"),
        )
        .select(
            column,
            "gpu_jobs",
            "gpu_hours",
            "recorded_gpu_hours",
            "used_gpu_hours",
            "wasted_gpu_hours",
            "idle_gpu_hours",
            "gpu_util_pct",
        )
        .sort(["wasted_gpu_hours", column], descending=[True, False], nulls_last=True)
    )


UNTYPED = "(untyped)"
"""The GPU type of GPUs held as plain ``gres/gpu=N``."""
_JOB_COLUMNS = (
    "job_id",
    "user",
    "account",
    "partition",
    "gpus",
    pl.col("gpu_type").fill_null(UNTYPED),
    "gpu_hours_held",
)


def idle_jobs(per_job: pl.DataFrame) -> pl.DataFrame:
    """Jobs whose recorded GPU use was 0%, most GPU-hours first."""
    return (
        per_job.filter(pl.col("util_pct") <= IDLE_UTILISATION_PCT)
        .select(*_JOB_COLUMNS, pl.col("util_pct").alias("gpu_util_pct"), "source")
        .sort(["gpu_hours_held", "job_id"], descending=[True, False])
    )


def small_memory_jobs(per_job: pl.DataFrame) -> pl.DataFrame:
    """Jobs on large GPUs (:data:`LARGE_GPU_BYTES`) whose GPU memory peaked under
    :data:`SMALL_MEMORY_SHARE` of it, most GPU-hours first."""
    return (
        per_job.filter(
            (pl.col("mem_per_gpu_bytes") >= LARGE_GPU_BYTES)
            & (pl.col("mem_share_pct") < 100 * SMALL_MEMORY_SHARE)
        )
        .select(
            *_JOB_COLUMNS,
            pl.col("mem_share_pct").alias("gpu_mem_pct"),
            (pl.col("mem_per_gpu_bytes") / 2**30).alias("gpu_mem_gib"),
            "source",
        )
        .sort(["gpu_hours_held", "job_id"], descending=[True, False])
    )


def gpu_trend(per_job: pl.DataFrame, period: Period) -> pl.DataFrame:
    """GPU-hours held, used and at 0% per day (per week beyond 62 days), by submission."""
    every = "1w" if period.seconds > 62 * 86400 else "1d"
    recorded = pl.col("source").is_not_null()
    return (
        per_job.sort("submit")
        .group_by_dynamic("submit", every=every, start_by="datapoint")
        .agg(
            pl.len().alias("gpu_jobs"),
            pl.col("gpu_hours_held").sum().alias("gpu_hours"),
            pl.col("gpu_hours_used").filter(recorded).sum().alias("used_gpu_hours"),
            pl.col("gpu_hours_idle").filter(recorded).sum().alias("idle_gpu_hours"),
        )
        .with_columns(pl.col("submit").dt.strftime("%Y-%m-%d").alias("from"))
        .select("from", "gpu_jobs", "gpu_hours", "used_gpu_hours", "idle_gpu_hours")
    )


def gpu_tables(per_job: pl.DataFrame, period: Period) -> dict[str, pl.DataFrame]:
    """The GPU section's tables by name (also their CSV names)."""
    tables = {
        f"gpu_waste_by_{column}": gpu_waste_by(per_job, column)
        for column in ("user", "account", "partition", "gpu_type")
    }
    tables["gpu_idle_jobs"] = idle_jobs(per_job)
    tables["gpu_small_memory_jobs"] = small_memory_jobs(per_job)
    tables["gpu_trend"] = gpu_trend(per_job, period)
    return tables
