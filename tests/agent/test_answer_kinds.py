"""Every kind of answer is one module of ``wass_chat/answers/`` and one row of ``KINDS``: the
table the chat, ``ask`` and the MCP server render through, iterated here as SAGA's suite
iterates its schedulers' registry."""

from __future__ import annotations

import importlib
import typing
from pathlib import Path

import wass_chat.answers
from wass_chat.answers.kinds import KINDS, RESULTS, render, with_verdict

NOT_KINDS = {"__init__", "kind", "kinds", "markdown"}
"""The package's modules that are not a kind: the row, the table, how verdicts print."""


def test_every_module_of_the_package_is_one_kind_and_one_row() -> None:
    folder = Path(wass_chat.answers.__file__).parent
    modules = {path.stem for path in folder.glob("*.py")} - NOT_KINDS
    assert modules == set(KINDS) - {RESULTS.name}
    for name in modules:
        row = importlib.import_module(f"wass_chat.answers.{name}").KIND
        assert KINDS[name] is row and row.name == name
        assert row.about and row.render.__module__ == f"wass_chat.answers.{name}"


UNTYPED = {
    "help",
    "results",
    "submission_outcome",
    "cancel_plan",
    "gpu_cancel_plan",
    "cancel_outcome",
}
"""Kinds whose facts declare no TypedDict yet: the help text, the composite, and the plans and
outcomes the session and the MCP server make around the approval gate."""


def test_every_other_kind_names_its_facts_type_and_it_declares_the_kind() -> None:
    assert {row.name for row in KINDS.values() if row.facts is None} == UNTYPED
    for row in (row for row in KINDS.values() if row.facts is not None):
        assert "kind" in typing.get_type_hints(row.facts), row.name


def test_render_and_with_verdict_go_through_the_table() -> None:
    assert render({"kind": "no-such-kind"}) == "(no rendering for facts of kind 'no-such-kind')"
    assert render({"kind": "help", "text": "hello"}) == "hello"
    facts = {
        "kind": "cases",
        "subject": "w",
        "cases": [
            {"case_id": "a", "similarity": 0.9, "scheduler": "heft", "makespan_s": 9.0},
            {"case_id": "b", "similarity": 0.8, "scheduler": "minmin", "makespan_s": 5.0},
        ],
    }
    assert with_verdict(facts)["verdict"] == {
        "fastest_case_id": "b",
        "fastest_case_scheduler": "minmin",
    }
    assert with_verdict({"kind": "help", "text": "x"}) == {"kind": "help", "text": "x"}
