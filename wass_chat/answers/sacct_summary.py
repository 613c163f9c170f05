"""A period's accounting (kind ``sacct_summary``): its facts, its verdict and its Markdown."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from wass_chat.agent.safety import MAX_NOTE
from wass_chat.agent.safety import literal as lit
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.markdown import plain
from wass_chat.slurm.explain.ended import duration


class SacctSummaryFacts(TypedDict):
    """What ``sacct_summary`` returns: a period's statistics from the sacct cache."""

    kind: str
    period: str
    user: str | None
    jobs: int
    state_counts: dict[str, int]
    statistics: dict[str, float]
    insights: list[str]
    ended_badly: NotRequired[dict[str, list[str]]]
    """Jobs that failed or timed out, by state, the latest first (a few ids each)."""
    note: str
    verdict: str


def sacct_verdict(f: SacctSummaryFacts) -> str:
    """Jobs and users of the period, the queue wait (median and p90), the failure rate and how
    loose walltime requests were: what a sysadmin asks "how busy was the cluster?" for."""
    stats = f["statistics"]
    who = f" of user {f['user']}" if f["user"] else ""
    if not f["jobs"]:
        return f"No jobs{who} in the accounting cache for {f['period']}."
    users = int(stats.get("users", 0))
    words = f"{f['jobs']:,} jobs{who} ({f['period']})" + (
        f" from {users:,} users" if users > 1 else ""
    )
    if "wait_median_s" in stats:
        words += _waits(stats["wait_median_s"], stats["wait_p90_s"])
    words += "."
    if "failure_rate" in stats:
        words += f" {100 * stats['failure_rate']:.1f}% of finished jobs failed"
        if "over_request_ratio" in stats:
            words += (
                f"; completed jobs asked for {stats['over_request_ratio']:.1f}x the walltime "
                "they used"
            )
        words += "."
    return words


def _waits(median: float, p90: float) -> str:
    """The queue wait in words; a wait under a second is none ("half waited under 0 s" is no
    sentence)."""
    if p90 < 1:
        return ": 90% of the jobs that started did so at once"
    if median < 1:
        return f": half started at once, 90% within {duration(p90)}"
    return f": half waited under {duration(median)} to start, 90% under {duration(p90)}"


def _people(key: str, value: float) -> str:
    """A statistic in people's units: durations as ``3 h 20 min``, shares as percentages."""
    if key.endswith("_s"):
        return duration(value)
    if any(w in key for w in ("share", "rate", "fraction", "utilisation", "utilization")):
        return f"{100 * value:.1f}%" if value <= 1 else f"{value:.1f}%"
    if key.endswith("_hours"):
        return f"{value:,.0f}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"


STATISTIC_WORDS = {
    "finished": "finished jobs (as last recorded, some after the period's end)",
    "started": "started jobs",
    "pending": "pending at the period's end",
    "running": "running at the period's end",
    "refused": "submissions Slurm refused (never ran)",
    "node_hours": "node-hours",
    "core_hours": "core-hours",
    "over_request_jobs": "completed jobs with a walltime request",
    "over_request_ratio": "walltime asked / used, all completed jobs",
    "over_request_median": "walltime asked / used, median completed job",
    "under_half_share": "completed jobs using under half their walltime",
    "backfill_share": "started jobs backfilled",
}
"""Statistic names in words (the rest read well as they are: ``wait median``, ``failure rate``)."""


RATIOS = frozenset({"over_request_ratio", "over_request_median"})
"""Statistics that are a multiple (walltime asked / used), shown as ``2.9x``."""


def render_sacct_summary(f: Facts) -> str:
    lines = [f"**{plain(f['verdict'])}**", ""] if f.get("verdict") else []
    lines += [
        f"**Accounting summary** ({lit(f['period'])}"
        + (f", user {lit(f['user'])}" if f.get("user") else "")
        + f"): {f['jobs']:,} jobs."
    ]
    states = ", ".join(f"{n:,} {lit(state)}" for state, n in f.get("state_counts", {}).items())
    if states:
        lines.append(f"- states: {states}")
    for key, value in f["statistics"].items():
        label = STATISTIC_WORDS.get(key, key.removesuffix("_s").replace("_", " "))
        shown = f"{value:.1f}x" if key in RATIOS else _people(key, value)
        lines.append(f"- {label}: {shown}")
    lines += [f"- {insight}" for insight in f.get("insights", [])]
    if bad := f.get("ended_badly"):
        counts = f.get("state_counts", {})
        lines += [
            "",
            "**Jobs that failed or timed out, the latest first** (`sacct`; `/why JOBID`):",
        ]
        for state, ids in bad.items():
            more = counts.get(state, len(ids)) - len(ids)
            listed = ", ".join(lit(i) for i in ids) + (f" and {more:,} more" if more > 0 else "")
            lines.append(f"- {lit(state)}: {listed}")
    if f.get("note"):
        lines += ["", f"_{lit(f['note'], MAX_NOTE)}_"]
    return "\n".join(lines)


KIND = Kind(
    "sacct_summary",
    "a period's jobs, waits, failures and walltime requests from the sacct cache",
    render_sacct_summary,
    facts=SacctSummaryFacts,
)
