"""Things an administrator should look at, each found by a stated, deterministic rule.

The rules are :data:`RULES` (plain text: the report shows them as written). Each anomaly keeps
its full table; the report lists the first rows and writes every row to CSV.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from wass_chat.analytics.insights import human_duration
from wass_chat.analytics.period import FAILURE_STATES
from wass_chat.analytics.summary import WAIT_QUANTILE_METHOD, PeriodSummary, over_request_jobs

LONG_WAIT_FLOOR_S = 6 * 3600
MIN_JOBS_PER_USER = 20
FAILURE_FACTOR = 2.0
FAILURE_MARGIN = 0.10
OVER_REQUEST_MEDIAN = 5.0
RARE_NODE_SHARE = 0.10
LISTED = 10
RULES: tuple[tuple[str, str], ...] = (
    ("Long waits", "started jobs whose queue wait exceeds max(p99 of waits, 6 h)."),
    (
        "Users with high failure rates",
        "at least 20 finished jobs and a failure rate of at least max(2 x the overall rate, "
        "overall + 10 points).",
    ),
    (
        "Heavy walltime over-requesters",
        "at least 20 measured jobs and a median requested/used ratio of 5 or more; ranked by "
        "reserved-but-unused node-hours.",
    ),
    (
        "Rarely used nodes",
        "nodes seen in the period whose busy hours are below 10% of the median node's (nodes "
        "never allocated do not appear in accounting data at all).",
    ),
)


@dataclass(frozen=True)
class Anomaly:
    """One kind of anomaly: the rule, how many cases matched, and every case as a table."""

    kind: str
    title: str
    rule: str
    count: int
    table: pl.DataFrame
    """Every matching case, worst first (the report's CSV)."""

    @property
    def examples(self) -> pl.DataFrame:
        """The worst :data:`LISTED` cases, as the report's page shows them."""
        return self.table.head(LISTED)


def find_anomalies(
    loaded: pl.DataFrame, summary: PeriodSummary, nodes: pl.DataFrame
) -> list[Anomaly]:
    """All four anomaly kinds (each present even when nothing matched)."""
    return [
        long_waits(loaded),
        failing_users(loaded, summary.failure_rate or 0.0),
        over_requesters(loaded),
        rarely_used_nodes(nodes),
    ]


def long_waits(loaded: pl.DataFrame) -> Anomaly:
    started = loaded.filter(pl.col("in_period") & pl.col("start").is_not_null())
    p99 = started["wait_s"].quantile(0.99, WAIT_QUANTILE_METHOD) if started.height else None
    threshold = max(p99 or 0.0, LONG_WAIT_FLOOR_S)
    hits = started.filter(pl.col("wait_s") > threshold).sort(
        ["wait_s", "job_id"], descending=[True, False]
    )
    table = hits.select(
        "job_id",
        "user",
        "partition",
        "nnodes",
        (pl.col("wait_s") / 3600).round(2).alias("wait_h"),
        "state",
    )
    return Anomaly(
        "long_waits",
        "Long queue waits",
        f"wait > max(p99 of waits, 6 h) = {human_duration(threshold)}",
        hits.height,
        table,
    )


def failing_users(loaded: pl.DataFrame, overall_rate: float) -> Anomaly:
    threshold = max(FAILURE_FACTOR * overall_rate, overall_rate + FAILURE_MARGIN)
    per_user = (
        loaded.filter(pl.col("in_period") & pl.col("finished"))
        .group_by("user")
        .agg(
            pl.len().alias("finished"),
            pl.col("state").is_in(FAILURE_STATES).sum().alias("failed"),
        )
        .with_columns((pl.col("failed") / pl.col("finished")).alias("failure_rate"))
    )
    hits = per_user.filter(
        (pl.col("finished") >= MIN_JOBS_PER_USER) & (pl.col("failure_rate") >= threshold)
    ).sort(["failure_rate", "user"], descending=[True, False])
    return Anomaly(
        "failing_users",
        "Users with high failure rates",
        f">= {MIN_JOBS_PER_USER} finished jobs and failure rate >= "
        f"max({FAILURE_FACTOR:g} x overall, overall + {100 * FAILURE_MARGIN:.0f} points) = "
        f"{100 * threshold:.1f}%",
        hits.height,
        hits.select(
            "user",
            "finished",
            "failed",
            (100 * pl.col("failure_rate")).round(1).alias("failure_pct"),
        ),
    )


def over_requesters(loaded: pl.DataFrame) -> Anomaly:
    measured = loaded.filter(over_request_jobs())
    per_user = measured.group_by("user").agg(
        pl.len().alias("jobs"),
        (pl.col("timelimit_s") / pl.col("elapsed_s"))
        .quantile(0.5, WAIT_QUANTILE_METHOD)
        .alias("median_ratio"),
        (((pl.col("timelimit_s") - pl.col("elapsed_s")) * pl.col("nnodes")).sum() / 3600).alias(
            "unused_node_hours"
        ),
    )
    hits = per_user.filter(
        (pl.col("jobs") >= MIN_JOBS_PER_USER) & (pl.col("median_ratio") >= OVER_REQUEST_MEDIAN)
    ).sort(["unused_node_hours", "user"], descending=[True, False])
    return Anomaly(
        "over_requesters",
        "Heavy walltime over-requesters",
        f">= {MIN_JOBS_PER_USER} completed jobs and median requested/used "
        f">= {OVER_REQUEST_MEDIAN:g}",
        hits.height,
        hits.with_columns(pl.col("median_ratio").round(2), pl.col("unused_node_hours").round(1)),
    )


def rarely_used_nodes(nodes: pl.DataFrame) -> Anomaly:
    median = nodes["busy_hours"].median() if nodes.height else None
    threshold = RARE_NODE_SHARE * float(median or 0.0)  # type: ignore[arg-type]
    hits = nodes.filter(pl.col("busy_hours") < threshold).sort(["busy_hours", "node"])
    return Anomaly(
        "rare_nodes",
        "Rarely used nodes",
        f"busy hours < {100 * RARE_NODE_SHARE:.0f}% of the median node's = {threshold:.1f} h",
        hits.height,
        hits.with_columns(pl.col("busy_hours").round(2)),
    )
