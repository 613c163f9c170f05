"""The digest a person approves, and the check that nothing else reaches Slurm.

A plan's digest is the SHA-256 of a canonical JSON document (:func:`plan_document`) holding
everything sbatch would receive: the run id and scheduler, the workflow's name and the hash of
its full content, and for every job its task, node, the workflow's command word for word, its
dependencies and its complete sbatch argument list (job name, comment, partition, ``--nodelist``,
CPUs, ``--mem``, ``--time``, GPUs, dependencies, output file and the script itself). Change any
of them and the digest changes.

Every front end approves a digest, never "the pending plan": the app's Approve button, ``ask
--yes`` and ``submit --yes`` (and the MCP server's approval) pass the digest of the plan they
showed, and :func:`submit_approved` recomputes the digest of the plan it is about to submit and
refuses, before any sbatch, when the two differ (:class:`PlanMismatch`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sim.errors import InputError
from sim.model import Workflow
from sim.wfformat import workflow_to_dict
from wass_chat.runlog import RunLog, RunRecord
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.runs import submit_plan
from wass_chat.slurm.submission import SubmissionPlan

DIGEST_VERSION = 1
"""Bumped whenever :func:`plan_document` changes shape, so old digests never match new plans."""
SHORT_DIGEST = 12
"""Hex digits of the digest shown to people (the full one is what is compared)."""


class PlanMismatch(InputError):
    """The plan about to be submitted is not the one a person approved: nothing is submitted."""

    kind = "approval"


def canonical_json(value: Any) -> str:
    """``value`` as JSON with sorted keys and no spaces: one text for one value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def content_hash(workflow: Workflow) -> str:
    """SHA-256 of a workflow's full content (tasks, commands, files, dependencies)."""
    return sha256_hex(canonical_json(workflow_to_dict(workflow)))


def workflow_hash(plan: SubmissionPlan) -> str:
    """SHA-256 of the content of the workflow ``plan`` submits."""
    return content_hash(plan.workflow)


def plan_document(plan: SubmissionPlan) -> dict[str, Any]:
    """What the digest covers: every field of every job that sbatch would receive."""
    return {
        "digest_version": DIGEST_VERSION,
        "run_id": plan.run_id,
        "scheduler": plan.scheduler,
        "workflow": {"name": plan.workflow.name, "sha256": workflow_hash(plan)},
        "jobs": [
            {
                "task": job.task,
                "node": job.node,
                "pinned": job.pin,
                "command": list(job.command),
                "after": list(job.parents),
                "sbatch": job.argv(),
            }
            for job in plan.jobs
        ],
    }


def plan_digest(plan: SubmissionPlan) -> str:
    """The SHA-256 (hex) of :func:`plan_document`: what a person approves."""
    return sha256_hex(canonical_json(plan_document(plan)))


def require_approved(plan: SubmissionPlan, approved_digest: str | None) -> None:
    """Raise :class:`PlanMismatch` unless ``plan`` is exactly the plan whose digest was
    approved (a missing digest approves nothing)."""
    if not approved_digest:
        raise PlanMismatch("submission", ["no approved plan digest: nothing was approved"])
    actual = plan_digest(plan)
    if actual != approved_digest:
        raise PlanMismatch(
            "submission",
            [
                f"the plan to submit (digest {actual[:SHORT_DIGEST]}) is not the plan approved "
                f"(digest {approved_digest[:SHORT_DIGEST]}); nothing was submitted"
            ],
        )


def submit_approved(
    plan: SubmissionPlan, approved_digest: str | None, commands: SlurmCommands, runlog: RunLog
) -> RunRecord:
    """Submit ``plan`` only if it is the approved one (checked before the run is logged or any
    sbatch runs); the run log then records this very plan, not a re-plan, with the digest
    approved and the document it hashes (``RunRecord.plan_digest``, ``approved_plan``)."""
    require_approved(plan, approved_digest)
    assert approved_digest is not None  # require_approved refuses None
    return submit_plan(plan, commands, runlog, (approved_digest, plan_document(plan)))
