"""A run's jobs as Slurm has them, when its record may not list them all.

A submission killed between an sbatch and its journal line, or an sbatch that timed out and was
accepted after all, leaves jobs the record does not name. Every job of a run is named
``wass-RUN-TASK`` and carries the comment token ``wass:v1:run=RUN;...``
(:mod:`wass_chat.slurm.submission`), so Slurm can be asked for them by name (squeue for the jobs
it holds, sacct for those it forgot) and the token checked where Slurm reports the comment.
:func:`reconcile` adopts the jobs found into the record; :func:`jobs_of_run` is what ``cancel``
acts on, the record's jobs and Slurm's together.

An sbatch that gave no answer (slurmctld frozen or swamped) may still be taken in later: its
request waits in the controller's socket and is served when the controller comes back, at any
time until the request's MUNGE credential expires (slurmctld refuses an expired one). Until then
a task with no job in Slurm stays ``SUBMITTING`` (:func:`may_still_be_taken`): concluding "no
job" at once would let ``resume`` submit it a second time.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import replace
from datetime import datetime, timedelta

from sim.errors import UserFacingError
from wass_chat.run_journal import journal_path, submitter_alive
from wass_chat.runlog import (
    NOT_SUBMITTED,
    SUBMITTING,
    UNSETTLED_STATES,
    Decision,
    RunLog,
    RunRecord,
    settle_submission,
)
from wass_chat.slurm.commands import NamedJob, SlurmCommands
from wass_chat.slurm.submission import job_name, run_token

SEARCH_MARGIN = timedelta(hours=1)
"""sacct is asked from this long before the run's record was created (clock skew)."""
CREDENTIAL_LIFE = 300.0
"""Seconds an sbatch's request can still be served after it began: MUNGE's default credential
time-to-live (``munged --ttl``; Slurm's ``AuthInfo=ttl=`` may ask for another)."""


def may_still_be_taken(d: Decision, now: float | None = None) -> float | None:
    """Until when (Unix time) Slurm may still take in the job of a task whose sbatch gave no
    answer; None when it no longer can (or the journal did not say when the sbatch began)."""
    if d.state != SUBMITTING or d.job_id is not None or d.sbatch_at is None:
        return None
    until = d.sbatch_at + CREDENTIAL_LIFE
    return until if (time.time() if now is None else now) < until else None


def clock(at: float) -> str:
    """A Unix time as the local wall clock (HH:MM:SS)."""
    return datetime.fromtimestamp(at).strftime("%H:%M:%S")


def sacct_since(record: RunRecord) -> str:
    """The run's creation time, less a margin, in the local time sacct's ``-S`` reads."""
    created = datetime.fromisoformat(record.created)
    return (created - SEARCH_MARGIN).astimezone().strftime("%Y-%m-%dT%H:%M:%S")


def tasks_by_name(record: RunRecord) -> dict[str, str]:
    """Job name -> task, for the names that belong to one task only."""
    named: dict[str, list[str]] = defaultdict(list)
    for d in record.decisions:
        named[job_name(record.run_id, d.task)].append(d.task)
    return {name: tasks[0] for name, tasks in named.items() if len(tasks) == 1}


def slurm_jobs_of_run(record: RunRecord, commands: SlurmCommands) -> dict[str, list[NamedJob]]:
    """Task -> every job Slurm has under that task's job name whose comment, where Slurm
    reports one, carries the run's token (oldest first)."""
    names = tasks_by_name(record)
    token = run_token(record.run_id)
    found: dict[str, list[NamedJob]] = defaultdict(list)
    for job in commands.jobs_named(sorted(names), sacct_since(record)):
        if job.name in names and (not job.comment or token in job.comment):
            found[names[job.name]].append(job)
    return dict(found)


def needs_reconciling(record: RunRecord) -> bool:
    """Whether Slurm may hold jobs of the run that its record does not list."""
    return record.state in UNSETTLED_STATES and (
        record.state != "partly submitted" or any(d.state == SUBMITTING for d in record.decisions)
    )


def journal_left_over(record: RunRecord, runlog: RunLog) -> bool:
    """Whether a settled run still has its journal (the final rewrite failed, a full disk):
    the next write of its record folds it in."""
    path = journal_path(runlog.path(record.run_id))
    return path.exists() and not submitter_alive(path)


def reconcile(record: RunRecord, commands: SlurmCommands, runlog: RunLog) -> RunRecord:
    """The run with every job Slurm has for it adopted into its record (once its submitter is
    gone): a task with no job id and a job in Slurm gets that job's id; a task whose sbatch
    gave no answer and that Slurm has no job for is ``NOT_SUBMITTED`` once Slurm can no longer
    take it in (:func:`may_still_be_taken`; until then it stays ``SUBMITTING``). The record is then
    settled: ``submitted`` if every task has its job, else ``partly submitted`` saying how the
    submission ended. Raises what Slurm raises when it does not answer (nothing changed)."""
    path = journal_path(runlog.path(record.run_id))
    if record.state == "submitting" or submitter_alive(path):
        return record  # still going: its own journal will say
    found = slurm_jobs_of_run(record, commands)
    decisions = []
    learned: list[str] = []  # what this look found out about sbatches that gave no answer
    for d in record.decisions:
        jobs = found.get(d.task, [])
        if d.job_id is None and jobs:
            job = jobs[0]
            output = d.output.replace("%j", job.job_id) if d.output else None
            if d.state == SUBMITTING:
                learned.append(f"Slurm has {d.task}'s job after all: {job.job_id}")
            d = replace(d, job_id=job.job_id, state=job.state or "SUBMITTED", output=output)
        elif (until := may_still_be_taken(d)) is not None:
            learned.append(
                f"Slurm has no job of {d.task} yet (it may still take its sbatch in until "
                f"{clock(until)})"
            )
        elif d.job_id is None and d.state in (SUBMITTING, "PLANNED"):
            if d.state == SUBMITTING:
                learned.append(f"Slurm has no job of {d.task}")
            d = replace(d, state=NOT_SUBMITTED)
        decisions.append(d)
    submitted = sum(1 for d in decisions if d.job_id)
    learned = [line for line in learned if line not in (record.error or "")]  # said once
    error = "; ".join([record.error, *learned]) if record.error else record.error
    if submitted == len(decisions):
        state = "submitted"
    elif submitted == 0 and not any(may_still_be_taken(d) for d in decisions):
        state = "failed"
        error = error or "the submission was interrupted; Slurm has no job of it"
    else:
        state = "partly submitted"
        if record.state == "interrupted":
            error = (
                f"the submission was interrupted: {submitted} of {len(decisions)} jobs "
                "are in Slurm, found by job name"
            )
    return settle_submission(
        runlog, record.run_id, decisions=tuple(decisions), state=state, error=error
    )


def jobs_of_run(record: RunRecord, commands: SlurmCommands) -> dict[str, NamedJob | None]:
    """Job id -> what Slurm says of it, for every job of the run: the record's and those Slurm
    has under the run's job names (None: a recorded job Slurm no longer knows)."""
    every: dict[str, NamedJob | None] = dict.fromkeys(record.job_ids)
    for jobs in slurm_jobs_of_run(record, commands).values():
        for job in jobs:
            every[job.job_id] = job
    return every


def reconcile_unsettled(runlog: RunLog, commands: SlurmCommands) -> str:
    """Reconcile every run of the log whose record may not list all its jobs (``runs`` does
    before listing); returns a note when Slurm did not answer (those runs listed as logged)."""
    for record in runlog.scan()[0]:
        if needs_reconciling(record):
            try:
                reconcile(record, commands, runlog)
            except UserFacingError as exc:
                return f"runs not reconciled with Slurm, shown as logged: {exc.one_line()}"
    return ""
