"""The cross-chart summary: what the period's tables say together, and what to do about it.

Each :class:`Finding` is one deterministic rule over the tables the charts are drawn from; its
text quotes numbers from those tables only (a test recomputes them), and its recommendation is
the usual administrator's response to that pattern. Findings are about the cluster: a capacity
the tool had to guess is the report's note (:func:`~wass_chat.analytics.capacity.capacity_note`),
not a finding. The rules, in the order they are listed:

* mean utilisation < 50% while jobs waited > 1 h at p90 -> the queue, not the hardware, limits;
  mean utilisation > 85% -> saturated: waits are capacity-bound;
* median requested/used walltime >= 3 -> tighter limits help the backfill scheduler;
* a partition (with enough jobs) waiting >= 2x the overall median -> review its size or limits;
* the main pending reason -> its usual remedy (Resources, Priority, Dependency, limits);
* users with high failure rates -> contact them;
* CPU efficiency under 60% of allocated core-hours, or most jobs under a quarter of their memory
  request -> name the user who left most cores idle, suggest fewer cores / smaller requests;
* change against the previous period of equal length (jobs, failure rate, median wait).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from wass_chat.analytics.anomalies import Anomaly
from wass_chat.analytics.efficiency import LOW_MEMORY_EFFICIENCY, EfficiencySummary
from wass_chat.analytics.insights import (
    amount,
    human_duration,
    large_groups,
    leaders,
    named,
    percent,
    plural,
    tied_names,
    top_waster,
)
from wass_chat.analytics.summary import PeriodSummary
from wass_chat.analytics.waits import NO_REASON

LOW_UTILISATION = 0.50
HIGH_UTILISATION = 0.85
OVER_REQUEST = 3.0
PARTITION_WAIT_FACTOR = 2.0
LOW_CPU_EFFICIENCY_PCT = 60.0
LOW_MEMORY_JOBS_PCT = 50.0
REMEDIES = {
    "Resources": "the queue waits for free nodes: more capacity, or smaller and shorter jobs",
    "Priority": "higher-priority work goes first: check the fair-share and priority weights",
    "Dependency": "jobs wait on other jobs: expected for workflows; check for broken chains "
    "(DependencyNeverSatisfied) and kill_invalid_depend",
    "QOSMaxJobsPerUserLimit": "per-user QOS limits hold jobs back: review the QOS limits",
    "AssocGrpCPUMinutesLimit": "an account ran out of allocation: review the association limits",
    "ReqNodeNotAvail": "requested nodes are down or reserved: check drained nodes and reservations",
    "PartitionConfig": "jobs ask for more than the partition allows: fix the requests or limits",
}


@dataclass(frozen=True)
class Finding:
    """One observation across charts and what to do about it."""

    topic: str
    text: str
    recommendation: str


def find_findings(
    summary: PeriodSummary,
    previous: PeriodSummary | None,
    tables: dict[str, pl.DataFrame],
    anomalies: tuple[Anomaly, ...],
    efficiency: EfficiencySummary | None = None,
) -> tuple[Finding, ...]:
    """Every rule of the module docstring that fires, in order."""
    found: list[Finding | None] = [
        _utilisation(tables["utilisation"], summary),
        _over_request(summary),
        _partition_waits(tables["wait_by_partition"], summary),
        _pending(tables["pending_reasons"]),
        _failures(anomalies),
        _efficiency(efficiency, tables.get("efficiency_by_user")),
        _trend(summary, previous),
    ]
    return tuple(f for f in found if f is not None)


def _utilisation(series: pl.DataFrame, summary: PeriodSummary) -> Finding | None:
    if series.is_empty() or summary.wait_p90_s is None:
        return None
    mean = float(series["utilisation"].mean() or 0.0)  # type: ignore[arg-type]
    p90 = human_duration(summary.wait_p90_s)
    text = f"Mean utilisation was {percent(mean)} and p90 queue wait {p90}."
    if mean < LOW_UTILISATION and summary.wait_p90_s > 3600:
        return Finding(
            "utilisation",
            text,
            "Jobs waited while capacity was free: look at the pending reasons and limits "
            "(QOS, partitions, reservations) rather than at buying nodes.",
        )
    if mean > HIGH_UTILISATION:
        return Finding(
            "utilisation",
            text,
            "The cluster is saturated: waits are capacity-bound; shorter walltime requests "
            "let backfill fill the gaps, otherwise capacity must grow.",
        )
    return None


def _over_request(summary: PeriodSummary) -> Finding | None:
    median = summary.over_request_median
    if median is None or median < OVER_REQUEST:
        return None
    return Finding(
        "walltime",
        f"The median completed job asked for {median:.1f}x the walltime it used; "
        f"{percent(summary.under_half_share)} used less than half of their request.",
        "Lower default time limits or show users their requested/used ratio: accurate "
        "limits let the backfill scheduler start more jobs early.",
    )


def _partition_waits(table: pl.DataFrame, summary: PeriodSummary) -> Finding | None:
    overall = summary.wait_median_s
    large = large_groups(table, "jobs")
    if large.is_empty() or not overall:
        return None
    worst = large.sort(["median_wait_h", "partition"], descending=[True, False]).row(0, named=True)
    if worst["median_wait_h"] * 3600 < PARTITION_WAIT_FACTOR * overall:
        return None
    return Finding(
        "partitions",
        f"Jobs in {worst['partition']} waited {human_duration(worst['median_wait_h'] * 3600)} "
        f"at the median over {worst['jobs']:,} jobs, against {human_duration(overall)} overall.",
        f"Review {worst['partition']}'s size and limits, or steer jobs to other partitions.",
    )


def _pending(table: pl.DataFrame) -> Finding | None:
    if table.is_empty():
        return None
    top = table.row(0, named=True)
    oldest = human_duration(top["max_age_h"] * 3600)
    total = int(table["jobs"].sum())
    share = f"{top['share_pct']:.1f}%"
    of = f"{top['jobs']:,} of the {plural(total, 'job')} pending at the end ({share})"
    if top["reason"] == NO_REASON:
        return Finding(
            "pending",
            f"{of} {'has' if top['jobs'] == 1 else 'have'} no pending reason in the accounting "
            "data (slurmdbd records one only from time to time); the oldest of them has waited "
            f"{oldest}.",
            'For the live reasons, ask squeue (wass-chat ask "what is blocking the queue?").',
        )
    remedy = REMEDIES.get(str(top["reason"]), "see Slurm's squeue reason codes for this one")
    return Finding(
        "pending",
        f"{of} waited for {top['reason']}; the oldest of them for {oldest}.",
        remedy[0].upper() + remedy[1:] + ".",
    )


def _failures(anomalies: tuple[Anomaly, ...]) -> Finding | None:
    failing = next((a for a in anomalies if a.kind == "failing_users"), None)
    if failing is None or not failing.count:
        return None
    rated = failing.examples.with_columns((pl.col("failed") / pl.col("finished")).alias("rate"))
    tied = leaders(rated, "rate")
    worst = tied.row(0, named=True)
    if tied.height == 1:
        who = f"the worst, {named(worst['user'])}, {worst['failure_pct']:.1f}% of "
        who += f"{worst['finished']:,} finished jobs"
    else:
        who = f"the worst, tied at {worst['failure_pct']:.1f}%: {tied_names(tied, 'user')}"
    return Finding(
        "failures",
        f"{plural(failing.count, 'user')} had high failure rates; {who}.",
        "Contact these users (wrong modules, paths or memory requests are the usual causes): "
        "failed jobs waste their allocation and everyone's queue time.",
    )


def _efficiency(s: EfficiencySummary | None, by_user: pl.DataFrame | None) -> Finding | None:
    if s is None or not s.measured_jobs or s.cpu_efficiency_pct is None or by_user is None:
        return None
    low_cpu = s.cpu_efficiency_pct < LOW_CPU_EFFICIENCY_PCT
    low_memory = (s.low_memory_jobs_pct or 0.0) > LOW_MEMORY_JOBS_PCT
    if not (low_cpu or low_memory) or by_user.is_empty():
        return None
    text = (
        f"Jobs used {s.cpu_efficiency_pct:.1f}% of their allocated core-hours "
        f"({amount(s.wasted_core_hours)} core-hours idle). "
        + top_waster(by_user, s.cpu_efficiency_pct)
    )
    if low_memory:
        text += (
            f" {s.low_memory_jobs_pct:.1f}% of jobs peaked under "
            f"{100 * LOW_MEMORY_EFFICIENCY:.0f}% of their memory request (all tasks together)."
        )
    return Finding(
        "efficiency",
        text,
        "Show users their jobstats/seff figures; ask the top wasters for fewer cores (serial "
        "code on many cores) and smaller memory requests, which lets more jobs share the nodes.",
    )


def _trend(summary: PeriodSummary, previous: PeriodSummary | None) -> Finding | None:
    if previous is None:
        return None
    return Finding(
        "trend",
        f"Against the previous period of equal length: {previous.jobs:,} -> {summary.jobs:,} "
        f"jobs, failure rate {percent(previous.failure_rate)} -> {percent(summary.failure_rate)}, "
        f"median wait {human_duration(previous.wait_median_s)} -> "
        f"{human_duration(summary.wait_median_s)}.",
        "A rise in failures or waits that the job count does not explain deserves a look at "
        "what changed (software, limits, nodes).",
    )
