"""One short, deterministic sentence or two per chart, computed from the chart's own numbers.

The agent may rephrase these, but never invents numbers: each figure here can be recomputed
from the data with the definitions in the methods section.
"""

from __future__ import annotations

import polars as pl

from wass_chat.analytics.summary import PeriodSummary


def human_duration(seconds: float | None) -> str:
    """``42 s``, ``3.5 min``, ``2.1 h``, ``1.6 d``; ``n/a`` for None."""
    if seconds is None:
        return "n/a"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def percent(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f}%"


def states_insight(table: pl.DataFrame, summary: PeriodSummary) -> str:
    if table.is_empty():
        return "No job was submitted in this period."
    per_user = table.group_by("user").agg(pl.col("jobs").sum()).filter(pl.col("user") != "(others)")
    top = per_user.sort(["jobs", "user"], descending=[True, False]).row(0)
    return (
        f"{top[0]} submitted the most jobs ({top[1]:,}, {percent(top[1] / summary.jobs)} of "
        f"{summary.jobs:,}). Of finished jobs {percent(summary.failure_rate)} failed, "
        f"{percent(summary.timeout_rate)} timed out and {percent(summary.cancel_rate)} "
        "were cancelled."
    )


def wait_insight(table: pl.DataFrame, summary: PeriodSummary) -> str:
    if table.is_empty():
        return "No job started in this period, so there are no queue waits."
    worst = table.sort(["median_s", "state"], descending=[True, False]).row(0, named=True)
    return (
        f"Over {summary.started:,} started jobs the queue wait was "
        f"{human_duration(summary.wait_median_s)} "
        f"at the median, {human_duration(summary.wait_p90_s)} at p90 and "
        f"{human_duration(summary.wait_mean_s)} on average; {worst['state']} jobs waited longest "
        f"(median {human_duration(worst['median_s'])})."
    )


def walltime_insight(summary: PeriodSummary, sample: int) -> str:
    if not summary.over_request_jobs:
        return "No completed job with a finite walltime limit in this period."
    ratio = summary.over_request_ratio or 0.0
    return (
        f"Completed jobs asked for {ratio:.1f}x the walltime they used in total (median job "
        f"{summary.over_request_median or 0:.1f}x); {percent(summary.under_half_share)} used less "
        f"than half of their request. {percent(summary.backfill_share)} of started jobs were "
        f"backfilled (shown in orange; {sample:,} of {summary.over_request_jobs:,} jobs plotted)."
    )


def nodes_insight(points: pl.DataFrame, population: int) -> str:
    if points.is_empty():
        return "No job ran in this period."
    single = (points["nnodes"] == 1).mean() or 0.0
    widest = int(points["nnodes"].max() or 0)  # type: ignore[arg-type]
    return (
        f"{percent(float(single))} of the plotted jobs used a single node; "
        f"the widest used {widest:,} "
        f"nodes ({points.height:,} of {population:,} jobs plotted)."
    )


def utilisation_insight(series: pl.DataFrame, nodes_seen: int) -> str:
    if series.is_empty() or not nodes_seen:
        return "No node was allocated in this period."
    mean = float(series["utilisation"].mean() or 0.0)  # type: ignore[arg-type]
    peak = series.sort(["utilisation", "bucket"], descending=[True, False]).row(0, named=True)
    return (
        f"On average {percent(mean)} of the {nodes_seen:,} nodes seen were busy; "
        "the busiest interval "
        f"started {peak['bucket']:%Y-%m-%d %H:%M} at {percent(peak['utilisation'])}."
    )


def top_insight(table: pl.DataFrame, column: str, total_node_hours: float) -> str:
    if table.is_empty():
        return f"No {column} used any node-hours in this period."
    name, hours = table.row(0)[:2]
    share = hours / total_node_hours if total_node_hours else None
    top_share = table["node_hours"].sum() / total_node_hours if total_node_hours else None
    return (
        f"{name} used the most node-hours ({hours:,.0f}, {percent(share)} of "
        f"{total_node_hours:,.0f}); "
        f"the top {table.height} together used {percent(top_share)}."
    )


def rates_insight(series: pl.DataFrame) -> str:
    if series.is_empty():
        return "No job finished in this period."
    worst = series.sort(["failure_rate", "bucket"], descending=[True, False]).row(0, named=True)
    return (
        f"The failure rate peaked at {percent(worst['failure_rate'])} for jobs submitted in the "
        f"interval starting {worst['bucket']:%Y-%m-%d %H:%M} ({worst['finished']:,} finished jobs)."
    )
