"""What jobs were given: GPU-hours from the allocated TRES, and which efficiency measures the
imported fields allow.

jobstats and reportseff compute CPU and memory efficiency from ``TotalCPU``, ``MaxRSS`` and
``TRESUsageInTot``; the importer's field list (:mod:`wass_chat.sacct.fields`) does not fetch
them, so the report says so instead of showing a number it cannot back. GPU-hours need only
``AllocTRES`` (``gres/gpu=8`` or ``gres/gpu:a100=8``), which it does fetch.
"""

from __future__ import annotations

import polars as pl

from wass_chat.sacct.fields import FIELD_BY_NAME

EFFICIENCY_FIELDS = ("TotalCPU", "MaxRSS", "TRESUsageInTot")
TOP_GPU_USERS = 10


def gpus() -> pl.Expr:
    """GPUs allocated to each job, from AllocTRES (the untyped count first, else a typed one)."""
    tres = pl.col("alloc_tres")
    plain = tres.str.extract(r"gres/gpu=(\d+)", 1)
    typed = tres.str.extract(r"gres/gpu:[^=,]+=(\d+)", 1)
    return pl.coalesce(plain, typed).cast(pl.Int64).fill_null(0)


def missing_efficiency_fields() -> tuple[str, ...]:
    """The sacct fields efficiency needs that the importer does not fetch."""
    return tuple(f for f in EFFICIENCY_FIELDS if f.lower() not in FIELD_BY_NAME)


def gpu_by(loaded: pl.DataFrame, column: str, top: int | None = None) -> pl.DataFrame:
    """Per ``column`` value (partition or user): GPU jobs, GPU-hours and share of all GPU-hours."""
    jobs = loaded.filter(pl.col("in_period")).with_columns(gpus().alias("gpus"))
    with_gpu = jobs.filter(pl.col("gpus") > 0)
    total = float(((with_gpu["elapsed_s"] * with_gpu["gpus"]).sum() or 0) / 3600)
    table = (
        with_gpu.group_by(column)
        .agg(
            pl.len().alias("gpu_jobs"),
            ((pl.col("elapsed_s") * pl.col("gpus")).sum() / 3600).round(1).alias("gpu_hours"),
        )
        .with_columns(
            (100 * pl.col("gpu_hours") / total if total else pl.lit(0.0))
            .round(1)
            .alias("share_pct")
        )
        .sort(["gpu_hours", column], descending=[True, False])
    )
    return table.head(top) if top else table
