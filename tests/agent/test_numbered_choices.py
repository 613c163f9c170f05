"""A numbered "did you mean" choice can be picked by its number (issue #41, item 9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wass_chat.agent.session import open_session
from wass_chat.agent.understanding.router import chosen_number, route, route_choice
from wass_chat.config import Settings

UNREACHABLE = "http://127.0.0.1:9"
AMBIGUOUS = "what if we add 8 nodes to the cluster"
"""A run's what-if or the cluster's: the router asks back with numbered choices."""


@pytest.mark.parametrize(
    ("text", "number"),
    [("2", 2), (" 1. ", 1), ("(3)", 3), ("option 2", 2), ("#1", 1), ("12", None), ("job 2", None)],
)
def test_a_number_typed_on_its_own_is_a_choice(text: str, number: int | None) -> None:
    assert chosen_number(text) == number


def test_picking_a_choice_routes_the_question_as_that_choice_without_asking_again() -> None:
    asked = route(AMBIGUOUS)
    assert asked.tool == "" and len(asked.readings) >= 2, asked
    for k, intent in enumerate(asked.readings, 1):
        assert f"{k}. " in asked.reply
        picked = route_choice(AMBIGUOUS, intent)
        assert picked.readings == () and (picked.tool or picked.name == "clarify"), picked
    picked = route_choice(AMBIGUOUS, "cluster_whatif")
    assert picked.tool == "cluster_whatif" and picked.arguments, picked


def test_the_session_takes_the_number_after_asking_back_and_only_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No live cluster: on one (the Slurm tests' session fixture exports SLURM_CONF for the rest
    # of its worker) an unqualified what-if is the cluster's, and nothing is asked back.
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "no-slurm.conf"))
    session = open_session(Settings(home=tmp_path, ollama_host=UNREACHABLE), offline=True)
    asked = session._routed(AMBIGUOUS)
    assert asked.tool == ""
    which = asked.reply.splitlines()
    number = next(
        k for k, intent in enumerate(route(AMBIGUOUS).readings, 1) if intent == "cluster_whatif"
    )
    assert any(line.startswith(f"{number}. ") for line in which)
    picked = session._routed(str(number))
    assert picked.tool == "cluster_whatif"
    # The choice is used once: the same number again is an ordinary message.
    assert session._routed(str(number)).tool != "cluster_whatif"
