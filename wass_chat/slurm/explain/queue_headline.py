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


def running_sentence(running: list[dict[str, Any]], scope: str = "", counted: bool = False) -> str:
    """The longest-running job, ties named together ("what is alice running?"); with
    ``counted`` false, how many run first."""
    if not running:
        return "" if counted else f"No job{scope} is running."
    first = running[0]
    tied = [j for j in running if j["elapsed_s"] == first["elapsed_s"]]
    count = "" if counted else f"{_jobs(len(running))}{scope} {_are(len(running))} running"
    where = f" on {first['nodes']}" if first.get("nodes") else ""
    job = f"job {first['job_id']} of {first['user']}{where}, for {duration(first['elapsed_s'])}"
    if len(running) == 1:
        return f"{count}: {job}." if count else f"Running: {job}."
    if len(tied) > 1:
        ids = (
            f"jobs {names([j['job_id'] for j in tied])}"
            if len(tied) <= 5
            else f"{len(tied)} of them"
        )
        longest = f"{ids} have run longest, {duration(first['elapsed_s'])} each"
    else:
        longest = f"the longest-running is {job}"
    return f"{count}; {longest}." if count else f"{longest[0].upper()}{longest[1:]}."


def _are(count: int) -> str:
    return "is" if count == 1 else "are"


def users_sentence(users: list[dict[str, Any]]) -> str:
    """Who has the most jobs in the queue, ties named together; empty for a single user."""
    if len(users) < 2:
        return ""
    top = users[0]["jobs"]
    tied = [u for u in users if u["jobs"] == top]
    if len(tied) > 1:
        return f"{names([u['user'] for u in tied])} have the most jobs in the queue, {top} each."
    u = tied[0]
    return (
        f"{u['user']} has the most jobs in the queue: {u['jobs']} ({u['running']} running, "
        f"{u['pending']} pending)."
    )


def queue_verdict(
    pending: list[dict[str, Any]],
    reasons: list[dict[str, Any]],
    parts: list[dict[str, Any]],
    longest: list[dict[str, Any]],
    scope: str = "",
    running: list[dict[str, Any]] | None = None,
    users: list[dict[str, Any]] | None = None,
) -> str:
    """The queue's headline from its own counts (see the module docstring); ``scope`` says
    which part of the queue was asked about (:func:`scope_words`). ``running`` (the running
    jobs, longest-running first; None: not read, so nothing is said of them) and ``users``
    (jobs per user, most first) add what runs and whose jobs these are."""
    if not pending:
        empty = (
            f"No job{scope} is pending."
            if scope
            else "No job is pending: nothing blocks the queue."
        )
        rest = (
            running_sentence(running, scope) if running is not None else "",
            users_sentence(users or []),
        )
        return " ".join(part for part in (empty, *rest) if part)
    runs = ""
    if running is not None:
        runs = (
            f" and {len(running)} {_are(len(running))} running"
            if running
            else " and none is running"
        )
    verdict = (
        f"{_jobs(len(pending))} {_are(len(pending))} pending{runs}; "
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
    rest = (running_sentence(running or [], counted=True), users_sentence(users or []))
    return " ".join(part for part in (verdict, *rest) if part)
