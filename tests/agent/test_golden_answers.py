"""Every kind's answer and check is what ``golden_answers.json`` recorded (see
:mod:`tests.agent.golden_answers`): moving the answers' code changes no rendering, no verdict
number and no checker finding, in the chat, ``ask`` or the report's summary."""

from __future__ import annotations

import json

from tests.agent.golden_answers import EXPECTED, facts_by_kind, golden


def test_every_kind_has_golden_facts() -> None:
    from wass_chat.answers.kinds import KINDS

    assert set(facts_by_kind()) == set(KINDS)


def test_answers_and_checks_are_the_recorded_ones() -> None:
    now, recorded = golden(), EXPECTED.read_text()
    if now != recorded:  # name the first kind that differs, not a 100 KB diff
        before, after = json.loads(recorded), json.loads(now)
        differ = [
            kind
            for kind in sorted(set(before["answers"]) | set(after["answers"]))
            if before["answers"].get(kind) != after["answers"].get(kind)
        ]
        differ += ["report"] if before["report"] != after["report"] else []
        raise AssertionError(f"answers differ from {EXPECTED.name} for: {differ}")
