"""The GPU columns of the parsed table (and of the cache): what a row held and what it used.

Read once at import so the report never parses TRES strings or jobstats comments again:

* held: ``gpus`` and ``gpu_type`` from AllocTRES (``gres/gpu:v100=1,gres/gpu=1``);
* used, from sacct (step rows only; the allocation row carries none, ``.extern`` shows 0):
  ``gres/gpuutil`` (percent) and ``gres/gpumem`` (bytes) of TRESUsageInTot (sum over the step's
  tasks; else TRESUsageInAve x NTasks) and of TRESUsageInMax (the busiest task);
* used, from Princeton jobstats (allocation rows): reportseff's job figures of the ``JS1:``
  summary in AdminComment (:mod:`.jobstats`).

How per-task figures become per-GPU ones depends on the Slurm version
(:mod:`wass_chat.analytics.gpu_usage`).
"""

from __future__ import annotations

import polars as pl

from wass_chat.sacct.jobstats import JobstatsCommentError, comment_gpus
from wass_chat.sacct.tres import gpu_type, gpus, tres_bytes, tres_number

GPU_COLUMN_DOCS: dict[str, str] = {
    "gpus": "GPUs held (AllocTRES gres/gpu[:type]=N), 0 without any",
    "gpu_type": "GPU type held (AllocTRES gres/gpu:<type>=N), null when untyped",
    "gpu_util_tot_pct": "step: gres/gpuutil summed over tasks (TRESUsageInTot; Ave x NTasks)",
    "gpu_util_max_pct": "step: gres/gpuutil of the busiest task (TRESUsageInMax)",
    "gpu_mem_tot_bytes": "step: gres/gpumem summed over tasks (TRESUsageInTot; Ave x NTasks)",
    "gpu_mem_max_bytes": "step: gres/gpumem of the busiest task (TRESUsageInMax)",
    "js_gpus": "jobstats: GPUs in the AdminComment summary",
    "js_gpus_idle": "jobstats: of those, GPUs whose time-averaged utilisation was 0",
    "js_gpu_util_pct": "jobstats: mean over nodes of each node's mean GPU utilisation (reportseff)",
    "js_gpu_mem_pct": "jobstats: same mean of each GPU's peak memory over its total (reportseff)",
    "js_gpu_mem_peak_bytes": "jobstats: largest peak memory of one GPU",
    "js_gpu_mem_total_bytes": "jobstats: memory of one GPU (the largest)",
}
"""Column -> what it holds (the derived GPU columns of :func:`wass_chat.sacct.parse.schema`)."""

_JOBSTATS_TYPES: dict[str, pl.DataType] = {
    "js_gpus": pl.Int64(),
    "js_gpus_idle": pl.Int64(),
    "js_gpu_util_pct": pl.Float64(),
    "js_gpu_mem_pct": pl.Float64(),
    "js_gpu_mem_peak_bytes": pl.Int64(),
    "js_gpu_mem_total_bytes": pl.Int64(),
}


def gpu_schema() -> dict[str, pl.DataType]:
    """Column -> polars type of the GPU columns."""
    return {
        "gpus": pl.Int64(),
        "gpu_type": pl.String(),
        "gpu_util_tot_pct": pl.Float64(),
        "gpu_util_max_pct": pl.Float64(),
        "gpu_mem_tot_bytes": pl.Int64(),
        "gpu_mem_max_bytes": pl.Int64(),
        **_JOBSTATS_TYPES,
    }


def sacct_gpu_columns() -> list[pl.Expr]:
    """The held and sacct-measured GPU columns, from the typed TRES text columns and NTasks."""
    tasks = pl.col("ntasks").cast(pl.Float64)

    def summed(read: pl.Expr, ave: pl.Expr) -> pl.Expr:
        return pl.coalesce(read, ave * tasks)

    util_key, mem_key = "gres/gpuutil", "gres/gpumem"
    return [
        gpus("alloc_tres").alias("gpus"),
        gpu_type("alloc_tres").alias("gpu_type"),
        summed(
            tres_number("tres_usage_in_tot", util_key), tres_number("tres_usage_in_ave", util_key)
        ).alias("gpu_util_tot_pct"),
        tres_number("tres_usage_in_max", util_key).alias("gpu_util_max_pct"),
        summed(tres_bytes("tres_usage_in_tot", mem_key), tres_bytes("tres_usage_in_ave", mem_key))
        .round(0)
        .cast(pl.Int64)
        .alias("gpu_mem_tot_bytes"),
        tres_bytes("tres_usage_in_max", mem_key).cast(pl.Int64).alias("gpu_mem_max_bytes"),
    ]


def with_jobstats_columns(jobs: pl.DataFrame) -> tuple[pl.DataFrame, int, str | None]:
    """``jobs`` with the ``js_*`` columns; how many JS1 comments did not decode, and one.

    Only rows whose AdminComment starts with ``JS1:`` are decoded (in Python: a site's jobs each
    carry one, a few hundred bytes); the others get nulls.
    """
    has = jobs["admin_comment"].str.starts_with("JS1:").fill_null(False)
    empty = {name: pl.lit(None, dtype).alias(name) for name, dtype in _JOBSTATS_TYPES.items()}
    if not has.any():
        return jobs.with_columns(empty.values()), 0, None
    rows: dict[str, list[object]] = {name: [] for name in _JOBSTATS_TYPES}
    bad, example = 0, None
    index = jobs.with_row_index("__i").filter(has).select("__i", "admin_comment")
    for comment in index["admin_comment"]:
        try:
            summary = comment_gpus(comment)
        except JobstatsCommentError:
            bad += 1
            example = example or f"AdminComment={comment[:40]!r}"
            summary = None
        values: tuple[object, ...] = (None,) * len(rows)
        if summary is not None:
            values = (
                len(summary.gpus),
                summary.idle_gpus,
                summary.utilization_pct,
                summary.memory_pct,
                summary.peak_used_bytes,
                summary.total_bytes_per_gpu,
            )
        for name, value in zip(rows, values, strict=True):
            rows[name].append(value)
    decoded = pl.DataFrame(
        {"__i": index["__i"], **rows}, schema={"__i": pl.UInt32(), **_JOBSTATS_TYPES}
    )
    out = jobs.with_row_index("__i").join(decoded, on="__i", how="left").sort("__i").drop("__i")
    return out, bad, example
