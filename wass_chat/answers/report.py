"""A report written (kind ``report``): its facts and its Markdown."""

from __future__ import annotations

from typing import TypedDict

from wass_chat.agent.safety import literal as lit
from wass_chat.answers.kind import Facts, Kind


class ReportFacts(TypedDict):
    """What ``generate_report`` returns: where the report was written."""

    kind: str
    path: str
    files: list[str]
    format: str
    period: str


def render_report(f: Facts) -> str:
    return f"Report written to {lit(f['path'])} ({f['format']}, period {lit(f['period'])})."


KIND = Kind(
    "report",
    "where the scheduling audit report was written",
    render_report,
    facts=ReportFacts,
)
