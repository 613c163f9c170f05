"""The queue's headline: what holds the pending jobs, ties said as ties, and how many need a
person to act.

"The most common reason is PartitionConfig (1 job)" in a 1-1-1-1 tie picks one at random and
hides what matters more: that three of the four jobs will not start by themselves. Each pending
reason's outcome comes from the reason catalogue (:mod:`wass_chat.slurm.reasons`): ``never``
(the request or a setting must change), ``release`` (held: someone must release it) and
``admin`` (an administrator must fix the cluster) need a person; ``waits`` starts by itself.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from wass_chat.slurm.explain.ended import duration
from wass_chat.slurm.explain.phrases import jobs, names
from wass_chat.slurm.reasons import classify

NEEDS_A_PERSON = {
    "never": (
        "can never start as requested (the request or a setting must change)",
        "can never start as requested (the request or a setting must change)",
    ),
    "release": ("is held until someone releases it", "are held until someone releases them"),
    "admin": ("waits for an administrator", "wait for an administrator"),
}
"""Outcomes under which a pending job starts only once a person acts, and how that reads
(one job, several)."""


def attention(pending: list[dict[str, Any]]) -> dict[str, int]:
    """How many pending jobs need a person to act, by outcome (``never``, ``release``,
    ``admin``), in all (``needs_a_person``: the "3 of the 4" the headline states must be a fact,
    not a sum only our sentence knows), and ``starts_by_itself``."""
    outcomes: Counter[str] = Counter(classify(j["reason"]).outcome for j in pending)
    counts = {key: outcomes.get(key, 0) for key in NEEDS_A_PERSON}
    counts["needs_a_person"] = sum(counts.values())
    counts["starts_by_itself"] = len(pending) - counts["needs_a_person"]
    return counts


def _jobs(count: int) -> str:
    return f"{count} job" + ("" if count == 1 else "s")


def reasons_sentence(reasons: list[dict[str, Any]]) -> str:
    """The most common reason, or the tied ones named together (never one picked at random)."""
    top = reasons[0]["jobs"]
    tied = [r for r in reasons if r["jobs"] == top]
    if len(reasons) == 1:
        return (
            f"{'its reason is' if top == 1 else 'all wait for one reason,'} {top_reason(tied[0])}"
        )
    if len(tied) == 1:
        return f"the most common reason is {top_reason(tied[0])}"
    codes = names([r["reason"] for r in tied])
    if len(tied) == len(reasons):
        return f"no reason is more common than another: {codes}, {_jobs(top)} each"
    return f"the most common reasons, tied at {_jobs(top)} each, are {codes}"


def top_reason(reason: dict[str, Any]) -> str:
    return f"{reason['reason']} ({_jobs(reason['jobs'])}: {reason['meaning']})"


def attention_sentence(counts: dict[str, int], pending: int) -> str:
    """How many of the pending jobs need a person, and why."""
    needing = counts["needs_a_person"]
    if not needing:
        return "All of them start by themselves once what holds them clears."
    parts = [f"{n} {NEEDS_A_PERSON[key][n != 1]}" for key in NEEDS_A_PERSON if (n := counts[key])]
    who = "all of them" if needing == pending else f"{needing} of the {pending}"
    verb = "needs" if needing == 1 and needing != pending else "need"  # "1 of the 3 needs"
    return f"{who[0].upper()}{who[1:]} {verb} a person to act: {'; '.join(parts)}."


def scope_words(partition: str | None, user: str | None, account: str | None) -> str:
    """`` of user alice in partition debug``: the filters a queue answer was asked with."""
    words = [
        f" {prep} {kind} {name}"
        for prep, kind, name in (
            ("of", "user", user),
            ("of", "account", account),
            ("in", "partition", partition),
        )
        if name
    ]
    return "".join(words)


def queue_verdict(
    pending: list[dict[str, Any]],
    reasons: list[dict[str, Any]],
    parts: list[dict[str, Any]],
    longest: list[dict[str, Any]],
    scope: str = "",
) -> str:
    """The queue's headline from its own counts (see the module docstring); ``scope`` says
    which part of the queue was asked about (:func:`scope_words`)."""
    if not pending:
        return (
            f"No job{scope} is pending."
            if scope
            else "No job is pending: nothing blocks the queue."
        )
    verdict = (
        f"{_jobs(len(pending))} {'are' if len(pending) != 1 else 'is'} pending; "
        f"{reasons_sentence(reasons)}. {attention_sentence(attention(pending), len(pending))}"
    )
    busiest = parts[0] if parts and parts[0]["pending_jobs"] else None
    if busiest:
        verdict += (
            f" Partition {busiest['partition']} is the most congested: "
            f"{busiest['cpus_allocated']} of its {busiest['cpus_total']} CPUs are in use "
            f"and its {jobs(busiest['pending_jobs'], 'pending')} "
            f"{'asks' if busiest['pending_jobs'] == 1 else 'ask'} for "
            f"{busiest['pending_cpus']} more."
        )
        if busiest["unavailable_nodes"]:
            verdict += f" Unavailable there: {', '.join(busiest['unavailable_nodes'])}."
    first = longest[0]
    verdict += (
        f" The longest wait so far is job {first['job_id']} of {first['user']}: "
        f"{duration(first['age_s'])} ({first['reason']})."
    )
    return verdict
