"""Cancelling a run, as a plan a person approves: the jobs it would cancel, and their digest.

:func:`plan_cancel` lists the run's unfinished jobs (:func:`~wass_chat.slurm.runs.unfinished_jobs`,
what ``wass-chat cancel`` cancels) with their state, node and name, and the digest of what
approving covers (the run id and those job ids). :func:`execute_cancel` is the gate's executor:
it refuses a digest that is not that plan's, and cancels only approved jobs that are still
unfinished, never a job the person was not shown (one the run got since is left alone).
"""

from __future__ import annotations

import shlex
from typing import Any

from sim.errors import InputError
from wass_chat.config import Settings
from wass_chat.runlog import RunLog
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.plan_digest import PlanMismatch, canonical_json, sha256_hex
from wass_chat.slurm.runs import cancel_run, unfinished_jobs

CANCEL_DIGEST_VERSION = 1


def cancel_digest(run_id: str, job_ids: list[str]) -> str:
    """SHA-256 over the run and the exact jobs a cancellation covers."""
    document = {
        "digest_version": CANCEL_DIGEST_VERSION,
        "action": "cancel",
        "run_id": run_id,
        "job_ids": sorted(job_ids, key=int),
    }
    return sha256_hex(canonical_json(document))


def plan_cancel(settings: Settings, run: str) -> dict[str, Any]:
    """What cancelling run ``run`` would do; cancels nothing."""
    runlog = RunLog(settings.runs_dir)
    record = runlog.get(run)
    commands = SlurmCommands(timeout=10)
    job_ids = unfinished_jobs(record, commands, runlog)
    if not job_ids:
        raise InputError(run, [f"run {record.run_id} has no unfinished job: nothing to cancel"])
    queue = commands.queue(job_ids)
    jobs = [
        {
            "job_id": job_id,
            "name": queue[job_id].name if job_id in queue else "",
            "state": queue[job_id].state if job_id in queue else "",
            "nodes": queue[job_id].nodes if job_id in queue else "",
        }
        for job_id in job_ids
    ]
    return {
        "kind": "cancel_plan",
        "run_id": record.run_id,
        "jobs": jobs,
        "command": shlex.join(["scancel", *job_ids]),
        "plan_digest": cancel_digest(record.run_id, job_ids),
    }


def execute_cancel(settings: Settings, plan: dict[str, Any], digest: str) -> dict[str, Any]:
    """Cancel the approved plan's jobs that are still unfinished (see the module docstring)."""
    job_ids = [str(job["job_id"]) for job in plan["jobs"]]
    actual = cancel_digest(str(plan["run_id"]), job_ids)
    if actual != digest:
        raise PlanMismatch(
            "cancellation",
            [
                f"the plan (digest {actual[:12]}) is not the plan "
                f"approved ({digest[:12]}); nothing was cancelled"
            ],
        )
    runlog = RunLog(settings.runs_dir)
    record = runlog.get(str(plan["run_id"]))
    cancelled = cancel_run(record, SlurmCommands(), runlog, only=job_ids)
    return {"run_id": record.run_id, "cancelled": cancelled}


def no_edits(original: dict[str, Any], edited: dict[str, Any]) -> dict[str, Any]:
    """A cancellation is approved or rejected as shown; it has nothing to edit."""
    raise InputError(
        "cancellation", ["a cancellation cannot be edited: reject it and ask for the one you want"]
    )
