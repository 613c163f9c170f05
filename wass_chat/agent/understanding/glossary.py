"""What a Slurm reason or state means, asked in words: "what does PartitionConfig mean?".

A sysadmin reading ``squeue`` meets codes (``Resources``, ``AssocGrpCpuLimit``,
``ReqNodeNotAvail``, ``OUT_OF_MEMORY``) and long texts ("Reservation maint was deleted") before
any job id is in question. The router answers such a question from the catalogue the job
explainer uses (:mod:`wass_chat.slurm.reasons`), with no tool and no cluster: what the code
means, whether the job can start as it stands, what helps, and ``/why JOBID`` for one job.

Only a question about a code is answered here: the message must ask for a meaning ("mean",
"meaning", "stand for", "what is ...") and name a code or long text the catalogue knows. A code
that is also an ordinary word (``Resources``, ``Priority``, ``None``...) counts only when
written as Slurm prints it (capitalised) or after "reason"/"state", so "what is priority?" is
not taken for it.
"""

from __future__ import annotations

import re

from wass_chat.slurm.reasons import OUTCOME_WORDS, REASONS, UNKNOWN, Reason, classify

_ASKS_MEANING = re.compile(
    r"\b(mean|means|meaning|stand\s+for|stands\s+for|definition)\b|^\s*(?:what(?:'s|\s+is)|explain)\b",
    re.I,
)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z_]*\*?")
_WORDLIKE = frozenset(r.code for r in REASONS if r.code.isalpha() and r.code[1:].islower())
"""Codes that are also English words (``Resources``, ``Priority``, ``Licenses``...)."""
_STATES = frozenset(r.code for r in REASONS if r.code.isupper() and r.outcome != "waits")
"""Job state codes (sacct State), as opposed to pending reasons."""
_LONG_TEXTS = [
    (r, re.compile(re.sub(r"%[a-z]+", "(.+?)", re.escape(r.code).replace(r"\%", "%")), re.I))
    for r in REASONS
    if r.is_text
]


def code_in(text: str) -> tuple[Reason, str] | None:
    """The catalogue entry ``text`` asks about and the code as asked, or ``None``."""
    if not _ASKS_MEANING.search(text):
        return None
    for reason, pattern in _LONG_TEXTS:
        if pattern.search(text):
            return reason, reason.code
    tokens = _TOKEN.findall(text)
    for i, token in enumerate(tokens):
        reason = classify(token)
        if reason is UNKNOWN or len(token) < 4:
            continue
        after_cue = i > 0 and tokens[i - 1].lower() in {"reason", "state", "code"}
        if token in _WORDLIKE or reason.code in _WORDLIKE:
            if after_cue or token == reason.code:
                return reason, token
            continue
        if reason.code in _STATES and token != token.upper() and not after_cue:
            continue  # "failed" in a sentence is not the state FAILED
        return reason, token
    return None


_VERSIONS = {
    "22.05": " Slurm 22.05 sets it; 26.05 no longer does.",
    "26.05": " Slurm 26.05 sets it; 22.05 does not.",
    "doc": " Slurm's documentation names it; neither 22.05 nor 26.05 sets it as such.",
}


def explain_code(reason: Reason, asked: str) -> str:
    """The reply: the code's meaning, whether the job can start, what helps."""
    kind = "job state" if reason.code in _STATES else "pending reason"
    shown = asked if reason.code.endswith("*") else re.sub(r"%[a-z]+", "…", reason.code)
    text = f"Slurm's {kind} `{shown}` means: {reason.meaning}."
    if kind == "pending reason" and OUTCOME_WORDS[reason.outcome]:
        text += " " + OUTCOME_WORDS[reason.outcome]
    if reason.advice:
        text += f" What helps: {reason.advice}."
    if not reason.code.endswith("*"):
        text += _VERSIONS.get(reason.versions, "")
    return text + " For one job's own situation, ask `/why JOBID`."


def glossary_reply(text: str) -> str | None:
    """The answer to "what does CODE mean?", or ``None`` when ``text`` is not such a question."""
    found = code_in(text)
    return explain_code(*found) if found else None
