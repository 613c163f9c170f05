"""Resuming a run whose submission stopped part-way: the rest of the very plan approved.

A submission that stopped (a frozen slurmctld that did not answer an sbatch, a submit limit, a
process killed) leaves a run ``partly submitted`` or ``interrupted``: its record lists the jobs
Slurm has, and the plan's jobs were saved beside it as approved (``RUN.plan``,
:func:`~wass_chat.slurm.runs.save_plan`). ``wass-chat resume RUN`` first reconciles the record
with Slurm (an sbatch that timed out may have been taken in after all: adopted, never submitted
twice), then submits, in the plan's order and under the same journal as a first submission,
the jobs of the tasks that have none: each waits for its parents still queued or running, a
parent that completed is no longer waited for, and a parent that failed or was cancelled makes
the resume refuse (its children could never run). Nothing is re-planned: the sbatch arguments
are the saved ones.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sim.errors import InputError
from wass_chat.runlog import RunLog, RunRecord, settle_submission
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.recovery import needs_reconciling, reconcile
from wass_chat.slurm.runs import (
    FINISHED_STATES,
    SavedJob,
    journaled_submission,
    saved_plan,
)

RESUMABLE = ("partly submitted", "interrupted")


@dataclass(frozen=True)
class Resumption:
    """What resuming a run would submit: the saved jobs of its tasks without a job, and the
    job ids of the parents they still wait for."""

    record: RunRecord
    jobs: tuple[SavedJob, ...]
    waits_for: dict[str, str]


def resumption(record: RunRecord, commands: SlurmCommands, runlog: RunLog) -> Resumption:
    """The rest of ``record``'s plan, after reconciling the record with Slurm; raises
    :class:`~sim.errors.InputError` when the run cannot be resumed (still submitting, not
    stopped part-way, no saved plan, a parent that ended badly) and what Slurm raises when it
    does not answer (nothing changed)."""
    run = record.run_id
    if record.state == "submitting":
        raise InputError(f"run {run}", ["it is still being submitted: resume it once that ended"])
    if needs_reconciling(record):
        record = reconcile(record, commands, runlog)
    if record.state not in RESUMABLE:
        raise InputError(f"run {run}", [
            f"it is {record.state} ({record.jobs_line}): only a partly submitted or interrupted "
            "run is resumed"
        ])  # fmt: skip
    saved = saved_plan(runlog, run)
    if saved is None or {j.task for j in saved} != {d.task for d in record.decisions}:
        raise InputError(f"run {run}", [
            f"its plan was not saved when it was submitted (an older version): `wass-chat "
            f"cancel {run}` ends it"
        ])  # fmt: skip
    jobs = {d.task: d.job_id for d in record.decisions if d.job_id}
    todo = tuple(j for j in saved if j.task not in jobs)
    parents = sorted({p for j in todo for p in j.parents if p in jobs})
    states = _states(commands, [jobs[p] for p in parents])
    problems = []
    waits_for: dict[str, str] = {}
    for parent in parents:
        state = states.get(jobs[parent], "")
        if state == "COMPLETED":
            continue
        if state in FINISHED_STATES:
            children = sorted(j.task for j in todo if parent in j.parents)
            problems.append(f"task {parent}'s job {jobs[parent]} ended {state}, so "
                            f"{', '.join(children)} could never run")  # fmt: skip
        waits_for[parent] = jobs[parent]
    if problems:
        raise InputError(f"run {run}", [*problems, f"`wass-chat cancel {run}` ends the run"])
    return Resumption(record, todo, waits_for)


def _states(commands: SlurmCommands, job_ids: list[str]) -> dict[str, str]:
    """Job id -> its Slurm state (squeue while the controller holds it, else sacct)."""
    states = {j: q.state for j, q in commands.queue(job_ids).items()}
    rest = [j for j in job_ids if j not in states]
    for job_id, row in commands.accounting(rest).items():
        states[job_id] = (row.get("State") or "").split(" ")[0]
    return states


def resume_run(resume: Resumption, commands: SlurmCommands, runlog: RunLog) -> RunRecord:
    """Submit ``resume``'s jobs (journaled as a first submission is) and return the run as
    logged: ``submitted`` once every task has its job; raises
    :class:`~wass_chat.slurm.runs.PartlySubmitted` if an sbatch stops it again."""
    record = resume.record
    if not resume.jobs:
        return settle_submission(runlog, record.run_id, state="submitted", error=None)
    todo = {j.task for j in resume.jobs}
    decisions = tuple(replace(d, state="PLANNED") if d.task in todo else d
                      for d in record.decisions)  # fmt: skip
    restart = replace(record, decisions=decisions, error=None)
    return journaled_submission(restart, resume.jobs, commands, runlog, resume.waits_for)
