"""The verifier: every number and id in the model's answer must come from the facts.

A small model paraphrasing tool results will sometimes invent a makespan, misremember a case id or
swap two nodes. Before an answer is shown, :func:`verify_answer` extracts the identifiers and the
numbers (with their units) from the text and looks each up in the facts the tools returned (and in
the user's own question). Numbers match tolerantly: at the precision the text shows them (``12 s``
matches 12.4), through units (``1.2 GB`` matches 1234567890 bytes, ``3 min`` matches 180 s, ``12%``
matches 0.12), and regardless of sign (``12 s later`` for a delta of -12). A claimed action
("I cancelled...") that no tool result shows done, and a destructive command the facts do not
suggest (``scancel -u root``), fail it too (:mod:`wass_chat.answers.checks.claims`). Anything
unmatched makes the answer unverified; the session then shows the deterministic rendering
instead and logs what failed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wass_chat.answers.checks.claims import false_claims, unsafe_commands

_UNITS: dict[str, float] = {
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "day": 86400.0,
    "days": 86400.0,
    "b": 1.0,
    "byte": 1.0,
    "bytes": 1.0,
    "kb": 1e3,
    "mb": 1e6,
    "gb": 1e9,
    "tb": 1e12,
    "kib": 2.0**10,
    "mib": 2.0**20,
    "gib": 2.0**30,
    "tib": 2.0**40,
    "gb/s": 1e9,
    "mb/s": 1e6,
    "gbit/s": 1.25e8,
    "gb/s.": 1e9,
    "%": 0.01,
    "percent": 0.01,
    "x": 1.0,
    "×": 1.0,
}

_ID = re.compile(r"(?<![\w.@/-])[A-Za-z_@][\w@:/.-]*\d[\w@:/.-]*")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b")
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
_NUMBER = re.compile(
    r"(?<![\w.])([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    r"(?:\s?(%|×|[A-Za-z]+(?:/s)?))?(?!\w)"
)
"""A number, with its unit when one follows; never the digits inside a word such as a hex
digest (``2e70ab3f`` is not 2e70)."""
_TOOL_SYNTAX = re.compile(
    r"^\s*(?:functions\.\w+\s*:?\s*[{(]|<\|?(?:tool_call|function_call|python_tag)\b)",
    re.MULTILINE,
)
"""A line that opens a tool call in a chat template's own syntax: ``functions.NAME:`` followed
by its arguments (SmolLM2 through llama.cpp's server), ``<tool_call>``, ``<|python_tag|>``."""
_TOKEN_SPLIT = re.compile(r"[\s,;()\[\]{}'\"=`]+")
ALWAYS_ALLOWED = frozenset({0.0, 1.0, 2.0})
"""Numbers so generic ("1 node", "0 bytes", "2 schedulers") that they need no support."""


@dataclass(frozen=True)
class Verdict:
    """The verifier's finding on one answer."""

    ok: bool
    unsupported_numbers: tuple[str, ...] = ()
    unknown_ids: tuple[str, ...] = ()
    cited_ids: tuple[str, ...] = ()
    false_claims: tuple[str, ...] = ()
    """Sentences claiming an action on the cluster that no tool result shows done."""
    unsafe_commands: tuple[str, ...] = ()
    """Destructive commands the answer suggests that are not ours (in the facts)."""
    tool_syntax: bool = False
    """The text is a tool call written out (``functions.simulate: {}``), not an answer."""

    def reason(self) -> str:
        """One line saying what was not grounded."""
        parts = []
        if self.unsupported_numbers:
            parts.append("numbers not in the facts: " + ", ".join(self.unsupported_numbers))
        if self.unknown_ids:
            parts.append("ids not in the facts: " + ", ".join(self.unknown_ids))
        if self.false_claims:
            parts.append("actions claimed but not taken: " + " | ".join(self.false_claims))
        if self.unsafe_commands:
            commands = ", ".join(self.unsafe_commands)
            parts.append(f"destructive commands not from the facts: {commands}")
        if self.tool_syntax:
            parts.append("a tool call written as text, not an answer")
        return "; ".join(parts) or "grounded"


@dataclass(frozen=True)
class Grounding:
    """What an answer may mention: the facts' numbers and identifiers, and the question's."""

    numbers: tuple[float, ...]
    ids: frozenset[str]
    citable: tuple[str, ...]
    strings: tuple[str, ...] = ()
    """The facts' strings as given (commands they suggest are matched against these)."""

    @classmethod
    def of(cls, facts: Mapping[str, Any], question: str = "") -> Grounding:
        numbers: list[float] = []
        strings: list[str] = []
        _walk(facts, numbers, strings)
        ids: set[str] = set()
        for text in [*strings, question]:
            ids.add(text.strip().lower())
            ids.update(tok.strip(".:").lower() for tok in _TOKEN_SPLIT.split(text) if tok)
        numbers += [value for value, _unit, _raw in _numbers_in(_ID.sub(" ", question))]
        return cls(tuple(numbers), frozenset(ids), tuple(citable_ids(facts)), tuple(strings))


def citable_ids(facts: Mapping[str, Any]) -> list[str]:
    """Run, case and job ids in ``facts``: what an answer should cite (in order, no repeats)."""
    found: dict[str, None] = {}

    def visit(value: Any) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                if key in {"run_id", "case_id", "job_id"} and isinstance(item, str | int):
                    found[str(item)] = None
                else:
                    visit(item)
        elif isinstance(value, list | tuple):
            for item in value:
                visit(item)

    visit(facts)
    return list(found)


def verify_answer(
    text: str, facts: Mapping[str, Any], question: str = "", strict: bool = False
) -> Verdict:
    """Check that every id and number in ``text`` is supported by ``facts`` or ``question``.

    ``strict``: 0, 1 and 2 need support too (:data:`ALWAYS_ALLOWED` is waived), for text whose
    every figure is a headline: a "0" there is a figure rounded away, not a generic count."""
    allowed = frozenset() if strict else ALWAYS_ALLOWED
    grounding = Grounding.of(facts, question)
    unknown: dict[str, None] = {}
    body = _LIST_MARKER.sub(" ", text.replace("\\_", "_"))  # Markdown's 12\_1 is job 12_1
    for match in _DATE.finditer(body):
        if match.group(0).lower() not in grounding.ids and not _date_in(match.group(0), grounding):
            unknown[match.group(0)] = None
    body = _DATE.sub(" ", body)
    for match in _ID.finditer(body):
        token = match.group(0).rstrip(".:/-")
        if token.lower() not in grounding.ids and not _is_unit_like(token):
            unknown[token] = None
    body = _ID.sub(" ", body)
    unsupported = [
        raw
        for value, unit, raw in _numbers_in(body)
        if not _supported(value, unit, raw, grounding.numbers, allowed)
    ]
    lowered = text.lower()
    cited = tuple(i for i in grounding.citable if i.lower() in lowered)
    claims = tuple(false_claims(text, facts))
    commands = tuple(unsafe_commands(text, grounding.strings))
    syntax = bool(_TOOL_SYNTAX.search(text))
    return Verdict(
        ok=not unknown and not unsupported and not claims and not commands and not syntax,
        unsupported_numbers=tuple(dict.fromkeys(unsupported)),
        unknown_ids=tuple(unknown),
        cited_ids=cited,
        false_claims=claims,
        unsafe_commands=commands,
        tool_syntax=syntax,
    )


def ignored_refusals(text: str, refusals: Sequence[Mapping[str, Any]]) -> list[str]:
    """Names a tool refused as unknown that ``text`` does not refuse too, one line each.

    An answer must say so in a sentence naming the name ("there is no partition debgu", "debgu
    is unknown", "did you mean debug?"); one that goes on as if the name were real ("no job is
    pending in debgu: nothing blocks the queue") is the confident wrong answer the refusal
    exists to prevent."""
    problems = []
    for facts in refusals:
        unknown = facts.get("unknown") or {}
        name, what = str(unknown.get("name", "")), str(unknown.get("what", "name"))
        said = re.compile(
            rf"\b(?:no|not? an?|isn't an?|unknown|no such|not (?:a )?known)\s+{re.escape(what)}\b|"
            r"\b(?:not|never)\s+(?:exist|known|found)|\bdoes(?:n't| not) exist|\bunknown\b|"
            r"\bdid you mean\b",
            re.I,
        )
        sentences = [s for s in _SENTENCE.split(text) if name.lower() in s.lower()]
        if not any(said.search(s) for s in sentences):
            problems.append(f"the answer does not say there is no {what} {name!r}")
    return problems


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


COMPUTED_TEXT = frozenset({"verdict", "outcome", "expected_start_note", "text", "meaning"})
"""Keys whose strings we compute from the facts (a job's verdict, an advice's outcome): their
numbers ("until about 23:44", "asks for 8 CPUs") ground an answer that repeats them. Strings
from outside (job names, comments) never ground numbers."""


VIEW_ONLY = frozenset({"gantt"})
"""Keys holding data for the app's views (every task's start and end in a Gantt trace): shown to
no model and grounding nothing, or any task time a model invented would pass."""


def _walk(value: Any, numbers: list[float], strings: list[str], key: str = "") -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        if math.isfinite(value):
            numbers.append(float(value))
    elif isinstance(value, str):
        strings.append(value)
        if key in COMPUTED_TEXT:
            numbers += [number for number, _unit, _raw in _numbers_in(_ID.sub(" ", value))]
    elif isinstance(value, Mapping):
        for name, item in value.items():
            if name in VIEW_ONLY:
                continue
            strings.append(str(name))
            _walk(item, numbers, strings, str(name))
    elif isinstance(value, list | tuple | set | frozenset):
        numbers.append(float(len(value)))
        for item in value:
            _walk(item, numbers, strings)


def _numbers_in(text: str) -> list[tuple[float, str, str]]:
    """(value, unit, raw text) of every number in ``text``; unit lower-cased ('' if none)."""
    found = []
    for match in _NUMBER.finditer(text):
        raw_number, unit = match.group(1), (match.group(2) or "").lower()
        if unit and unit not in _UNITS:
            unit = ""
        value = float(raw_number.replace(",", ""))
        found.append((value, unit, match.group(0).strip()))
    return found


def _supported(
    value: float,
    unit: str,
    raw: str,
    numbers: Iterable[float],
    allowed: frozenset[float] = ALWAYS_ALLOWED,
) -> bool:
    magnitude = abs(value)
    if magnitude in allowed:
        return True
    digits = _NUMBER.match(raw)
    number = digits.group(1) if digits else raw
    mantissa = number.lstrip("+-").replace(",", "").lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    half_step = 0.5 * 10.0 ** (-decimals)
    scales = {1.0, _UNITS.get(unit, 1.0)}
    if unit in {"%", "percent"}:
        scales.add(1.0)
    for scale in scales:
        target = magnitude * scale
        tolerance = half_step * scale * (1 + 1e-9) + 1e-12 * max(target, 1.0)
        if any(abs(abs(n) - target) <= tolerance for n in numbers):
            return True
    return False


def _date_in(date: str, grounding: Grounding) -> bool:
    return any(date.lower() in known for known in grounding.ids)


def _is_unit_like(token: str) -> bool:
    """Tokens such as ``m5`` or ``x2`` that are notation, not identifiers."""
    return bool(re.fullmatch(r"[xX×]\d+(\.\d+)?", token))
