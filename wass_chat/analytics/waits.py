"""Where queue time goes: waits by partition, QOS and job size; the pending queue and its reasons.

XDMoD and the Frontier sacct-analysis workflow break waits down the same way: a median alone
hides both the group that waits (wide jobs, a small partition) and the tail (a 20-day wait),
so every table here carries the number of jobs, the median, p90 and the maximum.
"""

from __future__ import annotations

import polars as pl

from wass_chat.analytics.period import Period
from wass_chat.analytics.summary import WAIT_QUANTILE_METHOD

SIZE_BINS = ((1, 1, "1 node"), (2, 4, "2-4 nodes"), (5, 16, "5-16 nodes"), (17, 64, "17-64 nodes"))
"""Job-size classes; wider jobs fall into ">64 nodes"."""
WIDEST = ">64 nodes"


def size_class() -> pl.Expr:
    """The job-size class of each row, from NNodes."""
    expr = pl.when(pl.col("nnodes").is_null()).then(pl.lit("unknown"))
    for lo, hi, label in SIZE_BINS:
        expr = expr.when(pl.col("nnodes").is_between(lo, hi)).then(pl.lit(label))
    return expr.otherwise(pl.lit(WIDEST))


def wait_by(loaded: pl.DataFrame, group: str | pl.Expr, name: str) -> pl.DataFrame:
    """Per group of started jobs submitted in the period: jobs, median/p90/max wait (hours),
    backfill share (%)."""
    started = loaded.filter(pl.col("in_period") & pl.col("start").is_not_null())
    key = pl.col(group) if isinstance(group, str) else group
    hours = pl.col("wait_s") / 3600
    return (
        started.group_by(key.fill_null("unknown").alias(name))
        .agg(
            pl.len().alias("jobs"),
            hours.quantile(0.5, WAIT_QUANTILE_METHOD).round(2).alias("median_wait_h"),
            hours.quantile(0.9, WAIT_QUANTILE_METHOD).round(2).alias("p90_wait_h"),
            hours.max().round(2).alias("max_wait_h"),
            (100 * pl.col("backfilled").cast(pl.Float64).mean()).round(1).alias("backfill_pct"),
        )
        .sort(["jobs", name], descending=[True, False])
    )


def wait_by_size(loaded: pl.DataFrame) -> pl.DataFrame:
    """:func:`wait_by` over job-size classes, smallest first."""
    order = [label for *_, label in SIZE_BINS] + [WIDEST, "unknown"]
    table = wait_by(loaded, size_class(), "size")
    return (
        table.with_columns(
            pl.col("size")
            .replace_strict({n: i for i, n in enumerate(order)}, return_dtype=pl.Int64)
            .alias("__rank")
        )
        .sort("__rank")
        .drop("__rank")
    )


NO_REASON = "(none recorded)"
"""A pending job whose accounting row has no reason: slurmdbd stores the pending reason only
from time to time (on the live cluster, sacct said ``None`` for jobs squeue showed pending for
Priority and Resources, and ``PartitionConfig`` for one squeue showed as ``PartitionNodeLimit``)."""


def pending_at_end(loaded: pl.DataFrame, period: Period) -> pl.DataFrame:
    """Jobs submitted in the period and still waiting at its end, with their age in hours.

    Waiting at ``end``: not started before it and not ended (cancelled) before it; the column
    ``pending_at_end`` of :func:`~wass_chat.analytics.period.load_period`, which the summary's
    pending count reads too.
    """
    end = pl.lit(period.end)
    return loaded.filter(pl.col("pending_at_end")).with_columns(
        ((end - pl.col("submit")).dt.total_seconds() / 3600).alias("age_h"),
        pl.col("reason").fill_null(NO_REASON),
    )


def pending_reasons(pending: pl.DataFrame) -> pl.DataFrame:
    """Per pending reason: jobs, share (%), median and maximum age (hours), most jobs first."""
    total = pending.height
    return (
        pending.group_by("reason")
        .agg(
            pl.len().alias("jobs"),
            pl.col("age_h").quantile(0.5, WAIT_QUANTILE_METHOD).round(2).alias("median_age_h"),
            pl.col("age_h").max().round(2).alias("max_age_h"),
        )
        .with_columns((100 * pl.col("jobs") / max(total, 1)).round(1).alias("share_pct"))
        .sort(["jobs", "reason"], descending=[True, False])
        .select("reason", "jobs", "share_pct", "median_age_h", "max_age_h")
    )


def queue_age(pending: pl.DataFrame) -> pl.DataFrame:
    """How long the pending queue at the period's end had waited, in age classes."""
    bins = ((0, 1, "< 1 h"), (1, 24, "1-24 h"), (24, 168, "1-7 d"))
    label = pl.when(pl.col("age_h") < bins[0][1]).then(pl.lit(bins[0][2]))
    for lo, hi, text in bins[1:]:
        label = label.when(pl.col("age_h").is_between(lo, hi, closed="left")).then(pl.lit(text))
    label = label.otherwise(pl.lit(">= 7 d"))
    order = {text: i for i, text in enumerate([b[2] for b in bins] + [">= 7 d"])}
    return (
        pending.group_by(label.alias("age"))
        .agg(pl.len().alias("jobs"))
        .with_columns(pl.col("age").replace_strict(order, return_dtype=pl.Int64).alias("__rank"))
        .sort("__rank")
        .drop("__rank")
    )
