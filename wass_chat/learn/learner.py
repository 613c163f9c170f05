"""Learning a finished run: its Slurm record becomes a case in the knowledge base, once.

Whoever sees a submitted run end (``wass-chat status``, ``wass-chat runs``, the app's run status,
``wass-chat kb learn RUN``) calls :func:`refresh_and_learn`: the run's task states are read from
Slurm (and logged, as ``status`` always did), and when every job has ended the run becomes a case
(:func:`kb.real_runs.case_from_run`) with its decisions, in one write
(:meth:`kb.store.KnowledgeBase.add_real_case`: a run that did not complete is kept apart). The
decision log then records the case id (``learned``) and the run's final state, so later looks
skip the knowledge base. The case id is the run's: learning again, or after a crash between the
two writes, stores nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kb.decisions import decisions_from_case
from kb.real_runs import case_from_run, per_task_mape
from kb.records import CaseRecord
from sim.errors import InputError, ServiceUnavailable, UserFacingError
from wass_chat.learn.run_cases import finished_run, run_ended
from wass_chat.runlog import RunLog, RunRecord
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.recovery import needs_reconciling
from wass_chat.slurm.runs import TaskStatus, run_status

if TYPE_CHECKING:
    from kb.store import KnowledgeBase

DECISIONS_PER_CASE = 4
"""Decision records kept per learned case, as seeding keeps (``kb seed``)."""

KbOpener = Callable[[], AbstractContextManager["KnowledgeBase"]]
"""The knowledge base to learn into, as a context (called only once a run has ended): the CLI
opens and closes one (``contextlib.closing``); the app lends its open one (``nullcontext``)."""


@dataclass(frozen=True)
class Learned:
    """What learning one run did."""

    run_id: str
    case_id: str
    state: str
    """``COMPLETED``, or how the run failed (then it is kept apart)."""
    added: bool
    """False: the knowledge base already held it (learning is idempotent)."""
    real_makespan_s: float
    predicted_makespan_s: float | None
    per_task_mape: float | None
    timing: str

    @property
    def kept_apart(self) -> bool:
        return self.state != "COMPLETED"

    def line(self) -> str:
        """One line for a person: what became of the run in the knowledge base."""
        what = "kept apart (not used as an estimate)" if self.kept_apart else "a real case"
        verb = "learned" if self.added else "already learned"
        text = f"run {self.run_id} ({self.state}) {verb} as {what}, {self.case_id}: "
        text += f"real makespan {self.real_makespan_s:.2f} s ({self.timing})"
        if self.predicted_makespan_s is not None:
            text += f", the plan predicted {self.predicted_makespan_s:.2f} s"
        if self.per_task_mape is not None:
            text += f", per-task runtime error {100 * self.per_task_mape:.1f}%"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "kept_apart": self.kept_apart}


def learned_from(case: CaseRecord, added: bool) -> Learned:
    """The :class:`Learned` summary of a real case (makespans in real seconds)."""
    real = case.real
    assert real is not None
    predicted = real.predicted_makespan
    return Learned(
        run_id=real.run_id,
        case_id=case.case_id,
        state=real.state,
        added=added,
        real_makespan_s=case.metrics.makespan * real.scale,
        predicted_makespan_s=predicted * real.scale if predicted is not None else None,
        per_task_mape=per_task_mape(case),
        timing=real.timing,
    )


def learn_finished(
    record: RunRecord, statuses: Sequence[TaskStatus], kb: KnowledgeBase, runlog: RunLog | None
) -> Learned:
    """Store the ended run ``record`` (its ``statuses`` from Slurm or the accounting cache) and,
    with ``runlog``, record the case id and the run's final state in the decision log."""
    case = case_from_run(finished_run(record, statuses))
    added = kb.add_real_case(case, decisions_from_case(case, DECISIONS_PER_CASE))
    learned = learned_from(case, added)
    if runlog is not None:
        final = (
            "completed"
            if not learned.kept_apart
            else ("cancelled" if record.state == "cancelled" else "failed")
        )
        runlog.update(record.run_id, state=final, learned=case.case_id)
    return learned


@dataclass(frozen=True)
class Refreshed:
    """A run looked at in Slurm: its task states, and what learning it did or why it could not
    (the states are logged either way; a knowledge base that cannot be opened, or a workflow
    file gone, fails only the learning)."""

    statuses: list[TaskStatus]
    learned: Learned | None = None
    learn_error: str = ""


def refresh_and_learn(
    record: RunRecord, commands: SlurmCommands, runlog: RunLog, open_kb: KbOpener | None
) -> Refreshed:
    """The run's task states from Slurm (logged; Slurm away raises as ``status`` always did);
    once it has ended and unless it was learned before (or ``open_kb`` is None), the run
    learned into the knowledge base ``open_kb`` opens."""
    statuses = run_status(record, commands, runlog)
    record = runlog.get(record.run_id)  # reconciled with Slurm if its record was not settled
    if open_kb is None or record.learned is not None or not run_ended(record, statuses):
        return Refreshed(statuses)
    try:
        with open_kb() as kb:
            learned = learn_finished(record, statuses, kb, runlog)
    except LEARN_ERRORS as exc:
        return Refreshed(statuses, learn_error=_learn_error(exc))
    return Refreshed(statuses, learned)


def learn_run(run_id: str, commands: SlurmCommands, runlog: RunLog, open_kb: KbOpener) -> Learned:
    """``wass-chat kb learn RUN``: the run learned now (or found already learned), or an
    :class:`InputError` saying which of its jobs have not ended."""
    record = runlog.get(run_id)
    if not record.job_ids:
        raise InputError(run_id, [f"run {run_id} submitted no job (state {record.state})"])
    statuses = run_status(record, commands, runlog)
    if not run_ended(record, statuses):
        going = sorted({s.state or "UNKNOWN" for s in statuses if s.job_id} - {"COMPLETED"})
        raise InputError(run_id, [f"run {run_id} has not ended: jobs still {', '.join(going)}"])
    with open_kb() as kb:
        return learn_finished(runlog.get(run_id), statuses, kb, runlog)


def learn_ended_runs(
    runlog: RunLog, commands: SlurmCommands, open_kb: KbOpener
) -> tuple[list[Learned], str]:
    """``wass-chat runs``: every submitted run not learned yet is looked at in Slurm, and those
    that ended are learned (the knowledge base opened once, only if one has). Returns what was
    learned and a note when Slurm did not answer or the learning failed (the runs are then
    listed as logged)."""
    waiting = [r for r in runlog.list_runs() if waits_for_learning(r)]
    found: list[Learned] = []
    notes: list[str] = []
    with ExitStack() as stack:
        kb: KnowledgeBase | None = None
        for record in waiting:
            try:
                statuses = run_status(record, commands, runlog)
            except ServiceUnavailable as exc:
                return found, "; ".join([*notes, f"states as last logged: {exc.one_line()}"])
            record = runlog.get(record.run_id)
            if not run_ended(record, statuses):
                continue
            try:
                kb = kb or stack.enter_context(open_kb())
                found.append(learn_finished(record, statuses, kb, runlog))
            except LEARN_ERRORS as exc:  # one run that cannot be learned hides no other
                notes.append(
                    f"run {record.run_id} not learned into the knowledge base: {_learn_error(exc)}"
                )
    return found, "; ".join(notes)


LEARN_ERRORS = (UserFacingError, KeyError, ValueError, TypeError)
"""What learning one run may raise on a record that does not hold together (a field missing, a
task the workflow lacks): reported for that run, the others still learned and listed."""


def _learn_error(exc: Exception) -> str:
    return exc.one_line() if isinstance(exc, UserFacingError) else f"{type(exc).__name__}: {exc}"


def waits_for_learning(record: RunRecord) -> bool:
    """Whether ``runs`` looks the run up in Slurm: not learned yet, and with jobs, or with jobs
    Slurm may have that its record does not list."""
    return record.learned is None and (bool(record.job_ids) or needs_reconciling(record))
