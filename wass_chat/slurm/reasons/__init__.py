"""Slurm's pending reasons and job states: one catalogue, read by every view that explains them.

:data:`REASONS` holds every reason code Slurm 22.05 and 26.05 can set on a job
(``job_reason_string()`` / ``job_state_reason.c``), the long texts slurmctld sets instead
(``squeue %r`` prints them: "ReqNodeNotAvail, UnavailableNodes:n1", "Reservation X was
deleted"...), the codes only the documentation names, families for codes a later Slurm may add,
and the job states. :func:`classify` maps what Slurm printed to its entry; the live explainer
(:mod:`wass_chat.slurm.explain`), the glossary answer ("what does the pending reason X mean?")
and the queue view all read it. A code not in it gets :data:`UNKNOWN`, so an answer quotes the
raw code instead of guessing. docs/slurm.md carries :func:`markdown_summary`.
"""

from __future__ import annotations

from collections import Counter

from wass_chat.slurm.reasons.limit_table import LIMIT_REASONS
from wass_chat.slurm.reasons.model import (
    LIMIT_KINDS,
    NO_START,
    OUTCOME_WORDS,
    TRES_WORDS,
    LimitKind,
    LimitSpec,
    Outcome,
    Reason,
)
from wass_chat.slurm.reasons.table import JOB_STATES, PENDING_REASONS

__all__ = [
    "LIMIT_KINDS",
    "NO_START",
    "OUTCOME_WORDS",
    "PENDING_STATES",
    "REASONS",
    "TRES_WORDS",
    "UNKNOWN",
    "LimitKind",
    "LimitSpec",
    "Outcome",
    "Reason",
    "classify",
    "markdown_summary",
]

REASONS: tuple[Reason, ...] = (*PENDING_REASONS, *LIMIT_REASONS, *JOB_STATES)
UNKNOWN = Reason(
    "(any other)", "unknown", "a code wass-chat does not explain yet", "", "waits", "doc"
)
PENDING_STATES = frozenset(
    {"PENDING", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SPECIAL_EXIT"}
)
"""Job states (scontrol JobState) of a job that waits: PENDING and Slurm's held variants."""

_BY_CODE = {r.code: r for r in REASONS if not r.is_text and not r.code.endswith("*")}
_TEXTS = [r for r in REASONS if r.is_text]
_FAMILIES = [r for r in REASONS if r.code.endswith("*")]


def classify(code: str) -> Reason:
    """The catalogue entry of a reason code, long text or state as Slurm printed it.

    Exact codes first, then long texts (names filled in), then families; ``squeue %R``'s
    parentheses and scontrol's underscores are undone first."""
    text = code.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    if " " not in text and "_" in text and text.upper() != text:
        text = text.replace("_", " ")
    if found := _BY_CODE.get(text) or _BY_CODE.get(text.upper()):
        return found
    for reason in _TEXTS:
        if reason.matches(text):
            return reason
    head = text.split(",")[0].strip()
    if head != text and head in _BY_CODE:
        return _BY_CODE[head]  # a long text Slurm may add behind a known code
    for reason in _FAMILIES:
        if reason.matches(text):
            return reason
    return UNKNOWN


def markdown_summary() -> str:
    """The catalogue by explainer class, as docs/slurm.md carries it (a test keeps it equal)."""
    pending = [r for r in REASONS if r.outcome != "running" and r not in JOB_STATES]
    by_class: dict[str, Counter[str]] = {}
    for r in pending:
        by_class.setdefault(r.klass, Counter())[r.outcome] += 1
    lines = [
        "| class | entries | waits | never as requested | held | admin | ended |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for klass, counts in sorted(by_class.items(), key=lambda kv: -sum(kv[1].values())):
        cells = [str(counts[o]) for o in ("waits", "never", "release", "admin", "ended")]
        lines.append(f"| {klass} | {sum(counts.values())} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
