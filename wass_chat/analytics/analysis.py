"""One call from a jobs table and a period to every statistic, chart, anomaly and insight."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from wass_chat.analytics import breakdowns as bd
from wass_chat.analytics import insights as ins
from wass_chat.analytics.anomalies import Anomaly, find_anomalies
from wass_chat.analytics.charts import (
    BACKFILL_COLOUR,
    MAIN_COLOUR,
    ChartSpec,
    Trace,
    state_colour,
)
from wass_chat.analytics.period import Period, load_period, period_of
from wass_chat.analytics.summary import PeriodSummary, summarize
from wass_chat.analytics.utilisation import node_usage, utilisation_over_time


@dataclass(frozen=True)
class Analysis:
    """Everything the report shows about accounting data for one period."""

    period: Period
    summary: PeriodSummary
    nodes_seen: int
    charts: tuple[ChartSpec, ...]
    anomalies: tuple[Anomaly, ...]
    node_usage: pl.DataFrame
    tables: dict[str, pl.DataFrame]
    """The aggregated table behind each chart, by chart id."""


def analyze(
    jobs: pl.LazyFrame,
    start: datetime | None = None,
    end: datetime | None = None,
    user: str | None = None,
) -> Analysis:
    """Load the period from ``jobs`` (the cache's lazy frame) and compute the whole analysis."""
    period = period_of(jobs, start, end)
    loaded = load_period(jobs, period, user)
    summary = summarize(loaded)
    nodes = node_usage(loaded)
    nodes_seen = nodes.height
    tables: dict[str, pl.DataFrame] = {
        "states_per_user": bd.states_per_user(loaded),
        "wait_by_state": bd.wait_by_state(loaded),
        "utilisation": utilisation_over_time(loaded, period, nodes_seen),
        "top_users": bd.top_entities(loaded, "user"),
        "top_accounts": bd.top_entities(loaded, "account"),
        "rates": bd.rates_over_time(loaded, period),
    }
    walltime, measured = bd.walltime_requested_vs_used(loaded)
    scatter, started = bd.nodes_vs_elapsed(loaded)
    tables["walltime"] = walltime
    tables["nodes_vs_elapsed"] = scatter
    charts = (
        _states_chart(tables["states_per_user"], summary),
        _wait_chart(tables["wait_by_state"], summary),
        _walltime_chart(walltime, measured, summary),
        _nodes_chart(scatter, started),
        _utilisation_chart(tables["utilisation"], nodes_seen, period),
        _top_chart(tables["top_users"], "user", summary),
        _top_chart(tables["top_accounts"], "account", summary),
        _rates_chart(tables["rates"], period),
    )
    anomalies = tuple(find_anomalies(loaded, summary, nodes))
    return Analysis(period, summary, nodes_seen, charts, anomalies, nodes, tables)


def _col(frame: pl.DataFrame, name: str) -> tuple[object, ...]:
    return tuple(frame[name].to_list())


def _states_chart(table: pl.DataFrame, summary: PeriodSummary) -> ChartSpec:
    users = list(dict.fromkeys(table["user"].to_list()))
    traces = []
    for (state,), rows in sorted(table.partition_by("state", as_dict=True).items()):
        counts = dict(zip(rows["user"].to_list(), rows["jobs"].to_list(), strict=True))
        traces.append(
            Trace(
                str(state),
                tuple(users),
                tuple(float(counts.get(u, 0)) for u in users),
                colour=state_colour(str(state)),
            )
        )
    return ChartSpec(
        "chart-states-per-user",
        "Job states per user (top users by jobs)",
        "user",
        "jobs",
        tuple(traces),
        ins.states_insight(table, summary),
        stacked=True,
    )


def _wait_chart(table: pl.DataFrame, summary: PeriodSummary) -> ChartSpec:
    states = _col(table, "state")
    traces = (
        Trace(
            "median",
            states,
            tuple(v / 3600 for v in table["median_s"].to_list()),
            colour=MAIN_COLOUR,
        ),
        Trace("p90", states, tuple(v / 3600 for v in table["p90_s"].to_list()), colour="#aec7e8"),
        Trace("mean", states, tuple(v / 3600 for v in table["mean_s"].to_list()), colour="#ffbb78"),
    )
    return ChartSpec(
        "chart-wait-by-state",
        "Queue wait by final state",
        "final state",
        "wait (hours)",
        traces,
        ins.wait_insight(table, summary),
    )


def _walltime_chart(points: pl.DataFrame, measured: int, summary: PeriodSummary) -> ChartSpec:
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
        "requested (hours)",
        "used (hours)",
        tuple(traces),
        ins.walltime_insight(summary, points.height),
        note=f"deterministic sample of {points.height:,} of {measured:,} jobs",
        log_x=True,
        log_y=True,
    )


def _nodes_chart(points: pl.DataFrame, population: int) -> ChartSpec:
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
        "elapsed (hours)",
        "nodes",
        (trace,),
        ins.nodes_insight(points, population),
        log_x=True,
        log_y=True,
        note=f"deterministic sample of {points.height:,} of {population:,} jobs",
    )


def _utilisation_chart(series: pl.DataFrame, nodes_seen: int, period: Period) -> ChartSpec:
    traces = (
        Trace(
            "busy nodes / nodes seen",
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
        "busy nodes (% of nodes seen)",
        traces,
        ins.utilisation_insight(series, nodes_seen),
    )


def _top_chart(table: pl.DataFrame, column: str, summary: PeriodSummary) -> ChartSpec:
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
    )


def _rates_chart(series: pl.DataFrame, period: Period) -> ChartSpec:
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
    )
