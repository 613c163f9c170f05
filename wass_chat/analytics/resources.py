"""What jobs were given: GPUs from the allocated (or requested) TRES, and GPU-hours.

GPU-hours need only ``AllocTRES`` (``gres/gpu=8`` or ``gres/gpu:a100=8``); a job that never
started has no AllocTRES, and its request is read from ``ReqTRES`` instead. What jobs *used*
(CPU time, peak memory) is :mod:`.efficiency`'s.
"""

from __future__ import annotations

import polars as pl

TOP_GPU_USERS = 10


def gpus(column: str = "alloc_tres") -> pl.Expr:
    """GPUs in a TRES column (AllocTRES by default; ReqTRES for requests): the untyped count
    first, else a typed one."""
    tres = pl.col(column)
    plain = tres.str.extract(r"gres/gpu=(\d+)", 1)
    typed = tres.str.extract(r"gres/gpu:[^=,]+=(\d+)", 1)
    return pl.coalesce(plain, typed).cast(pl.Int64).fill_null(0)


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
