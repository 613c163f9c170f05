"""Who stored a case, and whether its figures are possible at all.

A shared store is written by many users; a case it returns is cited in explanations and used
as a runtime estimate, so a forged one (a makespan no schedule can reach) must be refused
when it is written, and every case says who wrote it (``written_by``) and from what
(``source``: the simulator, ``slurm:<run id>``, an import).

A case of a real run (``slurm:<run id>``) claims what Slurm did, so it is stored only when
Slurm's accounting confirms it (:func:`confirm_real_run`): every job it names is in sacct under
the run's job name, in the state it says, on the node it says, and each task's timeline lies
within its job's sacct interval. :class:`~kb.store.KnowledgeBase` checks this on every write of
such a case, with the accounting it was opened with (the CLI and the app give it Slurm's);
opened without one, it refuses them, and stamps each case it stores with when sacct
confirmed it (``RealExecution.confirmed``).

The stamp is only the record's word: a holder of a served store's write token can write a case
with Chroma's HTTP API, stamp and all, around the check. So a reader re-checks before citing a
``slurm:`` case as a real run (:func:`standing`): a case is cited as real only when its record
says sacct confirmed it and, where the reader has Slurm's accounting and it answers, sacct
confirms it again; otherwise it is *unconfirmed*.
"""

from __future__ import annotations

import getpass
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from kb.records import CaseRecord, is_real
from sim.errors import InputError, UserFacingError
from sim.metrics import critical_path_bound

CONFIRM_FIELDS = ("JobID", "JobName", "State", "NodeList", "Start", "End")
"""The sacct fields a real run's case is confirmed by."""
CONFIRM_SLACK_S = 3.0
"""How far a task's timeline may fall outside its job's sacct interval: the learner's own
slack for the jobs' stamps (2 s) and the case's start time kept in whole seconds."""

MEASURED_SOURCES = ("simulated-realised",)
"""Sources (besides real runs) whose workflow carries the user's runtime requests while the
makespan comes from realised runtimes (:data:`kb.estimates.REALISED`): a run may well beat
the bound of the requests, so they are not checked against it."""
BOUND_SLACK = 1e-6
"""Relative slack under the critical-path bound (float noise of the simulator's clock)."""


class ImplausibleCase(InputError):
    """A case whose makespan is below what its own workflow and platform allow."""


def source_kind(source: str) -> str:
    """What a case came from, without its details: ``slurm`` for ``slurm:<run id>``,
    otherwise the source itself (``simulated``, ``simulated-realised``)."""
    return source.split(":", 1)[0]


def writer() -> str:
    """``user@host`` of this process: who a case written now was written by."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (a container's arbitrary uid)
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def signed(case: CaseRecord, by: str) -> CaseRecord:
    """``case`` with its writer recorded (a case that names one keeps it: a merge or an
    import rewrites a case without changing who first wrote it)."""
    return case if case.written_by else replace(case, written_by=by)


def check_plausible(case: CaseRecord) -> None:
    """Refuse a simulated or imported case whose makespan beats the critical-path bound
    (the longest dependency chain at the fastest nodes, communication free): no schedule
    can, so the figure is forged or broken.

    Real runs and realised histories are exempt: their tasks' measured times may differ from
    the workflow's declared work (:mod:`wass_chat.learn` checks real runs against sacct)."""
    if is_real(case.source) or case.source in MEASURED_SOURCES:
        return
    makespan = case.metrics.makespan
    try:
        bound = critical_path_bound(case.workflow, case.platform)
    except ValueError as exc:  # a task that fits no node: the case cannot have run there
        raise ImplausibleCase(f"case {case.case_id}", [str(exc)]) from exc
    if makespan < bound * (1 - BOUND_SLACK):
        raise ImplausibleCase(
            f"case {case.case_id}",
            [
                f"its makespan {makespan:.1f} s is below the critical-path bound {bound:.1f} s of"
                f" {case.workflow.name} on {case.platform.name}: no schedule can be that fast"
            ],
        )


class JobAccounting(Protocol):
    """Slurm's accounting as the confirmation reads it (``SlurmCommands`` is one): ``sacct -P``
    rows of the allocations among ``job_ids``, keyed by JobID."""

    def accounting(
        self, job_ids: Sequence[str], fields: Sequence[str] = ...
    ) -> dict[str, dict[str, str]]: ...


class UnconfirmedRun(InputError):
    """A ``slurm:`` case that Slurm's accounting does not confirm: it is not stored."""

    kind = "case"


class SacctUnanswered(UnconfirmedRun):
    """sacct did not answer, so it neither confirmed nor contradicted the run."""


def _epoch(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return None


def confirm_real_run(case: CaseRecord, accounting: JobAccounting | None) -> None:
    """Raise :class:`UnconfirmedRun` unless sacct (``accounting``) confirms every claim of
    the real run's case (see the module docstring); other cases pass untouched."""
    if not is_real(case.source):
        return
    subject = f"case {case.case_id} ({case.source})"
    if accounting is None:
        raise UnconfirmedRun(
            subject,
            [
                "a slurm: case is stored only when sacct confirms its "
                "run, and this store was opened without Slurm's "
                "accounting"
            ],
        )
    real = case.real
    if real is None or not real.job_ids or case.source != f"slurm:{real.run_id}":
        raise UnconfirmedRun(subject, ["it names no job of its run for sacct to confirm"])
    problems = [
        f"task {t} has a timeline but no job"
        for t in sorted(case.timeline)
        if t not in real.job_ids
    ]
    try:
        rows = accounting.accounting(sorted(set(real.job_ids.values())), CONFIRM_FIELDS)
    except UserFacingError as exc:
        raise SacctUnanswered(subject, [f"sacct cannot confirm it: {exc.one_line()}"]) from exc
    t0 = _epoch(real.started_at)
    for task, job in sorted(real.job_ids.items()):
        row = rows.get(job)
        if row is None:
            problems.append(f"sacct has no job {job} (task {task})")
            continue
        if not row.get("JobName", "").startswith(f"wass-{real.run_id}-"):
            problems.append(f"job {job} is {row.get('JobName')!r}, not a job of run {real.run_id}")
        state = (row.get("State") or "").split(" ")[0]
        if real.task_states.get(task, state) != state:
            problems.append(f"task {task}: the case says {real.task_states[task]}, sacct {state}")
        if task not in case.timeline:
            continue
        if row.get("NodeList") != case.placements.get(task):
            problems.append(
                f"task {task}: the case says node {case.placements.get(task)}, "
                f"sacct {row.get('NodeList')}"
            )
        first, last = _epoch(row.get("Start", "")), _epoch(row.get("End", ""))
        _, start, end = case.timeline[task]
        if first is None or last is None or t0 is None:
            problems.append(f"task {task}: sacct has no start and end for job {job}")
        elif not (
            first - CONFIRM_SLACK_S
            <= t0 + start * real.scale
            <= t0 + end * real.scale
            <= last + CONFIRM_SLACK_S
        ):
            problems.append(
                f"task {task}: the case says {(end - start) * real.scale:.1f} s "
                f"from {t0 + start * real.scale:.0f}, sacct {last - first:.0f} s "
                f"from {first:.0f}"
            )
    longest = max((e for _, _, e in case.timeline.values()), default=0.0)
    if abs(case.metrics.makespan - longest) > 1e-6 * max(1.0, longest):
        problems.append(
            f"its makespan {case.metrics.makespan:.1f} s is not its timeline's {longest:.1f} s"
        )
    if problems:
        raise UnconfirmedRun(subject, [*problems, "not stored"])


def stamp_confirmed(case: CaseRecord) -> CaseRecord:
    """``case`` with the time sacct confirmed its run (a real run's case, just confirmed by
    :func:`confirm_real_run`); other cases unchanged."""
    if case.real is None or not is_real(case.source):
        return case
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return replace(case, real=replace(case.real, confirmed=now))


@dataclass(frozen=True)
class Standing:
    """Whether a ``slurm:`` case may be cited as a real run, and the words that say why."""

    confirmed: bool
    words: str


def standing(case: CaseRecord, accounting: JobAccounting | None) -> Standing:
    """Re-check a real run's case at read time: confirmed when its record says sacct
    confirmed it on write and ``accounting`` (the reader's sacct, where it has one and it
    answers) confirms it again; unconfirmed otherwise (one sacct call per case). A case
    stored before the stamp existed counts as confirmed when sacct confirms it now."""
    real = case.real
    if real is None:
        return Standing(False, "unconfirmed: it records no run")
    stamped = bool(real.confirmed)
    stored = f"confirmed by sacct when stored ({real.confirmed[:10]})"
    unstamped = "unconfirmed: its record does not say sacct confirmed it"
    if accounting is None:
        if not stamped:
            return Standing(False, unstamped)
        return Standing(True, f"{stored}, not re-checked here (no Slurm accounting)")
    try:
        confirm_real_run(case, accounting)
    except SacctUnanswered:
        if not stamped:
            return Standing(False, f"{unstamped}, and sacct did not answer")
        return Standing(True, f"{stored}, not re-checked (sacct did not answer)")
    except UnconfirmedRun as exc:
        return Standing(False, f"unconfirmed: sacct disagrees ({exc.problems[0]})")
    if not stamped:  # stored before the stamp existed: sacct's word now is the whole check
        return Standing(True, "confirmed by sacct now (stored before confirmations were stamped)")
    return Standing(True, "confirmed by sacct, checked again now")


class _Fetched:
    """sacct rows fetched once for many cases, answering as the accounting would (or, when
    sacct did not answer, failing as it did)."""

    def __init__(self, rows: dict[str, dict[str, str]] | None, error: str = "") -> None:
        self.rows, self.error = rows, error

    def accounting(
        self, job_ids: Sequence[str], fields: Sequence[str] = CONFIRM_FIELDS
    ) -> dict[str, dict[str, str]]:
        if self.rows is None:
            raise UserFacingError(self.error)
        return {j: self.rows[j] for j in job_ids if j in self.rows}


def confirmed_ids(cases: Iterable[CaseRecord], accounting: JobAccounting | None) -> set[str]:
    """The ids of ``cases`` that may be used as what they claim: every simulated one, and the
    real runs' that :func:`standing` confirms, with one sacct call for all of them."""
    cases = list(cases)
    real = [c for c in cases if is_real(c.source)]
    ok = {c.case_id for c in cases if not is_real(c.source)}
    if not real:
        return ok
    fetched: JobAccounting | None = None
    if accounting is not None:
        ids = sorted({j for c in real if c.real is not None for j in c.real.job_ids.values()})
        try:
            fetched = _Fetched(accounting.accounting(ids, CONFIRM_FIELDS))
        except UserFacingError as exc:
            fetched = _Fetched(None, exc.one_line())
    return ok | {c.case_id for c in real if standing(c, fetched).confirmed}
