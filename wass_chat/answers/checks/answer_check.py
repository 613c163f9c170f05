"""Checks of a deterministic answer against the facts it was built from, as the verifier checks
a model's text: every number and clock time it states is a fact, and no two of its sentences
contradict each other.

The verifier (:mod:`wass_chat.answers.checks.verify`) lets the numbers of our own computed sentences
(verdicts, outcomes, notes) ground an answer that repeats them. Here they may not: an answer's
numbers must come from what Slurm printed (the evidence, parsed: ``00:10:00`` is 600 s,
``8/8`` two 8s, an ISO time its clock), from the facts' own fields, or from the ``figures`` the
explainer declares it computed (a median wait, a CPU share, a place in line). And:

* **one start time**: every clock time an answer gives for the job's own start (the expected
  start, "instead of about", "its current estimate of", "until about") is the same one;
* **counts that add up**: "N jobs are pending" equals the jobs listed by reason, "K of the N"
  never has K above N, "X of the Y CPUs" never X above Y, and one answer gives one pending
  count for the whole queue (not the queue at the period's end beside its final states);
* **no answer for a name that names nothing**: a partition, user or run a tool refused as
  unknown is refused by the answer too, never answered as an empty result.

Used by the test suites (``tests/agent/test_answer_consistency.py``, and live in tests/slurm)
over real answers; :func:`problems` returns what is wrong, one line each.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from wass_chat.answers.checks.claims import fact_strings, false_claims, unsafe_commands
from wass_chat.answers.checks.verify import COMPUTED_TEXT, ignored_refusals, verify_answer

_DAY = r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?"
_CLOCK = re.compile(r"(?<![\d:.])" + _DAY + r"(\d{2}):(\d{2})(?![\d:]|\.\d)")
_SLURM_DURATION = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T(\d{2}):(\d{2})(?::\d{2})?")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_OWN_START = re.compile(
    r"(?:Expected start:\*{0,2}\s+(?:not before\s+)?about|instead of about|current estimate of|"
    r"until about|ends at about|start it at about)\s+(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?"
    r"(\d{2}:\d{2})",
)
_CHANGED_REQUEST = re.compile(
    r"(?:Slurm would start it|--test-only says it would start) (?:at about|now)[^;,)]*"
)
"""What a changed request would do: another job's start, not this one's."""


def source_numbers(facts: Any) -> list[float]:
    """Numbers in the facts that are not our computed sentences: fields, and numbers inside
    Slurm's strings (durations as seconds, sizes, counts)."""
    found: list[float] = []

    def visit(value: Any, key: str = "") -> None:
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, int | float):
            found.append(float(value))
        elif isinstance(value, str) and key not in COMPUTED_TEXT:
            for piece in re.split(r"[\s,=/()]+", value):
                if m := _SLURM_DURATION.match(piece):
                    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in m.groups())
                    found.append(days * 86400 + hours * 3600 + minutes * 60 + seconds)
            found.extend(float(n) for n in _NUMBER.findall(value))
        elif isinstance(value, Mapping):
            for name, item in value.items():
                if name not in COMPUTED_TEXT:
                    visit(item, str(name))
        elif isinstance(value, list | tuple):
            found.append(float(len(value)))
            for item in value:
                visit(item, key)

    visit(facts)
    return found


def source_clocks(facts: Any) -> set[str]:
    """Every ``HH:MM`` of a time in the facts (ISO times Slurm printed, the expected start)."""
    text = repr(_without_computed(facts))
    return {f"{h}:{m}" for h, m in _ISO.findall(text)}


def _without_computed(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_computed(v) for k, v in value.items() if k not in COMPUTED_TEXT}
    if isinstance(value, list | tuple):
        return [_without_computed(v) for v in value]
    return value


_COMPOUND = re.compile(r"\b(\d+) (d|h|min) (\d+) (h|min|s)\b")
"""A duration as :func:`~wass_chat.slurm.explain.ended.duration` writes it in two units."""
_SECONDS = {"d": 86400, "h": 3600, "min": 60, "s": 1}


def _in_seconds(match: re.Match[str]) -> str:
    """``3 min 18 s`` -> ``198 s``: the verifier reads one number with one unit."""
    big, big_unit, small, small_unit = match.groups()
    return f"{int(big) * _SECONDS[big_unit] + int(small) * _SECONDS[small_unit]} s"


_ADVICE_HEADING = re.compile(r"^\*\*What (?:would make it start sooner|to change next time):\*\*$")


def without_advice(text: str) -> str:
    """``text`` without its advice section, whose numbers are what ``sbatch --test-only``
    answered (its command is quoted) or the efficiency code's suggestions, not facts here."""
    kept, skipping = [], False
    for line in text.splitlines():
        if _ADVICE_HEADING.match(line):
            skipping = True
        elif skipping and not line.startswith("- "):
            skipping = False
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def ungrounded(text: str, facts: Mapping[str, Any], strict: bool = False) -> list[str]:
    """Numbers, ids and clock times of ``text`` that no fact supports (our sentences excluded;
    the advice section too, see :func:`without_advice`); ``strict`` as in
    :func:`~.verify.verify_answer`."""
    text = without_advice(text)
    problems = [
        f"clock time {h}:{m} is no time in the facts"
        for h, m in _CLOCK.findall(text)
        if f"{h}:{m}" not in source_clocks(facts)
    ]
    body = _COMPOUND.sub(_in_seconds, _CLOCK.sub(" ", text))
    grounding = {"facts": _without_computed(facts), "parsed": source_numbers(facts)}
    verdict = verify_answer(body, grounding, strict=strict)
    problems += [f"number {n} is not in the facts" for n in verdict.unsupported_numbers]
    problems += [f"id {i} is not in the facts" for i in verdict.unknown_ids]
    problems += [f"claims an action not taken: {c}" for c in false_claims(text, facts)]
    problems += [
        f"suggests a destructive command not in the facts: {c}"
        for c in unsafe_commands(text, fact_strings(facts))
    ]
    return problems


def contradictions(text: str) -> list[str]:
    """Sentences of ``text`` that disagree: two start times for the job, counts that do not
    add up."""
    problems = []
    own = set(_OWN_START.findall(_CHANGED_REQUEST.sub(" ", text)))
    if len(own) > 1:
        problems.append(f"the answer gives {len(own)} start times: {', '.join(sorted(own))}")
    count = r"(\d{1,3}(?:,\d{3})+|\d+)"  # "3,589 of 3,935", not "589 of 3"
    # not durations: "00:00:02 of 00:05:00" is no count ("02 of 00")
    for part, whole in re.findall(
        rf"(?<![:.])\b{count} of (?:the |its )?{count}\b(?![:.]\d)", text
    ):
        if int(part.replace(",", "")) > int(whole.replace(",", "")):
            problems.append(f"{part} of {whole}: a part larger than its whole")
    if pending := re.search(r"\b(\d+) jobs? (?:are|is) pending\b", text):
        listed = re.findall(r"^- `[^`]*`: (\d+) jobs?,", text, re.M)
        if listed and sum(map(int, listed)) != int(pending.group(1)):
            problems.append(
                f"{pending.group(1)} jobs pending, but {sum(map(int, listed))} listed by reason"
            )
    counts = {c.replace(",", "") for pattern in _PENDING_TOTALS for c in pattern.findall(text)}
    if len(counts) > 1:
        problems.append(
            f"the answer gives {len(counts)} pending counts for one queue: "
            + ", ".join(sorted(counts, key=int))
        )
    return problems


_PENDING_TOTALS = (
    re.compile(r"\b(\d[\d,]*) jobs? (?:are|is|were|was) (?:still )?pending\b"),
    re.compile(r"\bof the (\d[\d,]*) jobs? (?:still )?pending\b"),
    re.compile(r"pending at the period's end: (\d[\d,]*)"),
)
"""Phrasings of the whole queue's pending count (a partition's "3 pending jobs" is a part)."""


def problems(text: str, facts: Mapping[str, Any]) -> list[str]:
    """Everything wrong with a rendered answer: ungrounded numbers, contradictions, and a name
    a tool refused as unknown that the answer treats as real."""
    parts = facts.get("results", [facts]) if facts.get("kind") == "results" else [facts]
    refusals = [part for part in parts if part.get("unknown")]
    return ungrounded(text, facts) + contradictions(text) + ignored_refusals(text, refusals)
