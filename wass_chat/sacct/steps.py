"""Job steps as sacct lists them: a ``.batch`` and an ``.extern`` row after each started job.

Synthetic accounting data gets these so that parsing, de-duplication and statistics meet the
same mix of job and step rows as a real ``sacct -P`` export. Usage moves as sacct records it: the
``.batch`` step carries the job's MaxRSS and TRESUsageInTot/Max (GPU use included), the
``.extern`` step next to nothing, and the allocation row keeps only TotalCPU (the sum over its
steps).
"""

from __future__ import annotations

import polars as pl


def with_job_steps(jobs: pl.DataFrame) -> pl.DataFrame:
    """Add ``.batch`` and ``.extern`` steps after every started job, as sacct lists them."""
    parents = jobs.with_row_index("__order").with_columns(pl.lit(0).alias("__rank"))
    started = parents.filter(pl.col("start").is_not_null())
    blank = [
        "user",
        "partition",
        "qos",
        "timelimit_s",
        "req_mem_bytes",
        "req_tres",
        "flags",
        "reason",
        "priority",
        "comment",
        "dependency",
        "cancelled_by",
    ]
    usage = {
        "batch": (
            pl.col("total_cpu_s"),
            pl.col("max_rss_bytes"),
            pl.col("tres_usage_in_tot"),
            pl.col("tres_usage_in_max"),
        ),
        "extern": (pl.lit(0), pl.lit(0), pl.lit(None, pl.String), pl.lit(None, pl.String)),
    }
    parents = parents.with_columns(
        pl.lit(None, pl.Int64).alias("max_rss_bytes"),
        pl.lit(None, pl.String).alias("tres_usage_in_tot"),
        pl.lit(None, pl.String).alias("tres_usage_in_max"),
    )
    steps = [
        started.with_columns(
            pl.concat_str([pl.col("job_id"), pl.lit("." + step)]).alias("job_id"),
            pl.concat_str([pl.col("job_id_raw"), pl.lit("." + step)]).alias("job_id_raw"),
            pl.lit(step).alias("job_name"),
            pl.col("start").alias("submit"),
            pl.col("start").alias("eligible"),
            pl.lit(True).alias("is_step"),
            pl.lit(False).alias("backfilled"),
            *(pl.lit(None).cast(jobs.schema[name]).alias(name) for name in blank),
            usage[step][0].cast(pl.Float64).alias("total_cpu_s"),
            usage[step][1].cast(pl.Int64).alias("max_rss_bytes"),
            usage[step][2].alias("tres_usage_in_tot"),
            usage[step][3].alias("tres_usage_in_max"),
            pl.lit(rank).alias("__rank"),
        )
        for rank, step in enumerate(("batch", "extern"), start=1)
    ]
    return pl.concat([parents, *steps]).sort("__order", "__rank").drop("__order", "__rank")
