"""A plan to cancel a run's unfinished jobs (kind ``cancel_plan``, made by
:func:`wass_chat.mcp_server.run_cancel.plan_cancel`), which a person approves: the Markdown.
"""

from __future__ import annotations

from wass_chat.agent.safety import literal
from wass_chat.answers.kind import Facts, Kind


def render_cancel_plan(facts: Facts) -> str:
    lines = [
        f"**Plan to cancel run {literal(facts['run_id'])}**: {len(facts['jobs'])} unfinished jobs."
    ]
    for job in facts["jobs"]:
        lines.append(
            f"- job {literal(job['job_id'])} {literal(job['name'])}: "
            f"{literal(job['state'])} on {literal(job['nodes'] or '-')}"
        )
    lines.append(f"Runs {literal(facts['command'], 600)}.")
    lines.append(f"Plan digest {literal(str(facts['plan_digest'])[:12])}.")
    lines.append("Nothing has been cancelled. A person must approve this plan to continue.")
    return "\n".join(lines)


KIND = Kind(
    "cancel_plan",
    "the unfinished jobs cancelling a run would cancel, for a person to approve",
    render_cancel_plan,
)
