"""One short, deterministic sentence or two per chart, computed from the chart's own numbers.

The agent may rephrase these, but never invents numbers: each figure here can be recomputed
from the data with the definitions in the methods section.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from wass_chat.analytics.capacity import Capacity
from wass_chat.analytics.summary import PeriodSummary
from wass_chat.analytics.waits import NO_REASON


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


def amount(value: float) -> str:
    """A quantity at the precision a reader needs: ``1,106,110``, ``14.4``, ``0.35``, ``< 0.01``."""
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 1 or magnitude == 0:
        return f"{value:.1f}".removesuffix(".0")
    if magnitude < 0.01:
        return "< 0.01" if value > 0 else "> -0.01"
    return f"{value:.2g}"


def plural(count: int, noun: str) -> str:
    """``1 job``, ``2 jobs``, ``1,234 jobs``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def named(value: object) -> str:
    """A user, account or partition as a sentence names it; accounting may not record one."""
    return "(not recorded)" if value is None else str(value)


def top_waster(top: dict[str, Any], average_pct: float | None) -> str:
    """The user who left most core-hours idle, and whether that is poor efficiency or volume.

    The ranking counts idle core-hours, so a heavy user at a good efficiency can lead it; the
    sentence says which side of the period's average the user is on.
    """
    text = (
        f"{named(top['user'])} left the most core-hours idle: "
        f"{amount(top['wasted_core_hours'])} over {plural(top['jobs'], 'job')}, at "
        f"{top['cpu_eff_pct']:.1f}% CPU efficiency"
    )
    if average_pct is None:
        return text + "."
    if top["cpu_eff_pct"] >= average_pct:
        return (
            f"{text}, above the period's {average_pct:.1f}%: the volume of their jobs, not poor "
            "efficiency, puts them first."
        )
    return f"{text}, below the period's {average_pct:.1f}%."


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


MIN_GROUP_JOBS = 30
"""A group (state, partition, bucket) needs this many jobs before it is called the worst."""


def large_groups(table: pl.DataFrame, column: str) -> pl.DataFrame:
    """Rows whose ``column`` count is large enough to single out: at least ``MIN_GROUP_JOBS``
    (or half the total, on tiny data) and at least 1% of the total."""
    total = int(table[column].sum())
    floor = max(min(MIN_GROUP_JOBS, max(1, total // 2)), max(1, total // 100))
    return table.filter(pl.col(column) >= floor)


def wait_insight(table: pl.DataFrame, summary: PeriodSummary) -> str:
    if table.is_empty():
        return "No job started in this period, so there are no queue waits."
    text = (
        f"Over {summary.started:,} started jobs the queue wait was "
        f"{human_duration(summary.wait_median_s)} at the median, "
        f"{human_duration(summary.wait_p90_s)} at p90 and "
        f"{human_duration(summary.wait_mean_s)} on average; the longest wait was "
        f"{human_duration(summary.wait_max_s)}"
    )
    longest = table.sort(["max_s", "state"], descending=[True, False]).row(0, named=True)
    text += f" (a {longest['state']} job)."
    large = large_groups(table, "jobs")
    if large.height > 1:
        worst = large.sort(["median_s", "state"], descending=[True, False]).row(0, named=True)
        text += (
            f" Among states with at least {MIN_GROUP_JOBS} jobs, {worst['state']} jobs "
            f"({worst['jobs']:,}) waited longest at the median "
            f"({human_duration(worst['median_s'])})."
        )
    return text


def wait_by_partition_insight(table: pl.DataFrame) -> str:
    if table.is_empty():
        return "No job started in this period."
    large = large_groups(table, "jobs")
    pool = large if large.height else table
    worst = pool.sort(["median_wait_h", "partition"], descending=[True, False]).row(0, named=True)
    longest = table.sort(["max_wait_h", "partition"], descending=[True, False]).row(0, named=True)
    return (
        f"{worst['partition']} had the longest median wait "
        f"({human_duration(worst['median_wait_h'] * 3600)} over {worst['jobs']:,} jobs, p90 "
        f"{human_duration(worst['p90_wait_h'] * 3600)}); the longest single wait was in "
        f"{longest['partition']} ({human_duration(longest['max_wait_h'] * 3600)})."
    )


def pending_insight(table: pl.DataFrame, pending: int) -> str:
    if table.is_empty():
        return "No job submitted in this period was still pending at its end."
    top = table.row(0, named=True)
    oldest = table.sort(["max_age_h", "reason"], descending=[True, False]).row(0, named=True)
    held = (
        f"no reason is recorded for {top['jobs']:,} of them ({top['share_pct']:.1f}%)"
        if top["reason"] == NO_REASON
        else f"{top['reason']} held {top['jobs']:,} of them ({top['share_pct']:.1f}%)"
    )
    why = "" if oldest["reason"] == NO_REASON else f" ({oldest['reason']})"
    return (
        f"{plural(pending, 'job')} {'was' if pending == 1 else 'were'} still pending at the end "
        f"of the period; {held}. The oldest had waited "
        f"{human_duration(oldest['max_age_h'] * 3600)}{why}."
    )


def backfill_insight(series: pl.DataFrame) -> str:
    if series.is_empty():
        return "No job started in this period."
    total = int(series["started"].sum())
    share = float((series["started"] * series["backfill_pct"]).sum() / total) if total else 0.0
    large = series.filter(pl.col("started") >= MIN_GROUP_JOBS)
    text = f"The backfill scheduler started {share:.1f}% of the {total:,} jobs started."
    if large.height > 1:
        low = large.sort(["backfill_pct", "bucket"]).row(0, named=True)
        high = large.sort(["backfill_pct", "bucket"], descending=[True, False]).row(0, named=True)
        text += (
            f" Per interval with at least {MIN_GROUP_JOBS} starts it ranged from "
            f"{low['backfill_pct']:.1f}% ({low['bucket']:%Y-%m-%d %H:%M}) to "
            f"{high['backfill_pct']:.1f}% ({high['bucket']:%Y-%m-%d %H:%M})."
        )
    return text


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


def utilisation_insight(series: pl.DataFrame, capacity: Capacity) -> str:
    if series.is_empty() or float(series["busy_nodes"].sum()) == 0:
        return "No node was allocated in this period."
    basis = "allocated CPUs" if capacity.cpus else "busy nodes"
    mean = float(series["utilisation"].mean() or 0.0)  # type: ignore[arg-type]
    peak = series.sort(["utilisation", "bucket"], descending=[True, False]).row(0, named=True)
    text = (
        f"On average {percent(mean)} of the capacity, {capacity.label()}, was in use "
        f"({basis}); the busiest interval started {peak['bucket']:%Y-%m-%d %H:%M} at "
        f"{percent(peak['utilisation'])}."
    )
    capped = int(series["capped"].sum())
    if capped:
        text += (
            f" In {capped:,} intervals accounting shows more CPUs allocated than the capacity: "
            "shown as 100%; check the stated capacity."
        )
    return text


def top_insight(table: pl.DataFrame, column: str, total_node_hours: float) -> str:
    if table.is_empty():
        return f"No {column} used any node-hours in this period."
    name, hours = table.row(0)[:2]
    share = hours / total_node_hours if total_node_hours else None
    top_share = table["node_hours"].sum() / total_node_hours if total_node_hours else None
    return (
        f"{named(name)} used the most node-hours ({hours:,.0f}, {percent(share)} of "
        f"{total_node_hours:,.0f}); "
        f"the top {table.height} together used {percent(top_share)}."
    )


def rates_insight(series: pl.DataFrame) -> str:
    if series.is_empty():
        return "No job finished in this period."
    large = large_groups(series, "finished")
    pool = large if large.height else series
    worst = pool.sort(["failure_rate", "bucket"], descending=[True, False]).row(0, named=True)
    return (
        f"The failure rate peaked at {percent(worst['failure_rate'])} for jobs submitted in the "
        f"interval starting {worst['bucket']:%Y-%m-%d %H:%M} ({worst['finished']:,} finished "
        f"jobs; intervals with fewer than {MIN_GROUP_JOBS} finished jobs are not singled out)."
    )
