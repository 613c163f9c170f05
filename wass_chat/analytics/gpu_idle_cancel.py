"""Acting on idle GPUs, never automatically: a proposal to cancel a running job that has held
its GPUs at 0% longer than the site's setting (``gpu_idle_cancel_after_min``), for a person to
approve, or a message to its owner with the evidence.

:func:`propose_cancel` reads the job now (:mod:`wass_chat.analytics.gpu_live`) and refuses when
its use is not recorded ("cannot tell it is idle"), when it is not at 0%, or when it has not been
at 0% long enough. Otherwise the plan shows the evidence, the exact command (``scancel J``), and
its digest: SHA-256 over the proposal's unguessable id, the job, its owner, its start and the
command, so an approval names one proposal and no other. :func:`execute_cancel` is the approval
gate's executor (:class:`~wass_chat.agent.approval.ApprovalGate`): it refuses a digest that is
not the plan's and a job that changed since (ended, restarted, no longer idle), then runs the
command. :class:`ProposalStore` keeps each proposal until it is decided, once: a second approval
(a replay) finds it decided and does nothing. Every proposal, approval and refusal is one JSON
line of the decision log (``gpu-idle/decisions.jsonl`` under the data home).
"""

from __future__ import annotations

import json
import shlex
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sim.atomic_files import append_private_line, write_atomic
from sim.errors import InputError
from wass_chat.analytics.gpu_live import LiveGpuJob, SlurmRunner, running_gpu_jobs
from wass_chat.analytics.gpu_usage import HOW_TO_RECORD, IDLE_UTILISATION_PCT, NOT_RECORDED
from wass_chat.slurm.plan_digest import PlanMismatch, canonical_json, sha256_hex

DIGEST_VERSION = 1


class NotIdle(InputError):
    """The job cannot be proposed for cancelling: its idleness is unknown, or it is not idle."""

    kind = "idle GPU job"


def cancel_digest(plan: dict[str, Any]) -> str:
    """SHA-256 over what approving covers: this proposal, the job, its owner, start, command."""
    document = {
        "digest_version": DIGEST_VERSION,
        "action": "cancel_idle_gpu",
        "proposal_id": plan["proposal_id"],
        "job_id": plan["job_id"],
        "user": plan["user"],
        "start": plan["start"],
        "argv": plan["argv"],
    }
    return sha256_hex(canonical_json(document))


def _check_idle(job: LiveGpuJob, idle_after_min: float) -> None:
    if not job.recorded:
        raise NotIdle(
            job.job_id,
            [f"cannot tell it is idle: {NOT_RECORDED} ({HOW_TO_RECORD}); nothing is proposed"],
        )
    if not job.idle:
        raise NotIdle(
            job.job_id,
            [f"its GPUs are at {job.utilisation_pct:.1f}%, not idle; nothing is proposed"],
        )
    if job.run_time_s < 60 * idle_after_min:
        raise NotIdle(
            job.job_id,
            [
                f"at 0% for {job.run_time_s / 60:.1f} minutes, under the "
                f"{idle_after_min:g}-minute setting (gpu_idle_cancel_after_min); nothing is "
                "proposed"
            ],
        )


def find_running(runner: SlurmRunner, job_id: str, version: Any = None) -> LiveGpuJob:
    """The running GPU job ``job_id`` now, or a one-line refusal."""
    if not job_id.isdigit():
        raise InputError(job_id, ["a job id is a number, e.g. 42"])
    found = [j for j in running_gpu_jobs(runner, version) if j.job_id == job_id]
    if not found:
        raise NotIdle(job_id, ["is not a running job holding GPUs; nothing is proposed"])
    return found[0]


def propose_cancel(job: LiveGpuJob, idle_after_min: float) -> dict[str, Any]:
    """The plan to cancel ``job`` (refused by :class:`NotIdle` unless idle long enough)."""
    _check_idle(job, idle_after_min)
    plan: dict[str, Any] = {
        "kind": "gpu_cancel_plan",
        "proposal_id": f"gpu-{uuid.uuid4().hex}",
        "job_id": job.job_id,
        "user": job.user,
        "start": job.start,
        "partition": job.partition,
        "nodes": job.nodes,
        "gpus": job.gpus,
        "idle_for_min": round(job.run_time_s / 60, 1),
        "idle_after_min": idle_after_min,
        "utilisation_pct": job.utilisation_pct,
        "source": job.source,
        "evidence": list(job.evidence),
        "argv": ["scancel", job.job_id],
        "command": shlex.join(["scancel", job.job_id]),
        "message": owner_message(job),
    }
    plan["plan_digest"] = cancel_digest(plan)
    return plan


def owner_message(job: LiveGpuJob) -> str:
    """The note to the job's owner, with the evidence (the alternative to cancelling)."""
    return (
        f"Your job {job.job_id} on {job.nodes} has held {job.gpus} GPU"
        f"{'s' if job.gpus != 1 else ''} at {job.utilisation_pct or 0:.1f}% utilisation for "
        f"{job.run_time_s / 3600:.1f} h ({job.source}). If it does not need GPUs, please "
        "cancel it and resubmit it to a CPU partition; otherwise check that it reaches them."
    )


def execute_cancel(
    plan: dict[str, Any], digest: str, runner: SlurmRunner, version: Any = None
) -> dict[str, Any]:
    """Cancel the approved plan's job if it is the same job, still running and still idle."""
    actual = cancel_digest(plan)
    if actual != digest or plan.get("plan_digest") != digest:
        raise PlanMismatch(
            "cancellation",
            [
                f"the plan (digest {actual[:12]}) is not the plan approved ({digest[:12]}); "
                "nothing was cancelled"
            ],
        )
    now = [j for j in running_gpu_jobs(runner, version) if j.job_id == plan["job_id"]]
    if not now or now[0].start != plan["start"] or now[0].user != plan["user"]:
        raise NotIdle(plan["job_id"], ["is no longer the running job shown; nothing was cancelled"])
    if not now[0].recorded or (now[0].utilisation_pct or 0) > IDLE_UTILISATION_PCT:
        raise NotIdle(plan["job_id"], ["is no longer idle; nothing was cancelled"])
    runner.run(list(plan["argv"]))
    return {"job_id": plan["job_id"], "cancelled": [plan["job_id"]], "argv": plan["argv"]}


class ProposalStore:
    """Proposals waiting for a decision (one JSON file each) and the decision log (JSONL)."""

    def __init__(self, home: Path) -> None:
        self.root = home / "gpu-idle"
        self.log = self.root / "decisions.jsonl"

    def _path(self, proposal_id: str) -> Path:
        if not proposal_id.startswith("gpu-") or not proposal_id[4:].isalnum():
            raise InputError(proposal_id, ["not a proposal id (gpu-...)"])
        return self.root / "proposals" / f"{proposal_id}.json"

    def save(self, plan: dict[str, Any]) -> None:
        write_atomic(self._path(plan["proposal_id"]), json.dumps(plan, indent=1))
        self.record("proposed", plan, "")

    def load(self, proposal_id: str) -> dict[str, Any]:
        """The waiting proposal, or a refusal: unknown, or already decided (no replay)."""
        path = self._path(proposal_id)
        if not path.is_file():
            raise InputError(proposal_id, ["no such proposal is waiting: nothing was done"])
        plan: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        if plan.get("decision"):
            raise InputError(
                proposal_id,
                [f"was already {plan['decision']}: an approval counts once; nothing was done"],
            )
        return plan

    def decide(self, plan: dict[str, Any], decision: str, outcome: str) -> None:
        """Mark the proposal decided (so it cannot be approved again) and log the decision."""
        decided = {**plan, "decision": decision, "decided_at": _now()}
        write_atomic(self._path(plan["proposal_id"]), json.dumps(decided, indent=1))
        self.record(decision, plan, outcome)

    def record(self, event: str, plan: dict[str, Any], outcome: str) -> None:
        entry = {
            "time": _now(),
            "event": event,
            "proposal_id": plan.get("proposal_id"),
            "job_id": plan.get("job_id"),
            "user": plan.get("user"),
            "plan_digest": plan.get("plan_digest"),
            "argv": plan.get("argv"),
            "outcome": outcome,
        }
        append_private_line(self.log, json.dumps(entry, ensure_ascii=True))

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.is_file():
            return []
        return [json.loads(x) for x in self.log.read_text(encoding="utf-8").splitlines() if x]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
