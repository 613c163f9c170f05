"""The answer checker applied to the report's summary paragraph: every figure it states equals
a value recomputed here from the analysis (unrounded), and every "most" names the right ones.

The summary (:func:`wass_chat.report.overview.deterministic_overview`, or a local model's text)
quotes the findings' sentences. :func:`recomputed_figures` derives what those sentences may say
again, from the analysis's tables in plain Python and at full precision: the period's counts,
the pending queue from its reasons table, the idle core-hours per user from the exact
efficiency table, the failing users from the anomaly's counts. :func:`overview_problems` then
checks the paragraph as :mod:`.answer_check` checks an answer, strictly (a "0" must be a zero
figure, not one rounded away), and adds what a number check cannot see:

* **the leader is the leader**: the user said to leave "the most core-hours idle" is the only
  one with the largest exact amount; "tied for the most" names every user on it and no other;
  an amount under :data:`~wass_chat.analytics.insights.NEGLIGIBLE_CORE_HOURS` crowns no one;
* **shares within their whole**: a share of the pending queue or of jobs never exceeds 100%.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from wass_chat.agent.answers.answer_check import contradictions, ungrounded
from wass_chat.analytics.analysis import Analysis
from wass_chat.analytics.efficiency import LOW_MEMORY_EFFICIENCY
from wass_chat.analytics.insights import NEGLIGIBLE_CORE_HOURS
from wass_chat.report.overview import LEADING

_MARKER = re.compile(r"\((\d+)\) ")
"""The summary's numbered recommendations, ``(1) ...``: list markers, not figures."""
_MOST_IDLE = re.compile(r"(\S+) left the most core-hours idle")
_TIED_IDLE = re.compile(r"([^.;:]+?) tied for the most core-hours idle")
_NAME_SPLIT = re.compile(r",\s*|\s+and\s+")


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


def overview_problems(text: str, figures: Mapping[str, Any]) -> list[str]:
    """Everything wrong with a summary paragraph against :func:`recomputed_figures`."""
    body = _MARKER.sub(" ", text)
    found = ungrounded(body, figures, strict=True) + contradictions(body)
    leaders = set(figures.get("most_idle_users", []))
    for name in _MOST_IDLE.findall(body):
        if leaders != {name}:
            found.append(
                f"{name} is said to leave the most core-hours idle; the exact leaders are "
                f"{sorted(leaders) or 'none (negligible amounts)'}"
            )
    for group in _TIED_IDLE.findall(body):
        named = {n.strip() for n in _NAME_SPLIT.split(group.split(". ")[-1]) if n.strip()}
        if named != leaders or len(leaders) < 2:
            found.append(f"tied for the most idle: {sorted(named)}, but the exact leaders are "
                         f"{sorted(leaders)}")  # fmt: skip
    for share in re.findall(r"(\d+(?:\.\d+)?)% of (?:the )?(?:\d[\d,]* )?(?:jobs|pending)", body):
        if float(share) > 100:
            found.append(f"a share of {share}% of the jobs")
    return found
