"""What jobs were given: GPUs from the allocated TRES, and GPU-hours.

GPU-hours need only ``AllocTRES`` (``gres/gpu=8`` or ``gres/gpu:a100=8``; the live cluster
records GPUs there only with ``AccountingStorageTRES=gres/gpu``). What jobs *used* (CPU time,
peak memory) is :mod:`.efficiency`'s.
"""

from __future__ import annotations

import polars as pl

from wass_chat.sacct.tres import gpus

TOP_GPU_USERS = 10


def gpu_jobs(loaded: pl.DataFrame) -> pl.DataFrame:
    """Jobs submitted in the period that were allocated GPUs, with their count in ``gpus``.

    Computed once per report: reading the TRES strings of every job is the costly part, and
    :func:`gpu_by` groups this small table by partition, user and account in turn.
    """
    jobs = loaded.filter(pl.col("in_period") & pl.col("alloc_tres").str.contains("gres/gpu"))
    return jobs.select("partition", "user", "account", "elapsed_s", gpus().alias("gpus")).filter(
        pl.col("gpus") > 0
    )


def gpu_by(loaded: pl.DataFrame, column: str, top: int | None = None) -> pl.DataFrame:
    """Per ``column`` value (partition, user or account): GPU jobs, GPU-hours and share of all
    GPU-hours. ``loaded`` is the period's table, or :func:`gpu_jobs` of it."""
    with_gpu = gpu_jobs(loaded) if "in_period" in loaded.columns else loaded
    total = float(((with_gpu["elapsed_s"] * with_gpu["gpus"]).sum() or 0) / 3600)
    hours = (pl.col("elapsed_s") * pl.col("gpus")).sum() / 3600
    table = (
        with_gpu.group_by(column)
        .agg(
            pl.len().alias("gpu_jobs"),
            hours.round(1).alias("gpu_hours"),
            # from the unrounded hours: 15.5 rounded over 15.47 in all read 100.2%
            (100 * hours / total if total else pl.lit(0.0)).round(1).alias("share_pct"),
        )
        .sort(["gpu_hours", column], descending=[True, False])
    )
    return table.head(top) if top else table
