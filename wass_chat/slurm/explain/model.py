"""An explanation of one job: a verdict sentence, quoted evidence, checked advice, a start.

The facts an answer is rendered from (offline), handed to the model (online) and checked by the
verifier are :meth:`Explanation.facts`, a :class:`JobWhyFacts` dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

from wass_chat.slurm.advice import Advice
from wass_chat.slurm.live import Quoted


class EvidenceFacts(TypedDict):
    command: str
    field: str
    value: str


class AdviceFacts(TypedDict):
    text: str
    outcome: str
    helps: bool | None
    checked_with: str
    start: str | None
    """When the changed job would start (ISO), by ``start_source``."""
    start_source: str
    """``queue model`` (our replay of the whole queue) or '' (none given)."""
    test_only_start: str | None
    """What ``sbatch --test-only`` said (ISO): Slurm planning the changed job alone."""


class JobFileFacts(TypedDict):
    stream: str
    path: str
    source: str
    certain: bool


class JobWhyFacts(TypedDict, total=False):
    """What ``job_why`` returns (kind ``job_why``)."""

    kind: str
    job_id: str
    job_name: str
    user: str
    state: str
    reason: str
    reason_class: str
    meaning: str
    verdict: str
    evidence: list[EvidenceFacts]
    advice: list[AdviceFacts]
    expected_start: str | None
    expected_start_note: str
    expected_start_source: str
    """``slurm`` (squeue --start), ``replay`` (our replay of running jobs' time limits) or
    '' (no start time given): an answer states one start time, from one source."""
    wait_s: float
    elapsed_s: float
    backfill: bool | None
    scheduler: str
    nodes: str
    comment: str
    run_id: str | None
    task: str | None
    source: str
    note: str
    commands: list[str]
    files: list[JobFileFacts]
    """An ended job's output and error files (:mod:`wass_chat.slurm.job_files`)."""
    error_tail: list[str]
    """The last lines of its error output, as the job wrote them (outside text)."""
    stranded: list[dict[str, str]]
    """Pending jobs that wait on it and can never start now (job_id, user, reason,
    dependency, type)."""
    failed_step: dict[str, str]
    array_tasks: list[dict[str, str]]
    """When the id asked is an array's (``12``): its other tasks (job_id, state), from sacct."""
    figures: dict[str, float]
    """Numbers the verdict computed (see :attr:`Explanation.figures`)."""


@dataclass
class Explanation:
    """Built up by the explainers, then turned into facts."""

    verdict: str
    evidence: list[Quoted] = field(default_factory=list)
    advice: list[Advice] = field(default_factory=list)
    expected_start: datetime | None = None
    expected_start_note: str = ""
    expected_start_source: str = ""
    figures: dict[str, float] = field(default_factory=dict)
    """Numbers the verdict states that it computed (a median, a share, a place in line), so
    that every number an answer gives is a fact (checked by
    :mod:`wass_chat.answers.checks.answer_check`)."""

    def quote(self, *items: Quoted) -> None:
        for item in items:
            if item.value and item not in self.evidence:
                self.evidence.append(item)

    def evidence_facts(self) -> list[EvidenceFacts]:
        return [
            EvidenceFacts(command=q.command, field=q.field, value=q.value) for q in self.evidence
        ]

    def advice_facts(self) -> list[AdviceFacts]:
        return [
            AdviceFacts(
                text=a.text,
                outcome=a.outcome,
                helps=a.helps,
                checked_with=a.check.command if a.check else "",
                start=a.start.isoformat(timespec="seconds") if a.start else None,
                start_source=a.start_source,
                test_only_start=(
                    a.check.start.isoformat(timespec="seconds")
                    if a.check and a.check.start
                    else None
                ),
            )
            for a in self.advice
        ]
