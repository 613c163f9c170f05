"""Submitting a planned run, following it, cancelling it: Slurm plus the decision log.

Submission is all-or-nothing: the run is logged before the first sbatch; if any sbatch fails,
every job already submitted is cancelled and the run is logged as ``failed`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sim.errors import UserFacingError
from sim.platforms import platform_to_dict
from sim.wfformat import workflow_to_dict
from wass_chat.runlog import RunLog, RunRecord
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.submission import JobSpec, SubmissionPlan

FINISHED_STATES = frozenset(
    {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED",
     "BOOT_FAIL", "DEADLINE"}
)  # fmt: skip


def platform_summary(plan: SubmissionPlan) -> dict[str, Any]:
    """The planning platform as plain data for the run log (complete: it can be re-simulated)."""
    return platform_to_dict(plan.platform)


def output_path(job: JobSpec, job_id: str) -> str:
    """The job's stdout file: Slurm's ``%x`` (job name) and ``%j`` (job id) filled in."""
    return job.output.replace("%x", job.name).replace("%j", job_id)


def submit_plan(plan: SubmissionPlan, commands: SlurmCommands, runlog: RunLog) -> RunRecord:
    """Submit every job of ``plan`` in dependency order and log the run."""
    record = runlog.create(
        workflow_name=plan.workflow.name,
        workflow=workflow_to_dict(plan.workflow),
        platform=platform_summary(plan),
        scheduler=plan.scheduler,
        planned_makespan=plan.planned_makespan,
        decisions=plan.decisions,
        scale=plan.scale,
        run_id=plan.run_id,
        occupancy=plan.occupancy.to_dict(),
        estimates=plan.estimates,
        planned_on=plan.planned_on,
    )
    for directory in {Path(job.output).parent for job in plan.jobs}:
        directory.mkdir(parents=True, exist_ok=True)  # Slurm fails a job whose log dir is missing
    job_ids: dict[str, str] = {}
    try:
        for job in plan.jobs:
            job_ids[job.task] = commands.sbatch(job.argv(job_ids))
    except UserFacingError as exc:
        submitted = list(job_ids.values())
        cancel_error = ""
        try:
            commands.cancel(submitted)
        except UserFacingError as cancel_exc:
            cancel_error = f"; cancelling {len(submitted)} submitted jobs failed too: " + (
                cancel_exc.one_line()
            )
        decisions = tuple(replace(d, job_id=job_ids.get(d.task)) for d in record.decisions)
        runlog.update(
            record.run_id,
            state="failed",
            decisions=decisions,
            error=f"sbatch failed after {len(submitted)} jobs: {exc.one_line()}{cancel_error}",
        )
        raise
    job_of = {job.task: job for job in plan.jobs}
    decisions = tuple(
        replace(d, job_id=job_ids[d.task], state="SUBMITTED",
                output=output_path(job_of[d.task], job_ids[d.task]))
        for d in record.decisions
    )  # fmt: skip
    return runlog.update(record.run_id, state="submitted", decisions=decisions)


@dataclass(frozen=True)
class TaskStatus:
    """What Slurm says about one task's job right now."""

    task: str
    job_id: str | None
    planned_node: str
    state: str
    node: str
    start: str
    end: str
    reason: str


def run_status(
    record: RunRecord, commands: SlurmCommands, runlog: RunLog | None = None
) -> list[TaskStatus]:
    """Per-task state from squeue (live jobs) and sacct (finished ones); logged if ``runlog``."""
    ids = list(record.job_ids)
    live = commands.queue(ids)
    accounted = commands.accounting(ids)
    statuses = []
    for d in record.decisions:
        q = live.get(d.job_id or "")
        a = accounted.get(d.job_id or "", {})
        state = (q.state if q else a.get("State", "")) or d.state
        state = state.split()[0] if state else state  # "CANCELLED by 0" -> CANCELLED
        node = (q.nodes if q else a.get("NodeList", "")) or ""
        statuses.append(
            TaskStatus(
                task=d.task,
                job_id=d.job_id,
                planned_node=d.node,
                state=state,
                node="" if node in ("None assigned", "(null)") else node,
                start=a.get("Start", ""),
                end=a.get("End", ""),
                reason=(q.reason if q else a.get("Reason", "")) or "",
            )
        )
    if runlog is not None:
        runlog.update_states(
            record.run_id,
            {
                s.task: {
                    "state": s.state,
                    "real_node": s.node or None,
                    "real_start": s.start if s.start not in ("", "Unknown", "None") else None,
                    "real_end": s.end if s.end not in ("", "Unknown", "None") else None,
                }
                for s in statuses
            },
        )
    return statuses


def cancel_run(record: RunRecord, commands: SlurmCommands, runlog: RunLog) -> list[str]:
    """Cancel every job of the run that has not finished; returns the job ids cancelled."""
    live = commands.queue(list(record.job_ids))
    pending = [j for j, q in live.items() if q.state not in FINISHED_STATES]
    commands.cancel(pending)
    runlog.update(record.run_id, state="cancelled")
    return pending
