"""One short, deterministic sentence or two per chart, computed from the chart's own numbers.

The agent may rephrase these, but never invents numbers: each figure here can be recomputed
from the data with the definitions in the methods section.
"""

from __future__ import annotations

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


NEGLIGIBLE_CORE_HOURS = 0.01
"""Idle core-hours below this (36 core-seconds) are no one's waste worth naming: the summary
says the amounts are negligible rather than crown a "most" that prints as 0."""
SHOWN_TIES = 3
"""At most this many tied names in one sentence, then how many more."""


def leaders(table: pl.DataFrame, column: str) -> pl.DataFrame:
    """The rows of ``table`` that share its largest exact ``column`` value (a tie is a tie,
    whatever the names' alphabetical order)."""
    if table.is_empty():
        return table
    best = table[column].max()
    return table.filter(pl.col(column) == best)


def tied_names(table: pl.DataFrame, column: str) -> str:
    """``alice``, ``alice and bob``, ``alice, bob, carol and 2 more``."""
    shown = [named(v) for v in table[column].head(SHOWN_TIES).to_list()]
    more = table.height - len(shown)
    if more > 0:
        return ", ".join(shown) + f" and {more:,} more"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def top_waster(ranked: pl.DataFrame, average_pct: float | None) -> str:
    """The user who left most core-hours idle, and whether that is poor efficiency or volume.

    ``ranked`` is :func:`~wass_chat.analytics.efficiency.efficiency_by`'s table over users (exact
    values, most idle first). Users tied on the exact amount are named together; when even the
    most is under :data:`NEGLIGIBLE_CORE_HOURS`, no one is named. The ranking counts idle
    core-hours, so a heavy user at a good efficiency can lead it; the sentence says which side of
    the period's average the user is on.
    """
    top = ranked.row(0, named=True)
    if top["wasted_core_hours"] < NEGLIGIBLE_CORE_HOURS:
        return (
            f"No user left a noticeable amount idle: each left under {NEGLIGIBLE_CORE_HOURS:g} "
            "core-hours."
        )
    tied = leaders(ranked, "wasted_core_hours")
    if tied.height > 1:
        return (
            f"{tied_names(tied, 'user')} tied for the most core-hours idle: "
            f"{amount(top['wasted_core_hours'])} each, over "
            f"{plural(int(tied['jobs'].sum()), 'job')} together."
        )
    text = (
        f"{named(top['user'])} left the most core-hours idle: "
        f"{amount(top['wasted_core_hours'])} over {plural(top['jobs'], 'job')}, at "
        f"{top['cpu_eff_pct']:.1f}% CPU efficiency"
    )
    if average_pct is None:
        return text + "."
    if f"{top['cpu_eff_pct']:.1f}" == f"{average_pct:.1f}":  # "0.0%, above the period's 0.0%"
        return f"{text}, the period's own: the volume of their jobs puts them first."
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
    tied = leaders(per_user.sort("user"), "jobs")
    count = int(tied["jobs"][0])
    who = (
        f"{named(tied['user'][0])} submitted the most jobs ({count:,}, "
        if tied.height == 1
        else f"{tied_names(tied, 'user')} tied for the most jobs ({count:,} each, "
    )
    refused = (
        f" Slurm refused {plural(summary.refused, 'submission')} outright (no job ran; "
        "not counted as failures)."
        if summary.refused
        else ""
    )
    return (
        f"{who}{percent(count / summary.jobs)} of "
        f"{summary.jobs:,}). Of finished jobs {percent(summary.failure_rate)} failed, "
        f"{percent(summary.timeout_rate)} timed out and {percent(summary.cancel_rate)} "
        "were cancelled." + refused
    )


MIN_GROUP_JOBS = 30
"""A group (state, partition, bucket) needs this many jobs before it is called the worst."""


def large_groups(table: pl.DataFrame, column: str) -> pl.DataFrame:
    """Rows whose ``column`` count is large enough to single out: at least ``MIN_GROUP_JOBS``
    (or half the total, on tiny data) and at least 1% of the total."""
    return table.filter(pl.col(column) >= group_floor(table, column))


def group_floor(table: pl.DataFrame, column: str) -> int:
    """The count :func:`large_groups` keeps a row from."""
    total = int(table[column].sum())
    return max(min(MIN_GROUP_JOBS, max(1, total // 2)), max(1, total // 100))


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
    if longest["max_wait_h"] * 3600 < 1:  # a ranking of zeros names no partition (issue #41)
        return (
            f"No started job waited in any partition ({plural(int(table['jobs'].sum()), 'job')} "
            "started within a second of becoming eligible)."
        )
    single = (
        f"the longest single wait was in {longest['partition']} "
        f"({human_duration(longest['max_wait_h'] * 3600)})."
    )
    if worst["median_wait_h"] * 3600 < 1:
        floor = group_floor(table, "jobs")
        every = "every partition" if pool is table else f"every partition of {floor}+ jobs"
        return f"In {every} the median job did not wait (0 s); {single}"
    return (
        f"{worst['partition']} had the longest median wait "
        f"({human_duration(worst['median_wait_h'] * 3600)} over {worst['jobs']:,} jobs, p90 "
        f"{human_duration(worst['p90_wait_h'] * 3600)}); {single}"
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
        f"the widest used {plural(widest, 'node')} "
        f"({points.height:,} of {population:,} jobs plotted)."
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
    """Who used the most node-hours (ties named together), and the top rows' share; amounts
    at the precision that keeps them non-zero (``0.02 of 0.04``, never ``0, 59.5% of 0``)."""
    if table.is_empty() or total_node_hours <= 0:
        return f"No {column} used any node-hours in this period."
    tied = leaders(table, "node_hours")
    hours = float(tied["node_hours"][0])
    share = hours / total_node_hours
    top_share = float(table["node_hours"].sum()) / total_node_hours
    who = (
        f"{named(tied[column][0])} used the most node-hours ({amount(hours)}, "
        if tied.height == 1
        else f"{tied_names(tied, column)} tied for the most node-hours ({amount(hours)} each, "
    )
    return (
        f"{who}{percent(share)} of {amount(total_node_hours)}); "
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
