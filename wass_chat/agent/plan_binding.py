"""What ``ask --yes`` may approve: only the plan for the workflow the question itself named.

``--yes`` is a person's approval given before the plan exists, so it must not stretch to
whatever a model proposes: a model that obeys text injected into a tool result can call
``submit_workflow`` on another file, and approving "the pending plan" would submit that file's
jobs. The plan is therefore checked against the person's own words, read by the deterministic
router (never by the model): the question must ask for a submission, the proposed plan's
workflow must have the content of the workflow the question names (compared by SHA-256, so a
file swapped under the same name fails too), a scheduler the question names must be the
plan's, and the plan must be made on the live cluster's nodes: a plan on the embedded demo
platform (what the chat falls back to when Slurm does not answer) or on a platform file is
never approved by ``--yes`` (the demo's is never submitted at all,
:func:`~wass_chat.slurm.runs.refuse_demo_platform`). Anything else is refused with one line
saying why, and nothing is submitted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sim.errors import UserFacingError
from sim.model import Workflow
from wass_chat.agent.safety import literal
from wass_chat.agent.understanding.router import route

LIVE_PLATFORM_REFS = frozenset({"slurm", "from-slurm", "cluster"})
"""How a plan on the live cluster's nodes names its platform (``platform_ref``)."""


def yes_refusal(
    question: str, plan: Mapping[str, Any], workflow_of: Callable[[str], Workflow]
) -> str | None:
    """Why ``--yes`` cannot approve ``plan`` for ``question``, or None when it may.

    ``workflow_of`` resolves a workflow reference as the session does (a file, a demo name).
    """
    from policy.registry import canonical_name
    from wass_chat.slurm.plan_digest import content_hash

    intent = route(question)
    if intent.tool != "submit_workflow":
        return "--yes approves only a submission the question asks for; this question asks none"
    named = str(intent.arguments.get("workflow") or "")
    proposed = literal(plan.get("workflow_ref") or plan.get("workflow") or "?")
    try:
        wanted = content_hash(workflow_of(named))
    except UserFacingError as exc:
        return f"--yes cannot check the plan: the question's workflow {literal(named)} " + (
            f"does not resolve ({exc.one_line()})"
        )
    if plan.get("workflow_sha256") != wanted:
        return (
            f"--yes approves only the plan for {literal(named)}, which the question named; "
            f"the plan proposed is for {proposed}, a different workflow: not submitted"
        )
    platform = str(plan.get("platform_ref") or "").strip().lower()
    if platform not in LIVE_PLATFORM_REFS or plan.get("note"):
        return (
            f"--yes approves only a plan on the live cluster's nodes; the plan proposed is on "
            f"{literal(plan.get('platform') or platform or '?')}"
            f"{' (' + str(plan['note']) + ')' if plan.get('note') else ''}: not submitted"
        )
    scheduler = intent.arguments.get("scheduler")
    if scheduler:
        try:
            asked = canonical_name(str(scheduler))
        except (KeyError, ValueError, UserFacingError):
            asked = str(scheduler)
        if asked != plan.get("scheduler"):
            return (
                f"--yes approves only a plan with {literal(asked)}, the scheduler the question "
                f"named; the plan proposed uses {literal(plan.get('scheduler'))}: not submitted"
            )
    return None
