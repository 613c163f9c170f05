"""The aggregated tables behind each chart: small, whatever the number of jobs.

Charts never receive raw jobs: bars come from group-bys, time series from buckets, and the
two scatter plots from a deterministic sample whose size the chart states.
"""

from __future__ import annotations

import polars as pl

from wass_chat.analytics.period import FAILURE_STATES, Period
from wass_chat.analytics.summary import WAIT_QUANTILE_METHOD, over_request_jobs

TOP_USERS = 15
TOP_ENTITIES = 10
SCATTER_SAMPLE = 2000
SAMPLE_SEED = 20240101
OTHERS = "(others)"


def states_per_user(loaded: pl.DataFrame, top: int = TOP_USERS) -> pl.DataFrame:
    """Jobs per (user, final state) for the ``top`` users by jobs; the rest pooled as (others)."""
    jobs = loaded.filter(pl.col("in_period"))
    leaders = (
        jobs.group_by("user").len().sort(["len", "user"], descending=[True, False]).head(top)
    )["user"]
    named = (
        pl.when(pl.col("user").is_in(leaders.implode()))
        .then(pl.col("user"))
        .otherwise(pl.lit(OTHERS))
    )
    table = jobs.group_by(named.alias("user"), "state").len("jobs")
    order = {name: i for i, name in enumerate([*leaders.to_list(), OTHERS])}
    return (
        table.with_columns(
            pl.col("user").replace_strict(order, return_dtype=pl.Int64).alias("__rank")
        )
        .sort("__rank", "state")
        .drop("__rank")
    )


def wait_by_state(loaded: pl.DataFrame) -> pl.DataFrame:
    """Per final state of started jobs: count, mean, median, p90 and max queue wait (seconds)."""
    started = loaded.filter(pl.col("in_period") & pl.col("start").is_not_null())
    wait = pl.col("wait_s")
    return (
        started.group_by("state")
        .agg(
            pl.len().alias("jobs"),
            wait.mean().alias("mean_s"),
            wait.quantile(0.5, WAIT_QUANTILE_METHOD).alias("median_s"),
            wait.quantile(0.9, WAIT_QUANTILE_METHOD).alias("p90_s"),
            wait.max().cast(pl.Float64).alias("max_s"),
        )
        .sort("jobs", descending=True)
    )


def deterministic_sample(frame: pl.DataFrame, n: int = SCATTER_SAMPLE) -> pl.DataFrame:
    """At most ``n`` rows chosen with a fixed seed: the same table always gives the same points.

    The cache returns rows in a stable order (month files, import order), so no sort is needed.
    """
    if frame.height <= n:
        return frame
    return frame.sample(n, seed=SAMPLE_SEED, shuffle=False)


def walltime_requested_vs_used(loaded: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Sampled (requested h, used h, backfilled) of measured jobs, and how many were measured."""
    measured = loaded.filter(over_request_jobs())
    points = deterministic_sample(measured).select(
        (pl.col("timelimit_s") / 3600).alias("requested_h"),
        (pl.col("elapsed_s") / 3600).alias("used_h"),
        "backfilled",
    )
    return points, measured.height


def nodes_vs_elapsed(loaded: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Sampled (elapsed h, allocated nodes, state) of started jobs, and the population size."""
    started = loaded.filter(pl.col("in_period") & (pl.col("elapsed_s") > 0))
    points = deterministic_sample(started).select(
        (pl.col("elapsed_s") / 3600).alias("elapsed_h"), "nnodes", "state"
    )
    return points, started.height


def top_entities(loaded: pl.DataFrame, column: str, top: int = TOP_ENTITIES) -> pl.DataFrame:
    """The ``top`` users or accounts by node-hours of their jobs submitted in the period."""
    jobs = loaded.filter(pl.col("in_period"))
    return (
        jobs.group_by(column)
        .agg(
            ((pl.col("elapsed_s") * pl.col("nnodes")).sum() / 3600).alias("node_hours"),
            pl.len().alias("jobs"),
        )
        .sort(["node_hours", column], descending=[True, False])
        .head(top)
    )


def rates_over_time(loaded: pl.DataFrame, period: Period) -> pl.DataFrame:
    """Per submission bucket: finished jobs and their failure, timeout and cancellation rates."""
    finished = loaded.filter(pl.col("in_period") & pl.col("finished"))
    state = pl.col("state")
    return (
        finished.group_by(pl.col("submit").dt.truncate(period.bucket).alias("bucket"))
        .agg(
            pl.len().alias("finished"),
            state.is_in(FAILURE_STATES).mean().alias("failure_rate"),
            (state == "TIMEOUT").mean().alias("timeout_rate"),
            (state == "CANCELLED").mean().alias("cancel_rate"),
        )
        .sort("bucket")
    )


def backfill_over_time(loaded: pl.DataFrame, period: Period) -> pl.DataFrame:
    """Per start bucket: jobs started in the period and the share (%) the backfill scheduler
    started (per partition, the share is a column of the wait-by-partition table)."""
    started = loaded.filter(
        pl.col("start").is_not_null()
        & (pl.col("start") >= period.start)
        & (pl.col("start") < period.end)
    )
    return (
        started.group_by(pl.col("start").dt.truncate(period.bucket).alias("bucket"))
        .agg(
            pl.len().alias("started"),
            (100 * pl.col("backfilled").cast(pl.Float64).mean()).alias("backfill_pct"),
        )
        .sort("bucket")
    )
