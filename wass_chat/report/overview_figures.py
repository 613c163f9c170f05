"""The figures the report's summary paragraph may state, recomputed from the analysis.

The summary quotes the findings' sentences; this derives what those sentences may say again
from the tables themselves, in plain Python and at full precision: the period's counts, the
pending queue from its reasons table, the idle core-hours per user from the exact efficiency
table (its leaders, or none when the most is negligible), the failing users from the anomaly's
counts. The agent's checker (:mod:`wass_chat.answers.checks.overview_check`) holds the summary,
the rules' or a local model's, to these figures; the report hands them to its writer.
"""

from __future__ import annotations

from typing import Any

from wass_chat.analytics.analysis import Analysis
from wass_chat.analytics.efficiency import LOW_MEMORY_EFFICIENCY
from wass_chat.analytics.insights import NEGLIGIBLE_CORE_HOURS

LEADING = 3
"""Findings the summary quotes; the rest are "N more findings below"."""


def recomputed_figures(a: Analysis) -> dict[str, Any]:
    """The figures the summary may state, recomputed from ``a``'s tables (exact values)."""
    s, e = a.summary, a.efficiency
    pending = a.tables["pending_reasons"].to_dicts()
    pending_total = sum(r["jobs"] for r in pending)
    utilisation = a.tables["utilisation"]["utilisation"].to_list()
    idle = {r["user"]: r for r in a.tables["efficiency_by_user"].to_dicts()}
    most = max((r["wasted_core_hours"] for r in idle.values()), default=0.0)
    failing = next((x for x in a.anomalies if x.kind == "failing_users"), None)
    partitions = a.tables["wait_by_partition"].to_dicts()
    figures: dict[str, Any] = {
        "period": a.period.label(),
        "start_iso": a.period.start.isoformat(),
        "end_iso": a.period.end.isoformat(),
        "words": ["p90"],
        "jobs": s.jobs,
        "users": s.users,
        "mean_utilisation": sum(utilisation) / len(utilisation) if utilisation else None,
        "wait_median_s": s.wait_median_s,
        "wait_p90_s": s.wait_p90_s,
        "over_request_median": s.over_request_median,
        "under_half_share": s.under_half_share,
        "partitions": [
            {
                "partition": p["partition"],
                "jobs": p["jobs"],
                "median_wait_s": p["median_wait_h"] * 3600,
            }
            for p in partitions
        ],
        "pending_total": pending_total,
        "pending": [
            {
                "reason": r["reason"],
                "jobs": r["jobs"],
                "share": r["jobs"] / pending_total,
                "oldest_s": r["max_age_h"] * 3600,
            }
            for r in pending
        ],
        "failing_users": failing.count if failing else 0,
        "failing": [
            {"user": r["user"], "rate": r["failed"] / r["finished"], "finished": r["finished"]}
            for r in (failing.examples.to_dicts() if failing else [])
        ],
        "cpu_efficiency_pct": e.cpu_efficiency_pct,
        "wasted_core_hours": e.wasted_core_hours,
        "low_memory_jobs_pct": e.low_memory_jobs_pct,
        "low_memory_threshold": LOW_MEMORY_EFFICIENCY,
        "most_idle_core_hours": most,
        "most_idle_users": sorted(u for u, r in idle.items() if r["wasted_core_hours"] == most)
        if most >= NEGLIGIBLE_CORE_HOURS
        else [],
        "most_idle_jobs": sum(r["jobs"] for r in idle.values() if r["wasted_core_hours"] == most),
        "most_idle_cpu_eff_pct": [
            r["cpu_eff_pct"] for r in idle.values() if r["wasted_core_hours"] == most
        ],
        "negligible_core_hours": NEGLIGIBLE_CORE_HOURS,
        "more_findings": max(len(a.findings) - LEADING, 0),
    }
    if a.previous is not None:
        p = a.previous
        figures["previous"] = {
            "jobs": p.jobs,
            "failure_rate": p.failure_rate,
            "wait_median_s": p.wait_median_s,
        }
        figures["failure_rate"] = s.failure_rate
    return figures
