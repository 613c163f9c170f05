"""The durable decision log: every submitted (or attempted) run and each placement decision.

One JSON file per run under ``Settings().runs_dir`` (``<run_id>.json``), written atomically, so a
crash never leaves half a record and other tools (reports, the agent) can read the directory
without locks. Records are frozen dataclasses; the JSON layout is their field names.

A submission writes its record (fsync'd) before the first sbatch, in state ``submitting``, and
journals each job id the moment sbatch returns it (:mod:`wass_chat.run_journal`); reading a record
merges its journal, so a run whose submitter was killed reads ``interrupted`` with every job it
journaled. The record is then rewritten with job ids (``submitted``, or ``partly submitted`` when
an sbatch was refused or did not answer), and with per-task Slurm states by ``update_states``;
once every job ended, with ``completed`` or ``failed`` and the knowledge-base case it became
(``learned``, see :mod:`wass_chat.learn`). A record that cannot be read is reported by
:meth:`RunLog.scan` and never hides the others.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sim.atomic_files import write_atomic
from sim.errors import InputError, NoSuchName
from wass_chat.run_journal import JournalState, SubmissionJournal, journal_path, read_journal

RUNLOG_VERSION = 1
SUBMITTING = "SUBMITTING"
"""A task's state while its sbatch started and returned no job id: Slurm may hold its job."""
NOT_SUBMITTED = "NOT_SUBMITTED"
"""A task whose job was never submitted (the submission stopped before it, or Slurm, asked by
job name, had no job of an sbatch that did not answer)."""
UNSETTLED_STATES = frozenset({"submitting", "interrupted", "partly submitted"})
"""Run states whose record may not list every job Slurm has for the run: looked up by job name
(:mod:`wass_chat.slurm.recovery`) before they are shown or cancelled."""


class UnknownRunError(NoSuchName):
    """A run id with no record in the decision log, refused with the nearest logged ones."""

    def __init__(self, run_id: str, runs_dir: Path) -> None:
        known = [path.stem for path in runs_dir.glob("*.json")] if runs_dir.is_dir() else []
        super().__init__("run", run_id, known, f"in {runs_dir}")


@dataclass(frozen=True)
class Decision:
    """Where one task was placed, why, and what Slurm did with it.

    ``alternatives`` maps other candidate nodes to the scheduler's predicted finish time (or the
    predicted makespan) had the task gone there; it may be empty. ``evidence`` holds whatever
    the scheduler or agent offered as the reason (ranks, retrieved cases, scores).
    """

    task: str
    node: str
    job_id: str | None = None
    planned_start: float = 0.0
    planned_end: float = 0.0
    alternatives: dict[str, float] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    state: str = "PLANNED"
    """Last Slurm state seen (PENDING, RUNNING, COMPLETED...), or PLANNED before submission."""
    real_node: str | None = None
    """The node Slurm actually ran the job on, once known."""
    real_start: str | None = None
    real_end: str | None = None
    output: str | None = None
    """The job's standard output file (``--scale`` jobs stamp their times there); Slurm's ``%j``
    in it until the job id is known."""
    sbatch_at: float | None = None
    """For a ``SUBMITTING`` task (its sbatch gave no answer): the Unix time that sbatch began,
    from the journal (:func:`wass_chat.slurm.recovery.may_still_be_taken`)."""


@dataclass(frozen=True)
class RunRecord:
    """One workflow run: what was planned, on which platform, and each task's decision.

    ``workflow`` is the WfFormat JSON document (a dict) or the path it was read from;
    ``platform`` is a plain dict description of the nodes used for planning.
    """

    run_id: str
    created: str
    workflow_name: str
    workflow: dict[str, Any] | str
    platform: dict[str, Any]
    scheduler: str
    planned_makespan: float | None
    decisions: tuple[Decision, ...]
    state: str = "planned"
    """``planned`` (never submitted), ``submitting`` (sbatch running; ``interrupted`` once
    its process is gone), ``submitted`` (every job), ``partly submitted`` (``error`` says why the
    rest were not), ``completed`` (every job ended COMPLETED), ``failed`` (nothing left queued,
    some job or sbatch failed), ``cancelled``."""
    scale: float | None = None
    """Sleep scale when tasks were replaced by ``sleep runtime*scale`` (``--scale``)."""
    error: str | None = None
    version: int = RUNLOG_VERSION
    occupancy: dict[str, Any] | None = None
    """What other jobs held when the plan was made (``Occupancy.to_dict()``; None: unknown)."""
    estimates: str = ""
    """How the plan's runtimes were estimated: ``workflow`` (as stated) or the knowledge
    base's cases it used (``kb: ...``); empty for runs logged before it was recorded."""
    learned: str | None = None
    """The knowledge-base case this run became once it ended (None: not learned yet)."""
    planned_on: dict[str, dict[str, float]] | None = None
    """What a plan on the knowledge base's estimates assumed: ``runtimes`` (task -> seconds on
    the reference machine) and ``slowdowns`` (node -> factor); None: the stated runtimes.
    Re-simulating the run (explanations, what-ifs) uses them, as the plan did."""
    plan_digest: str | None = None
    """The digest of the plan the person approved (:mod:`wass_chat.slurm.plan_digest`); None
    for runs submitted before it was recorded."""
    approved_plan: dict[str, Any] | None = None
    """The document that digest is the SHA-256 of: every job's node, command and complete
    sbatch arguments as approved. What Slurm then did is in each decision's ``real_*``."""

    @property
    def job_ids(self) -> tuple[str, ...]:
        return tuple(d.job_id for d in self.decisions if d.job_id)

    @property
    def jobs_line(self) -> str:
        """``40 jobs``, or ``25 of 40 jobs`` for a run not every task of which was submitted."""
        if self.state == "planned" or len(self.job_ids) == len(self.decisions):
            return f"{len(self.job_ids)} jobs"
        return f"{len(self.job_ids)} of {len(self.decisions)} jobs"

    @property
    def moved(self) -> tuple[tuple[str, str, str], ...]:
        """(task, approved node, node Slurm ran it on) of every task Slurm placed elsewhere."""
        return tuple(
            (d.task, d.node, d.real_node)
            for d in self.decisions
            if d.real_node and d.real_node != d.node
        )

    def decision(self, task: str) -> Decision:
        for d in self.decisions:
            if d.task == task:
                return d
        raise KeyError(task)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> RunRecord:
        decisions = tuple(Decision(**d) for d in doc.get("decisions", ()))
        return cls(**{**doc, "decisions": decisions})


def new_run_id(now: datetime | None = None) -> str:
    """A sortable, unique id: UTC timestamp plus 4 random hex digits (``20260121-101502-a3f9``)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(2)}"


class RunLog:
    """The run records under one directory (``Settings().runs_dir``)."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = Path(runs_dir)

    def path(self, run_id: str) -> Path:
        return self.runs_dir / f"{run_id}.json"

    def create(
        self,
        workflow_name: str,
        workflow: dict[str, Any] | str,
        platform: dict[str, Any],
        scheduler: str,
        planned_makespan: float | None,
        decisions: tuple[Decision, ...],
        scale: float | None = None,
        run_id: str | None = None,
        occupancy: dict[str, Any] | None = None,
        estimates: str = "",
        planned_on: dict[str, dict[str, float]] | None = None,
    ) -> RunRecord:
        """Record a new run in state ``planned`` and return it."""
        record = RunRecord(
            run_id=run_id or new_run_id(),
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            workflow_name=workflow_name,
            workflow=workflow,
            platform=platform,
            scheduler=scheduler,
            planned_makespan=planned_makespan,
            decisions=decisions,
            scale=scale,
            occupancy=occupancy,
            estimates=estimates,
            planned_on=planned_on,
        )
        self.save(record)
        return record

    def save(self, record: RunRecord) -> None:
        """Write ``record`` atomically (replacing any earlier version)."""
        write_atomic(self.path(record.run_id), json.dumps(record.to_dict(), indent=1))

    def get(self, run_id: str) -> RunRecord:
        path = self.path(run_id)
        if not path.is_file():
            raise UnknownRunError(run_id, self.runs_dir)
        try:
            record = RunRecord.from_dict(json.loads(path.read_text()))
        except (OSError, ValueError, TypeError, AttributeError, KeyError) as exc:
            cause = f"{type(exc).__name__}: {exc}"
            raise InputError(str(path), [f"unreadable run record: {cause}"]) from exc
        return with_journal(record, read_journal(journal_path(path)))

    def scan(self) -> tuple[list[RunRecord], list[str]]:
        """Every readable run, oldest first, and one line per record that cannot be read (which
        then hides no other run)."""
        records, broken = [], []
        for path in sorted(self.runs_dir.glob("*.json")):
            try:
                records.append(self.get(path.stem))
            except InputError as exc:
                broken.append(f"run {path.stem} not listed: {'; '.join(exc.problems)} ({path})")
        return records, broken

    def list_runs(self, start: str | None = None, end: str | None = None) -> list[RunRecord]:
        """Every readable run, oldest first; ``start``/``end`` bound ``created`` (ISO strings)."""
        records = []
        for record in self.scan()[0]:
            if start and record.created < start:
                continue
            if end and record.created > end:
                continue
            records.append(record)
        return records

    def update(self, run_id: str, **changes: Any) -> RunRecord:
        """Replace top-level fields of a run (state, error, decisions) and save it."""
        record = replace(self.get(run_id), **changes)
        self.save(record)
        return record

    def update_states(self, run_id: str, states: dict[str, dict[str, Any]]) -> RunRecord:
        """Merge per-task Slurm observations (``task -> {state, real_node, ...}``) and save."""
        record = self.get(run_id)
        decisions = tuple(
            replace(d, **states[d.task]) if d.task in states else d for d in record.decisions
        )
        record = replace(record, decisions=decisions)
        self.save(record)
        return record


def with_journal(record: RunRecord, journal: JournalState | None) -> RunRecord:
    """``record`` as its submission journal shows it: every journaled job id in its decision
    (its output file's ``%j`` filled in), tasks whose sbatch gave no answer ``SUBMITTING``, and
    a ``submitting`` run ``interrupted`` when its submitter is gone (no journal: it died before
    its first sbatch)."""
    if journal is None:
        return replace(record, state="interrupted") if record.state == "submitting" else record
    decisions = []
    for d in record.decisions:
        if d.job_id is None and d.task in journal.jobs:
            job_id = journal.jobs[d.task]
            output = d.output.replace("%j", job_id) if d.output else None
            d = replace(d, job_id=job_id, state="SUBMITTED", output=output)
        elif d.job_id is None and d.task in journal.uncertain and d.state == "PLANNED":
            d = replace(d, state=SUBMITTING, sbatch_at=journal.attempted_at.get(d.task))
        elif d.job_id is None and d.task in journal.refused:
            d = replace(d, state=NOT_SUBMITTED)
        decisions.append(d)
    state, error = record.state, record.error
    if state == "submitting":
        state, error = journal.state, journal.stopped or error
    return replace(record, decisions=tuple(decisions), state=state, error=error)


def begin_submission(runlog: RunLog, record: RunRecord) -> SubmissionJournal:
    """Journal first (its room reserved, locked), then the record in state ``submitting``,
    fsync'd: nothing is submitted unless both are on disk (raises
    :class:`~sim.atomic_files.OutputError` otherwise, leaving neither)."""
    journal = SubmissionJournal(
        journal_path(runlog.path(record.run_id)), [d.task for d in record.decisions]
    )
    try:
        # write_atomic fsyncs the file and its folder: the record is on disk before any sbatch
        submitting = replace(record, state="submitting").to_dict()
        write_atomic(runlog.path(record.run_id), json.dumps(submitting, indent=1))
    except BaseException:
        journal.remove()
        journal.__exit__(None, None, None)
        raise
    return journal


def settle_submission(runlog: RunLog, run_id: str, **changes: Any) -> RunRecord:
    """Fold the journal into the record (with ``changes``), on disk, then remove the journal.

    If the record cannot be rewritten (a full disk) the error is raised and the journal stays:
    readers still merge it, so the record never shows fewer jobs than were submitted."""
    record = replace(runlog.get(run_id), **changes)
    write_atomic(runlog.path(run_id), json.dumps(record.to_dict(), indent=1))  # fsync'd
    journal_path(runlog.path(run_id)).unlink(missing_ok=True)
    return record
