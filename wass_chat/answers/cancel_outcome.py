"""What an approved cancellation cancelled (kind ``cancel_outcome``): the Markdown."""

from __future__ import annotations

from wass_chat.agent.safety import literal
from wass_chat.answers.kind import Facts, Kind


def render_cancel_outcome(facts: Facts) -> str:
    jobs = facts.get("cancelled", [])
    shown = ", ".join(literal(j) for j in jobs) or "none (they had all finished)"
    if "run_id" not in facts:
        return f"Cancelled {len(jobs)} job: {shown}."
    return f"Cancelled {len(jobs)} jobs of run {literal(facts.get('run_id', '?'))}: {shown}."


KIND = Kind(
    "cancel_outcome",
    "the jobs an approved cancellation cancelled",
    render_cancel_outcome,
)
