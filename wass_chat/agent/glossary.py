"""What a Slurm reason or state code means, asked in words: "what does PartitionConfig mean?".

A sysadmin reading ``squeue`` meets codes (``Resources``, ``AssocGrpCpuLimit``,
``ReqNodeNotAvail``, ``OUT_OF_MEMORY``) before any job id is in question. The router answers
such a question from the same table the job explainer uses (:mod:`wass_chat.slurm.reasons`),
with no tool and no cluster: the code's meaning, what helps, and ``/why JOBID`` for one job.

Only a question about a code is answered here: the message must ask for a meaning ("mean",
"meaning", "stand for", "what is ...") and name a code the table knows. A code that is also
an ordinary word (``Resources``, ``Priority``, ``None``...) counts only when written as Slurm
prints it (capitalised) or after "reason"/"state", so "what is priority?" is not taken for it.
"""

from __future__ import annotations

import re

from wass_chat.slurm.reasons import REASONS, UNKNOWN, Reason, classify

_ASKS_MEANING = re.compile(
    r"\b(mean|means|meaning|stand\s+for|stands\s+for|definition)\b|^\s*(?:what(?:'s|\s+is)|explain)\b",
    re.I,
)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z_]*")
_WORDLIKE = frozenset(r.code for r in REASONS if r.code.isalpha() and r.code[1:].islower())
"""Codes that are also English words (``Resources``, ``Priority``, ``Licenses``...)."""
_STATES = frozenset(r.code for r in REASONS if r.code.isupper())
"""Job state codes (sacct State), as opposed to pending reasons."""


def code_in(text: str) -> Reason | None:
    """The table entry of the reason or state code ``text`` asks about, or ``None``."""
    if not _ASKS_MEANING.search(text):
        return None
    tokens = _TOKEN.findall(text)
    for i, token in enumerate(tokens):
        reason = classify(token)
        if reason is UNKNOWN or len(token) < 4:
            continue
        after_cue = i > 0 and tokens[i - 1].lower() in {"reason", "state", "code"}
        if token in _WORDLIKE or reason.code in _WORDLIKE:
            if after_cue or token == reason.code:
                return reason
            continue
        if reason.code in _STATES and token != token.upper() and not after_cue:
            continue  # "failed" in a sentence is not the state FAILED
        return reason
    return None


def explain_code(reason: Reason, asked: str) -> str:
    """The reply: the code's meaning and what helps, in the explainer's words."""
    kind = "job state" if reason.code in _STATES else "pending reason"
    shown = reason.code if not reason.code.endswith("*") else asked
    text = f"Slurm's {kind} `{shown}` means: {reason.meaning}."
    if reason.advice:
        text += f" What helps: {reason.advice}."
    return text + " For one job's own situation, ask `/why JOBID`."


def glossary_reply(text: str) -> str | None:
    """The answer to "what does CODE mean?", or ``None`` when ``text`` is not such a question."""
    reason = code_in(text)
    if reason is None:
        return None
    asked = next(
        (t for t in _TOKEN.findall(text) if classify(t) is reason and len(t) >= 4), reason.code
    )
    return explain_code(reason, asked)
