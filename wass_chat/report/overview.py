"""The summary across charts at the top of the report, with recommendations, and who wrote it.

The deterministic text is composed from the findings (:mod:`wass_chat.analytics.findings`),
whose every number comes from the report's tables. When a local model answers, a
:class:`SummaryWriter` may write the paragraph instead from :func:`overview_facts` (the same
numbers, and nothing else); the writer checks every number of its text against those facts and
against the figures recomputed from the tables (:mod:`.overview_figures`), and the report keeps
the model's text only when all pass, saying which wrote it and, when the model's
text was set aside, why. The report never imports the agent: the CLI hands the writer in
(:func:`wass_chat.agent.report_overview.local_model_writer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from wass_chat.analytics.analysis import Analysis
from wass_chat.analytics.findings import Finding
from wass_chat.report.overview_figures import LEADING, recomputed_figures

TOPIC_PRIORITY = (
    "efficiency",
    "utilisation",
    "pending",
    "partitions",
    "walltime",
    "failures",
    "trend",
)
"""Which findings lead the summary: the costliest waste first, the trend last."""
MINOR_PENDING_SHARE = 0.01
"""A pending queue under this share of the period's jobs (7 of 100,000) is no headline: its
finding moves behind the others, before the trend."""
RULES_AUTHOR = "wass-chat's deterministic rules"


@dataclass(frozen=True)
class Draft:
    """A model's summary and the writer's check of it against the facts."""

    text: str
    model: str
    grounded: bool
    problem: str = ""
    """Why it was not grounded (numbers not in the facts), or the model's failure."""


class SummaryWriter(Protocol):
    """Writes the summary from the facts, checking its text against ``figures``
    (:func:`~wass_chat.report.overview_figures.recomputed_figures`; see :class:`Draft`)."""

    def __call__(
        self, facts: Mapping[str, Any], fallback: str, figures: Mapping[str, Any]
    ) -> Draft: ...


@dataclass(frozen=True)
class Overview:
    """The summary shown first, and a line saying who wrote it."""

    text: str
    author: str
    by_model: bool = False
    note: str = ""


def ranked_findings(a: Analysis) -> list[Finding]:
    """The period's findings in :data:`TOPIC_PRIORITY` order (unknown topics last, in their own
    order), a minor pending queue (:data:`MINOR_PENDING_SHARE`) just before the trend."""
    order = list(TOPIC_PRIORITY)
    if a.summary.pending < MINOR_PENDING_SHARE * a.summary.jobs:
        order.remove("pending")
        order.insert(order.index("trend"), "pending")
    rank = {topic: i for i, topic in enumerate(order)}
    return sorted(a.findings, key=lambda f: rank.get(f.topic, len(rank)))


def deterministic_overview(a: Analysis) -> str:
    """The period in one sentence, the leading findings and their recommendations."""
    s = a.summary
    head = (
        f"{s.jobs:,} jobs from {s.users:,} users were submitted from "
        f"{a.period.start:%Y-%m-%d %H:%M} to {a.period.end:%Y-%m-%d %H:%M}."
    )
    leading = ranked_findings(a)[:LEADING]
    if not leading:
        return head + " No rule fired: nothing stands out in this period."
    body = " ".join(f.text for f in leading)
    advice = " ".join(f"({i}) {f.recommendation}" for i, f in enumerate(leading, 1))
    more = len(a.findings) - len(leading)
    tail = f" {more} more finding{'s' if more > 1 else ''} below." if more > 0 else ""
    return f"{head} {body} Recommended: {advice}{tail}"


def overview_facts(a: Analysis) -> dict[str, Any]:
    """Everything the summary may quote: the headline numbers and the findings (whose text
    quotes the tables). A model is shown this and nothing else; its numbers must come from it."""
    s, e = a.summary, a.efficiency
    utilisation = a.tables["utilisation"]
    mean_util = float(utilisation["utilisation"].mean() or 0.0) if utilisation.height else None  # type: ignore[arg-type]
    return {
        "period": a.period.label(),
        "jobs": s.jobs,
        "users": s.users,
        "accounts": s.accounts,
        "failure_rate_pct": _pct(s.failure_rate),
        "timeout_rate_pct": _pct(s.timeout_rate),
        "median_wait_hours": _hours(s.wait_median_s),
        "p90_wait_hours": _hours(s.wait_p90_s),
        "mean_utilisation_pct": _pct(mean_util),
        "capacity": a.capacity.label(),
        "cpu_efficiency_pct": e.cpu_efficiency_pct,
        "wasted_core_hours": round(e.wasted_core_hours, 1),
        "median_memory_efficiency_pct": e.median_memory_efficiency_pct,
        "findings": [
            {"topic": f.topic, "text": f.text, "recommendation": f.recommendation}
            for f in ranked_findings(a)
        ],
    }


def build_overview(
    a: Analysis, writer: SummaryWriter | None = None, unavailable: str = ""
) -> Overview:
    """The model's summary when ``writer`` gives a grounded one, else the deterministic text.

    ``unavailable`` says why there is no writer (no local model answered), for the note.
    """
    fallback = deterministic_overview(a)
    if writer is None:
        note = f"No local model wrote it: {unavailable}." if unavailable else ""
        return Overview(fallback, RULES_AUTHOR, note=note)
    draft = writer(overview_facts(a), fallback, recomputed_figures(a))
    if draft.grounded and draft.text.strip():
        return Overview(
            draft.text.strip(),
            f"the local model {draft.model} (every number checked against the tables)",
            by_model=True,
        )
    why = draft.problem or "it wrote nothing"
    return Overview(
        fallback, RULES_AUTHOR, note=f"The local model {draft.model}'s text was set aside: {why}."
    )


def _pct(share: float | None) -> float | None:
    return None if share is None else round(100 * share, 1)


def _hours(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds / 3600, 2)
