"""Submitting a planned run, following it, cancelling it: Slurm plus the decision log.

Submission is journaled: the run's record is on disk before the first sbatch, and each job id
the moment sbatch returns it (:mod:`wass_chat.run_journal`). If an sbatch is refused (a submit
limit, a bad request) or does not answer, the submission stops there and the jobs already
submitted are kept, not cancelled: cancelling is an action on the cluster the person did not
ask for, and they may want the jobs. The run is logged ``partly submitted: K of N jobs`` and
the error says so and names ``wass-chat cancel RUN``. An sbatch that did not answer may still
have been accepted (a frozen slurmctld takes the request in when it resumes): Slurm is asked for
the job by its name before the run is logged, and ``status``/``runs``/``cancel`` ask again
(:mod:`wass_chat.slurm.recovery`) while the record is not settled.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sim.atomic_files import OutputError
from sim.errors import InputError, ServiceUnavailable, UserFacingError
from sim.platforms import platform_to_dict
from sim.wfformat import workflow_to_dict
from wass_chat.run_journal import SubmissionJournal
from wass_chat.runlog import (
    NOT_SUBMITTED,
    RunLog,
    RunRecord,
    begin_submission,
    settle_submission,
)
from wass_chat.slurm.availability import SlurmAway
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands
from wass_chat.slurm.recovery import (
    CREDENTIAL_LIFE,
    clock,
    jobs_of_run,
    journal_left_over,
    needs_reconciling,
    reconcile,
    sacct_since,
)
from wass_chat.slurm.submission import SubmissionPlan

FINISHED_STATES = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "OUT_OF_MEMORY",
        "NODE_FAIL",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
    }
)


class Sbatchable(Protocol):
    """One job to submit: its task, job name and sbatch arguments (parents' ids filled in)."""

    @property
    def task(self) -> str: ...

    @property
    def name(self) -> str: ...

    def argv(self, job_ids: Mapping[str, str] | None = None) -> list[str]: ...


class PartlySubmitted(UserFacingError):
    """The submission stopped before its last job; the jobs submitted are kept and logged."""

    def __init__(self, record: RunRecord) -> None:
        self.record = record
        kept = len(record.job_ids)
        run = record.run_id
        then = (
            f" The {kept} submitted jobs are kept: `wass-chat cancel {run}` cancels them, "
            f"`wass-chat resume {run}` submits the rest."
            if kept
            else f" No job was submitted: `wass-chat resume {run}` submits them."
        )
        super().__init__(
            f"run {record.run_id} partly submitted: {record.jobs_line}; {record.error}.{then}"
        )


class DemoPlatformPlan(InputError):
    """A plan made on the embedded demo platform: its nodes are not the cluster's, so it is
    never submitted to Slurm (a demo plan is for looking at)."""

    kind = "submission"


def refuse_demo_platform(plan: SubmissionPlan) -> None:
    """Raise :class:`DemoPlatformPlan` when ``plan`` was made on the embedded demo platform."""
    from sim.demo import demo_platform

    if plan.platform == demo_platform():
        raise DemoPlatformPlan(
            f"run {plan.run_id}",
            [
                f"it was planned on the embedded demo platform ({plan.platform.name}), not the "
                "cluster's nodes: a demo plan is never submitted to Slurm (plan it on the cluster: "
                "--platform from-slurm)"
            ],
        )


class RecordNotRewritten(UserFacingError):
    """Every job went in and is journaled, but the run record could not be rewritten."""

    def __init__(self, run_id: str, jobs: int, cause: OutputError) -> None:
        super().__init__(
            f"run {run_id}: {jobs} jobs submitted and journaled in "
            f"{run_id}.jobs, but the run record could not be rewritten "
            f"({cause}); status, runs and cancel read the journal"
        )


def platform_summary(plan: SubmissionPlan) -> dict[str, Any]:
    """The planning platform as plain data for the run log (complete: it can be re-simulated)."""
    return platform_to_dict(plan.platform)


def planned_record(
    plan: SubmissionPlan, approved: tuple[str, dict[str, Any]] | None = None
) -> RunRecord:
    """The record of ``plan`` before anything is submitted; each decision's output file with
    Slurm's ``%x`` (job name) filled in, ``%j`` (job id) once sbatch returns it
    (:func:`wass_chat.runlog.with_journal`); ``approved``: the digest a person approved and the
    document it hashes, kept as they were."""
    job_of = {job.task: job for job in plan.jobs}
    decisions = tuple(
        replace(d, output=job_of[d.task].output.replace("%x", job_of[d.task].name))
        for d in plan.decisions
    )
    return RunRecord(
        run_id=plan.run_id,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        workflow_name=plan.workflow.name,
        workflow=workflow_to_dict(plan.workflow),
        platform=platform_summary(plan),
        scheduler=plan.scheduler,
        planned_makespan=plan.planned_makespan,
        decisions=decisions,
        scale=plan.scale,
        occupancy=plan.occupancy.to_dict(),
        estimates=plan.estimates,
        planned_on=plan.planned_on,
        plan_digest=approved[0] if approved else None,
        approved_plan=approved[1] if approved else None,
    )


def submit_plan(
    plan: SubmissionPlan,
    commands: SlurmCommands,
    runlog: RunLog,
    approved: tuple[str, dict[str, Any]] | None = None,
) -> RunRecord:
    """Submit every job of ``plan`` in dependency order, journaling each job id as sbatch
    returns it; returns the run as logged (``submitted``), with ``approved`` (the digest and
    the document approved, :func:`wass_chat.slurm.plan_digest.submit_approved`'s).

    Raises :class:`DemoPlatformPlan` (nothing written, nothing submitted) for a plan made on
    the embedded demo platform, :class:`PartlySubmitted` when an sbatch was refused or did not
    answer (the jobs before it kept, logged), :class:`~sim.atomic_files.OutputError` when
    the journal could not be written (nothing is submitted without it, so the record names
    every job sbatch may have made), :class:`RecordNotRewritten` when only the final rewrite
    failed.
    """
    refuse_demo_platform(plan)
    record = planned_record(plan, approved)
    for directory in {Path(job.output).parent for job in plan.jobs}:
        try:  # Slurm fails a job whose log dir is missing
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(directory, exc) from exc
    return journaled_submission(record, plan.jobs, commands, runlog)


def journaled_submission(
    record: RunRecord,
    jobs: Sequence[Sbatchable],
    commands: SlurmCommands,
    runlog: RunLog,
    known: Mapping[str, str] | None = None,
) -> RunRecord:
    """Submit ``jobs`` of ``record`` under its journal (``known``: job ids of parents already
    in Slurm), then settle the record; what :func:`submit_plan` and ``resume`` share."""
    with begin_submission(runlog, record) as journal:
        try:
            stop = _submit_jobs(jobs, commands, journal, record, known or {})
            if stop is None:
                journal.done()
            else:
                journal.stopped(stop)
        except OutputError as exc:  # only where the reserved room was not enough (copy-on-write)
            raise UserFacingError(
                f"run {record.run_id}: submission stopped, its journal could not be written "
                f"({exc}); `wass-chat status {record.run_id}` finds its jobs in Slurm"
            ) from exc
    try:
        logged = settle_submission(runlog, record.run_id, **_final(runlog.get(record.run_id)))
    except OutputError as exc:
        if stop is None:
            raise RecordNotRewritten(record.run_id, len(record.decisions), exc) from exc
        raise
    if stop is not None:
        raise PartlySubmitted(logged)
    return logged


def _final(record: RunRecord) -> dict[str, Any]:
    """The settled state and task states of a journaled run."""
    decisions = tuple(
        d if d.job_id or d.state != "PLANNED" else replace(d, state=NOT_SUBMITTED)
        for d in record.decisions
    )
    return {"decisions": decisions, "state": record.state}


def _submit_jobs(
    jobs: Sequence[Sbatchable],
    commands: SlurmCommands,
    journal: SubmissionJournal,
    record: RunRecord,
    known: Mapping[str, str],
) -> str | None:
    """The sbatch loop: each task journaled before its sbatch and its job id the moment sbatch
    returns it. Returns None when every job went in, else why the loop stopped. A journal line
    that cannot be written raises :class:`OutputError` (the loop stops: nothing unrecorded)."""
    job_ids: dict[str, str] = dict(known)
    total = len(jobs)
    for number, job in enumerate(jobs, 1):
        journal.attempting(job.task)
        try:
            job_id = commands.sbatch(job.argv(job_ids))
        except (SlurmCommandError, SlurmAway) as exc:  # refused, or never started: no job
            journal.refused(job.task)
            return f"sbatch of job {number} of {total} ({job.task}) failed: {exc.one_line()}"
        except ServiceUnavailable as exc:  # no answer: Slurm may have taken it in
            return _unanswered(job, number, total, exc, commands, journal, record)
        journal.submitted(job.task, job_id)
        job_ids[job.task] = job_id
    return None


def _unanswered(
    job: Sbatchable,
    number: int,
    total: int,
    exc: ServiceUnavailable,
    commands: SlurmCommands,
    journal: SubmissionJournal,
    record: RunRecord,
) -> str:
    """Why the loop stopped at an sbatch that did not answer, after asking Slurm (once) for a
    job of that name; a job found is journaled."""
    said = f"sbatch of job {number} of {total} ({job.task}) did not answer ({exc.one_line()})"
    try:
        found = [
            j for j in commands.jobs_named([job.name], sacct_since(record)) if j.name == job.name
        ]
    except UserFacingError as again:
        return (
            f"{said}; Slurm did not answer when asked for it either ({again.one_line()}): "
            "whether it took the job in is not known yet, `wass-chat status "
            f"{record.run_id}` asks again"
        )
    if not found:
        until = clock(time.time() + CREDENTIAL_LIFE)
        return (
            f"{said}; Slurm, asked by job name, has no such job yet: it may still take it in "
            f"until {until}, `wass-chat status {record.run_id}` asks again"
        )
    journal.submitted(job.task, found[0].job_id)
    return f"{said}; Slurm had taken it in as job {found[0].job_id}"


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
    """Per-task state from squeue (live jobs) and sacct (finished ones); logged if ``runlog``
    (a run whose record may not list every job it has in Slurm is reconciled first)."""
    if runlog is not None and needs_reconciling(record):
        record = reconcile(record, commands, runlog)
    elif runlog is not None and journal_left_over(record, runlog):
        record = settle_submission(runlog, record.run_id)
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


def unfinished_jobs(record: RunRecord, commands: SlurmCommands, runlog: RunLog) -> list[str]:
    """The job ids of the run that have not finished: those its record lists and those Slurm
    has under its job names (an interrupted submission's), in id order; cancels nothing.
    Refuses while a process is still submitting the run (its next jobs would be missed)."""
    if record.state == "submitting":
        raise UserFacingError(
            f"run {record.run_id} is still being submitted; cancel it once the submission has ended"
        )
    if needs_reconciling(record):
        record = reconcile(record, commands, runlog)
    named = jobs_of_run(record, commands)
    live = commands.queue([j for j, found in named.items() if found is None])
    return sorted(
        {j for j, q in live.items() if q.state not in FINISHED_STATES}
        | {
            j
            for j, found in named.items()
            if found is not None and found.live and found.state not in FINISHED_STATES
        },
        key=int,
    )


def cancel_run(
    record: RunRecord,
    commands: SlurmCommands,
    runlog: RunLog,
    only: Collection[str] | None = None,
) -> list[str]:
    """Cancel every job of the run that has not finished (:func:`unfinished_jobs`), or only
    those of them among ``only`` (the jobs a person approved cancelling); returns the job ids
    cancelled."""
    pending = unfinished_jobs(record, commands, runlog)
    if only is not None:
        allowed = set(only)
        pending = [j for j in pending if j in allowed]
    commands.cancel(pending)
    runlog.update(record.run_id, state="cancelled")
    return pending
