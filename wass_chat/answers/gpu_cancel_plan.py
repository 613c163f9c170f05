"""A plan to cancel a job that holds idle GPUs (kind ``gpu_cancel_plan``, made by
:mod:`wass_chat.analytics.gpu_idle_cancel`), which a person approves: the Markdown.
"""

from __future__ import annotations

from wass_chat.agent.safety import literal
from wass_chat.answers.kind import Facts, Kind


def render_gpu_cancel_plan(facts: Facts) -> str:
    """An idle-GPU job's cancellation plan (:mod:`wass_chat.analytics.gpu_idle_cancel`)."""
    lines = [
        f"**Plan to cancel job {literal(facts['job_id'])}** of {literal(facts['user'])}: "
        f"{facts['gpus']} GPU{'s' if facts['gpus'] != 1 else ''} on {literal(facts['nodes'])} "
        f"at 0% for {facts['idle_for_min']} "
        f"minutes (setting: {facts['idle_after_min']} minutes)."
    ]
    lines += [f"- evidence: {literal(line, 600)}" for line in facts["evidence"]]
    lines.append(f"Runs {literal(facts['command'])}.")
    lines.append(f"Or tell its owner: {literal(facts['message'], 600)}")
    # The digest stays in the facts: a hex run like 2e70 would read as a number to the checker.
    lines.append("Nothing has been cancelled. A person must approve this plan to continue.")
    return "\n".join(lines)


KIND = Kind(
    "gpu_cancel_plan",
    "a job idle on its GPUs, the evidence, and the cancellation for a person to approve",
    render_gpu_cancel_plan,
)
