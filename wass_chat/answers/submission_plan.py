"""A plan to submit a workflow (kind ``submission_plan``), which a person approves, edits or
rejects: its facts and its Markdown.
"""

from __future__ import annotations

import shlex
from typing import TypedDict

from wass_chat.agent.safety import literal as lit
from wass_chat.agent.units import seconds
from wass_chat.answers.kind import Facts, Kind


class PlannedJob(TypedDict):
    """One Slurm job of a submission plan."""

    task: str
    node: str
    cores: int
    memory_mb: int
    after: list[str]
    """The tasks whose jobs must end first (``afterok``)."""
    planned_start_s: float
    """Seconds from now, as the simulator predicts."""
    command: list[str]
    """The workflow's program and arguments, word for word as the job runs them; [] when the
    job sleeps for its simulated time."""
    sbatch: list[str]
    """Every sbatch option of the job (``--mem``, ``--time``, ``--nodelist``, dependencies...),
    the script left out."""
    argv: list[str]
    """The literal command line that submits the job (``sbatch --parsable ...``, the script
    included), parents' job ids as ``{job:TASK}`` until sbatch returns them."""


class SubmissionPlanFacts(TypedDict, total=False):
    """What ``submit_workflow`` returns: a plan a person approves, edits or rejects."""

    kind: str
    planned_run_id: str
    plan_digest: str
    """SHA-256 of the exact plan (:mod:`wass_chat.slurm.plan_digest`): what approving names."""
    workflow: str
    workflow_sha256: str
    """SHA-256 of the workflow's content the plan was made from."""
    workflow_ref: str
    scheduler: str
    platform: str
    platform_ref: str
    predicted_makespan_s: float
    estimates: str
    """Which runtimes the plan assumes: ``workflow`` (the file's) or the knowledge base's
    history in words (``kb: 2 real runs (...)``)."""
    jobs: list[PlannedJob]
    note: str
    """Why the plan is not on the cluster's own nodes (Slurm did not answer), or ''."""
    cluster: str
    """What running jobs held when planning (live cluster only)."""
    busy_jobs: list[str]
    """One line per running job the plan works around: its partition, --time, --mem and CPUs
    per node (live cluster only)."""
    predicted_start: list[str]
    """When the first task starts, from the queue model, with its bound, then what the model
    could not know (live cluster only)."""
    edited: bool


PENDING_PREFIX = "Nothing has been submitted."
"""How the plan's last line, true while it waits, begins; a front end that shows the decision's
outcome drops that line (one truthful outcome line, not "nothing submitted" above "submitted")."""


PENDING_PLAN_LINE = f"{PENDING_PREFIX} Approve, edit or reject this plan to continue."


def render_submission_plan(f: Facts) -> str:
    lines = [
        f"**Plan to submit {lit(f['workflow'])}** with {lit(f['scheduler'])} on "
        f"{lit(f['platform'])}: {len(f['jobs'])} jobs, predicted makespan "
        f"{seconds(f['predicted_makespan_s'])}.",
    ]
    for job in f["jobs"]:  # every job: a person approves all of them, not the first twenty
        after = ", ".join(lit(a) for a in job["after"]) or "none"
        lines.append(
            f"- {lit(job['task'])} -> {lit(job['node'])} ({job['cores']} cores; after {after})"
        )
        if "command" in job:
            runs = lit(shlex.join(job["command"]), 400) if job["command"] else "sleeps"
            lines.append(f"  runs {runs}; sbatch {lit(' '.join(job['sbatch']), 600)}")
    if f.get("estimates") and f["estimates"] != "workflow":
        lines.append(f"Runtimes from {lit(str(f['estimates']), 400)}.")
    if f.get("plan_digest"):
        lines.append(f"Plan digest {lit(str(f['plan_digest'])[:12])} (what approving names).")
    if f.get("cluster"):
        lines.append(f"Planned from now: {f['cluster']}.")
    for said in f.get("predicted_start", []):
        lines.append(f"- {lit(said, 400)}")
    for busy in f.get("busy_jobs", [])[:20]:
        lines.append(f"- held by {lit(busy, 240)}")
    lines.append("")
    if str(f.get("platform_ref") or "").lower() == "demo":
        note = (str(f.get("note") or "").strip().splitlines() or [""])[0]
        lines.append(
            f"{PENDING_PREFIX} This plan uses the demo platform's nodes"
            + (f" ({lit(note)})" if note else "")
            + ", which the cluster does not have: it cannot be submitted."
        )
    else:
        lines.append(PENDING_PLAN_LINE)
    return "\n".join(lines)


KIND = Kind(
    "submission_plan",
    "the jobs a workflow would be submitted as, for a person to approve",
    render_submission_plan,
    facts=SubmissionPlanFacts,
)
