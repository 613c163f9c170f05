"""The efficiency view's charts and their insight sentences, from :mod:`.efficiency`'s tables."""

from __future__ import annotations

import polars as pl

from wass_chat.analytics.charts import MAIN_COLOUR, ChartSpec, Trace
from wass_chat.analytics.efficiency import LOW_MEMORY_EFFICIENCY, EfficiencySummary
from wass_chat.analytics.insights import NEGLIGIBLE_CORE_HOURS, amount, leaders, top_waster

MEMORY_COLOUR = "#9467bd"
WASTE_COLOUR = "#d62728"
NOT_MEASURED = (
    "No finished job of this period has CPU usage recorded (TotalCPU, MaxRSS and "
    "TRESUsageInTot are imported since the efficiency view was added; re-import older data)."
)


def efficiency_chart(histogram: pl.DataFrame, summary: EfficiencySummary) -> ChartSpec:
    """Side-by-side bars per efficiency bin: core-hours by CPU efficiency, jobs by memory's."""
    bins = tuple(histogram["bin"].to_list()) if summary.measured_jobs else ()
    traces = (
        Trace(
            "CPU: % of core-hours",
            bins,
            tuple(float(v) for v in histogram["cpu_core_hours_pct"].to_list()) if bins else (),
            colour=MAIN_COLOUR,
        ),
        Trace(
            "memory: % of jobs",
            bins if summary.memory_jobs else (),
            tuple(float(v) for v in histogram["memory_jobs_pct"].to_list())
            if summary.memory_jobs
            else (),
            colour=MEMORY_COLOUR,
        ),
    )
    return ChartSpec(
        "chart-efficiency",
        "CPU efficiency (share of core-hours) and memory efficiency (share of jobs)",
        "efficiency: used / allocated CPU time, peak memory (all tasks) / the job's memory",
        "% of measured core-hours or jobs",
        traces,
        efficiency_insight(summary),
        y_from_zero=True,
    )


def wasted_chart(by_user: pl.DataFrame, summary: EfficiencySummary) -> ChartSpec:
    """The users with most wasted core-hours (allocated but idle CPU time)."""
    trace = Trace(
        "wasted core-hours",
        tuple(by_user["user"].to_list()),
        tuple(float(v) for v in by_user["wasted_core_hours"].to_list()),
        colour=WASTE_COLOUR,
    )
    return ChartSpec(
        "chart-wasted-core-hours",
        "Top user by wasted core-hours"
        if by_user.height == 1
        else f"Top {by_user.height} users by wasted core-hours",
        "user",
        "core-hours allocated but not used",
        (trace,),
        wasted_insight(by_user, summary),
        y_from_zero=True,
    )


def efficiency_insight(s: EfficiencySummary) -> str:
    if not s.measured_jobs:
        return NOT_MEASURED
    text = (
        f"Over {s.measured_jobs:,} measured jobs, {s.cpu_efficiency_pct:.1f}% of the "
        f"{amount(s.allocated_core_hours)} allocated core-hours were used (median job "
        f"{s.median_cpu_efficiency_pct:.1f}%); {amount(s.wasted_core_hours)} core-hours sat idle."
    )
    if s.memory_jobs and s.median_memory_efficiency_pct is not None:
        text += (
            f" The median job peaked at {s.median_memory_efficiency_pct:.1f}% of its memory "
            f"(all its tasks together); {s.low_memory_jobs_pct:.1f}% of {s.memory_jobs:,} jobs "
            f"stayed under {100 * LOW_MEMORY_EFFICIENCY:.0f}%."
        )
    return text


def wasted_insight(by_user: pl.DataFrame, s: EfficiencySummary) -> str:
    if by_user.is_empty() or not s.wasted_core_hours:
        return NOT_MEASURED if not s.measured_jobs else "No measured job left cores idle."
    ranking = "Ranked by idle core-hours (allocated minus used CPU time), not by efficiency."
    if by_user["wasted_core_hours"][0] < NEGLIGIBLE_CORE_HOURS:
        return f"{ranking} {top_waster(by_user, s.cpu_efficiency_pct)}"
    tied = leaders(by_user, "wasted_core_hours")
    share = 100 * float(tied["wasted_core_hours"].sum()) / s.wasted_core_hours
    them = "That is" if tied.height == 1 else "Together that is"
    return (
        f"{ranking} {top_waster(by_user, s.cpu_efficiency_pct)} {them} {share:.1f}% of all "
        f"{amount(s.wasted_core_hours)} idle core-hours."
    )
