"""Resuming a run whose submission stopped part-way: the rest of the very plan approved.

A submission that stopped (a frozen slurmctld that did not answer an sbatch, a submit limit, a
process killed) leaves a run ``partly submitted`` or ``interrupted``: its record lists the jobs
Slurm has and keeps the plan the person approved (``approved_plan``, the document whose SHA-256
is ``plan_digest``, :mod:`wass_chat.slurm.plan_digest`). ``wass-chat resume RUN`` submits only
jobs of that document, once it is checked (:func:`approved_jobs`): it hashes to the digest
approved, it is this run's, its workflow is the record's, its tasks and nodes the record's; a
record that fails any check is refused before anything is written or submitted. Then the record
is reconciled with Slurm (an sbatch that timed out may have been taken in after all: adopted,
never submitted twice; while Slurm may still take it in, the resume is refused), and the jobs of
the tasks that have none are shown with their digest (:func:`resumption_digest`) and, once a
person approved them, submitted in the plan's order under the same journal as a first
submission: each waits for its parents still queued or running, a parent that completed is no
longer waited for, and a parent that failed or was cancelled makes the resume refuse (its
children could never run). Nothing is re-planned.

Who can rewrite the run log can also run sbatch as its owner, so the checks are not a privilege
boundary: they make a record changed since its approval (by hand, by another tool, by a bad
disk) fail loudly instead of submitting jobs nobody approved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sim.errors import InputError
from sim.wfformat import read_workflow
from wass_chat.runlog import RunLog, RunRecord, settle_submission
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.plan_digest import (
    SHORT_DIGEST,
    PlanMismatch,
    canonical_json,
    content_hash,
    sha256_hex,
)
from wass_chat.slurm.recovery import clock, may_still_be_taken, needs_reconciling, reconcile
from wass_chat.slurm.runs import FINISHED_STATES, journaled_submission

RESUMABLE = ("partly submitted", "interrupted")


class ApprovedPlanBroken(PlanMismatch):
    """The record's approved plan is missing, or no longer the one approved: nothing is
    resumed."""


@dataclass(frozen=True)
class SavedJob:
    """A job of the approved plan: its sbatch arguments with ``{job:TASK}`` placeholders for
    its parents' job ids. :meth:`argv` fills in those given, drops the parents in ``settled``
    (they completed: no longer waited for) and keeps the others' placeholders."""

    task: str
    name: str
    parents: tuple[str, ...]
    template: tuple[str, ...]
    settled: frozenset[str] = frozenset()

    def argv(self, job_ids: Mapping[str, str] | None = None) -> list[str]:
        ids = [
            (job_ids or {}).get(p, f"{{job:{p}}}") for p in self.parents if p not in self.settled
        ]
        args: list[str] = []
        for word in self.template:
            if word.startswith("--dependency=afterok:"):
                if ids:
                    args.append(f"--dependency=afterok:{':'.join(ids)}")
            elif word == "--kill-on-invalid-dep=yes":
                if ids:
                    args.append(word)
            else:
                args.append(word)
        return args


def _refuse(run: str, why: str) -> ApprovedPlanBroken:
    return ApprovedPlanBroken(
        f"run {run}", [f"{why}: nothing was resumed; `wass-chat cancel {run}` ends the run"]
    )


def _workflow_hash(workflow: dict[str, Any] | str) -> str:
    """The content hash of the record's workflow (a document, or the file it was read from)."""
    if isinstance(workflow, str):
        return content_hash(read_workflow(workflow))
    return sha256_hex(canonical_json(workflow))


def approved_jobs(record: RunRecord) -> tuple[SavedJob, ...]:
    """The jobs of the plan the person approved, in submission order, once the record's
    ``approved_plan`` is checked: present, hashing to ``plan_digest``, this run's, of the
    record's workflow as it is now, with the record's tasks on the record's nodes. Raises
    :class:`ApprovedPlanBroken` (one line) for a record that fails any of them."""
    run, doc, digest = record.run_id, record.approved_plan, record.plan_digest
    if not doc or not digest:
        raise _refuse(
            run, "no approved plan is recorded (submitted without a digest, or by an older version)"
        )
    actual = sha256_hex(canonical_json(doc))
    if actual != digest:
        raise _refuse(
            run,
            f"its recorded plan (digest {actual[:SHORT_DIGEST]}) is not the "
            f"plan approved (digest {digest[:SHORT_DIGEST]}): the record was changed "
            "since",
        )
    try:
        if doc["run_id"] != run:
            raise _refuse(run, f"its approved plan is run {doc['run_id']}'s")
        try:
            now = _workflow_hash(record.workflow)
        except (OSError, InputError) as exc:
            raise _refuse(run, f"its workflow cannot be read ({exc})") from exc
        if now != doc["workflow"]["sha256"]:
            raise _refuse(run, "its workflow changed since the plan was approved")
        jobs = tuple(
            SavedJob(
                str(j["task"]),
                _job_name(j["sbatch"]),
                tuple(map(str, j["after"])),
                tuple(map(str, j["sbatch"])),
            )
            for j in doc["jobs"]
        )
        nodes = {str(j["task"]): str(j["node"]) for j in doc["jobs"]}
    except (KeyError, TypeError, ValueError) as exc:
        raise _refuse(run, f"its approved plan is malformed ({exc!r})") from exc
    if nodes != {d.task: d.node for d in record.decisions} or len(nodes) != len(jobs):
        raise _refuse(run, "its tasks or nodes differ from the plan approved")
    return jobs


def _job_name(argv: list[Any]) -> str:
    """The ``--job-name`` value of an approved job's sbatch arguments."""
    words = [str(w) for w in argv]
    return words[words.index("--job-name") + 1]


@dataclass(frozen=True)
class Resumption:
    """What resuming a run would submit: the approved jobs of its tasks without a job, and
    the job ids of the parents they still wait for."""

    record: RunRecord
    jobs: tuple[SavedJob, ...]
    waits_for: dict[str, str]

    def shown(self) -> list[tuple[str, list[str]]]:
        """Each job to submit with its sbatch arguments as shown for approval (the parents
        submitted by this resume as ``{job:TASK}``)."""
        return [(job.task, job.argv(self.waits_for)) for job in self.jobs]


def resumption_digest(resume: Resumption) -> str:
    """SHA-256 of what a person approves when resuming: the run, its plan's digest and every
    job to submit with its sbatch arguments as shown."""
    return sha256_hex(
        canonical_json(
            {
                "run_id": resume.record.run_id,
                "plan_digest": resume.record.plan_digest,
                "jobs": resume.shown(),
            }
        )
    )


def resumption(record: RunRecord, commands: SlurmCommands, runlog: RunLog) -> Resumption:
    """The rest of ``record``'s approved plan, after reconciling the record with Slurm; raises
    :class:`~sim.errors.InputError` when the run cannot be resumed (still submitting, not
    stopped part-way, an approved plan that fails its checks, a parent that ended badly) and
    what Slurm raises when it does not answer (nothing changed)."""
    run = record.run_id
    if record.state == "submitting":
        raise InputError(f"run {run}", ["it is still being submitted: resume it once that ended"])
    approved_jobs(record)  # before anything is written: a changed record is refused as it is
    if needs_reconciling(record):
        record = reconcile(record, commands, runlog)
    if record.state not in RESUMABLE:
        raise InputError(
            f"run {run}",
            [
                f"it is {record.state} ({record.jobs_line}): only a partly submitted or "
                "interrupted run is resumed"
            ],
        )
    waiting = {d.task: until for d in record.decisions if (until := may_still_be_taken(d))}
    if waiting:  # resubmitting it now could double it
        raise InputError(
            f"run {run}",
            [
                f"task {task}'s sbatch gave no answer and Slurm may still take it in until "
                f"{clock(until)}: resume after that (`wass-chat status {run}` shows if it did)"
                for task, until in sorted(waiting.items())
            ],
        )
    saved = approved_jobs(record)
    jobs = {d.task: d.job_id for d in record.decisions if d.job_id}
    todo = [j for j in saved if j.task not in jobs]
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
            problems.append(
                f"task {parent}'s job {jobs[parent]} ended {state}, so "
                f"{', '.join(children)} could never run"
            )
        waits_for[parent] = jobs[parent]
    if problems:
        raise InputError(f"run {run}", [*problems, f"`wass-chat cancel {run}` ends the run"])
    settled = frozenset(p for p in jobs if p not in waits_for)
    return Resumption(record, tuple(replace(j, settled=settled) for j in todo), waits_for)


def _states(commands: SlurmCommands, job_ids: list[str]) -> dict[str, str]:
    """Job id -> its Slurm state (squeue while the controller holds it, else sacct)."""
    states = {j: q.state for j, q in commands.queue(job_ids).items()}
    rest = [j for j in job_ids if j not in states]
    for job_id, row in commands.accounting(rest).items():
        states[job_id] = (row.get("State") or "").split(" ")[0]
    return states


def resume_run(
    resume: Resumption, approved_digest: str | None, commands: SlurmCommands, runlog: RunLog
) -> RunRecord:
    """Submit ``resume``'s jobs (journaled as a first submission is) if they are the ones
    whose :func:`resumption_digest` a person approved, and return the run as logged:
    ``submitted`` once every task has its job; raises :class:`PlanMismatch` (nothing
    submitted) for any other digest and :class:`~wass_chat.slurm.runs.PartlySubmitted` if an
    sbatch stops it again."""
    record = resume.record
    actual = resumption_digest(resume)
    if approved_digest != actual:
        raise PlanMismatch(
            f"run {record.run_id}",
            [
                f"the jobs to resume (digest {actual[:SHORT_DIGEST]}) are not the ones approved "
                f"(digest {str(approved_digest)[:SHORT_DIGEST]}); nothing was submitted"
            ],
        )
    if not resume.jobs:
        return settle_submission(runlog, record.run_id, state="submitted", error=None)
    todo = {j.task for j in resume.jobs}
    decisions = tuple(
        replace(d, state="PLANNED") if d.task in todo else d for d in record.decisions
    )
    restart = replace(record, decisions=decisions, error=None)
    return journaled_submission(restart, resume.jobs, commands, runlog, resume.waits_for)
