"""The report's charts: each aggregated table -> a backend-neutral :class:`ChartSpec`.

Values shown as shares are percentages (0-100) everywhere, on axes and in tables alike.
"""

from __future__ import annotations

import polars as pl

from wass_chat.analytics import insights as ins
from wass_chat.analytics.breakdowns import OTHERS
from wass_chat.analytics.capacity import Capacity
from wass_chat.analytics.charts import (
    BACKFILL_COLOUR,
    MAIN_COLOUR,
    ChartSpec,
    Trace,
    state_colour,
)
from wass_chat.analytics.period import Period
from wass_chat.analytics.summary import PeriodSummary


def _col(frame: pl.DataFrame, name: str) -> tuple[object, ...]:
    return tuple(frame[name].to_list())


def states_chart(table: pl.DataFrame, summary: PeriodSummary) -> ChartSpec:
    """Stacked bars per top user; the pooled rest is stated in the note, not drawn (one bar
    summing hundreds of users would dwarf and flatten every named one)."""
    others = table.filter(pl.col("user") == OTHERS)
    named = table.filter(pl.col("user") != OTHERS)
    users = list(dict.fromkeys(named["user"].to_list()))
    traces = []
    for (state,), rows in sorted(named.partition_by("state", as_dict=True).items()):
        counts = dict(zip(rows["user"].to_list(), rows["jobs"].to_list(), strict=True))
        traces.append(
            Trace(
                str(state),
                tuple(users),
                tuple(float(counts.get(u, 0)) for u in users),
                colour=state_colour(str(state)),
            )
        )
    rest = int(others["jobs"].sum()) if others.height else 0
    note = f"{rest:,} jobs of the other {max(summary.users - len(users), 0):,} users not drawn"
    return ChartSpec(
        "chart-states-per-user",
        f"Job states of the {len(users)} users with most jobs",
        "user",
        "jobs",
        tuple(traces),
        ins.states_insight(table, summary),
        note=note if rest else "",
        stacked=True,
        y_from_zero=True,
    )


def wait_chart(table: pl.DataFrame, summary: PeriodSummary) -> ChartSpec:
    states = tuple(f"{s} ({n:,})" for s, n in zip(table["state"], table["jobs"], strict=True))
    traces = tuple(
        Trace(name, states, tuple(v / 3600 for v in table[column].to_list()), colour=colour)
        for name, column, colour in (
            ("median", "median_s", MAIN_COLOUR),
            ("p90", "p90_s", "#aec7e8"),
            ("max", "max_s", "#ffbb78"),
        )
    )
    return ChartSpec(
        "chart-wait-by-state",
        "Queue wait by final state (jobs per state in brackets)",
        "final state",
        "wait (hours, log scale)",
        traces,
        ins.wait_insight(table, summary),
        log_y=True,
    )


def walltime_chart(points: pl.DataFrame, measured: int, summary: PeriodSummary) -> ChartSpec:
    traces = []
    for flag, name, colour in (
        (False, "main scheduler", MAIN_COLOUR),
        (True, "backfilled", BACKFILL_COLOUR),
    ):
        part = points.filter(pl.col("backfilled") == flag)
        traces.append(
            Trace(
                name, _col(part, "requested_h"), tuple(part["used_h"].to_list()), "scatter", colour
            )
        )
    top = float(points["requested_h"].max() or 1.0) if points.height else 1.0  # type: ignore[arg-type]
    diagonal = (1 / 60, top)  # from one minute: the axes are logarithmic
    traces.append(Trace("used = requested", diagonal, diagonal, "line", "#444444", dash=True))
    return ChartSpec(
        "chart-walltime",
        "Requested vs used walltime (completed jobs)",
        "requested (hours, log scale)",
        "used (hours, log scale)",
        tuple(traces),
        ins.walltime_insight(summary, points.height),
        note=f"deterministic sample of {points.height:,} of {measured:,} jobs",
        log_x=True,
        log_y=True,
    )


def nodes_chart(points: pl.DataFrame, population: int) -> ChartSpec:
    trace = Trace(
        "jobs",
        _col(points, "elapsed_h"),
        tuple(float(v) for v in points["nnodes"].to_list()),
        "scatter",
        MAIN_COLOUR,
    )
    return ChartSpec(
        "chart-nodes-vs-elapsed",
        "Allocated nodes vs elapsed time",
        "elapsed (hours, log scale)",
        "nodes (log scale)",
        (trace,),
        ins.nodes_insight(points, population),
        log_x=True,
        log_y=True,
        note=f"deterministic sample of {points.height:,} of {population:,} jobs",
    )


def utilisation_chart(series: pl.DataFrame, capacity: Capacity, period: Period) -> ChartSpec:
    basis = "allocated CPUs" if capacity.cpus else "busy nodes (distinct)"
    traces = (
        Trace(
            f"{basis} / capacity",
            _col(series, "bucket"),
            tuple(100 * v for v in series["utilisation"].fill_nan(0).to_list()),
            "line",
            MAIN_COLOUR,
        ),
    )
    return ChartSpec(
        "chart-utilisation",
        f"Utilisation over time (per {period.bucket})",
        "time",
        f"{basis} (% of capacity)",
        traces,
        ins.utilisation_insight(series, capacity),
        note=f"capacity: {capacity.label()}",
        y_from_zero=True,
        y_max=100.0,
    )


def top_chart(table: pl.DataFrame, column: str, summary: PeriodSummary) -> ChartSpec:
    trace = Trace(
        "node-hours", _col(table, column), tuple(table["node_hours"].to_list()), colour=MAIN_COLOUR
    )
    return ChartSpec(
        f"chart-top-{column}s",
        f"Top {column}s by node-hours",
        column,
        "node-hours",
        (trace,),
        ins.top_insight(table, column, summary.node_hours),
        y_from_zero=True,
    )


def rates_chart(series: pl.DataFrame, period: Period) -> ChartSpec:
    buckets = _col(series, "bucket")
    traces = tuple(
        Trace(label, buckets, tuple(100 * v for v in series[column].to_list()), "line", colour)
        for column, label, colour in (
            ("failure_rate", "failed", state_colour("FAILED")),
            ("timeout_rate", "timed out", state_colour("TIMEOUT")),
            ("cancel_rate", "cancelled", state_colour("CANCELLED")),
        )
    )
    return ChartSpec(
        "chart-rates",
        f"Failure and cancellation rates by submission {period.bucket}",
        "submitted",
        "% of finished jobs",
        traces,
        ins.rates_insight(series),
        y_from_zero=True,
    )


def wait_by_partition_chart(table: pl.DataFrame) -> ChartSpec:
    names = tuple(f"{p} ({n:,})" for p, n in zip(table["partition"], table["jobs"], strict=True))
    traces = tuple(
        Trace(label, names, tuple(float(v) for v in table[column].to_list()), colour=colour)
        for label, column, colour in (
            ("median", "median_wait_h", MAIN_COLOUR),
            ("p90", "p90_wait_h", "#aec7e8"),
            ("max", "max_wait_h", "#ffbb78"),
        )
    )
    return ChartSpec(
        "chart-wait-by-partition",
        "Queue wait by partition (started jobs in brackets)",
        "partition",
        "wait (hours, log scale)",
        traces,
        ins.wait_by_partition_insight(table),
        log_y=True,
    )


def pending_chart(table: pl.DataFrame, pending: int, period: Period) -> ChartSpec:
    trace = Trace(
        "pending jobs",
        _col(table, "reason"),
        tuple(float(v) for v in table["jobs"].to_list()),
        colour=state_colour("PENDING"),
    )
    return ChartSpec(
        "chart-pending-reasons",
        f"Jobs still pending at {period.end:%Y-%m-%d %H:%M}, by reason",
        "reason Slurm recorded",
        "pending jobs",
        (trace,),
        ins.pending_insight(table, pending),
        y_from_zero=True,
    )


def backfill_chart(series: pl.DataFrame, period: Period) -> ChartSpec:
    trace = Trace(
        "backfilled",
        _col(series, "bucket"),
        tuple(float(v) for v in series["backfill_pct"].to_list()),
        "line",
        BACKFILL_COLOUR,
    )
    return ChartSpec(
        "chart-backfill",
        f"Share of jobs started by the backfill scheduler, per start {period.bucket}",
        "started",
        "% of started jobs",
        (trace,),
        ins.backfill_insight(series),
        y_from_zero=True,
        y_max=100.0,
    )
