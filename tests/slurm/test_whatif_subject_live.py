"""On a live cluster, a what-if that names no run is the cluster's, never a demo simulation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.slurm.conftest import Cluster
from wass_chat.agent.events import ChatEvent, Final, ToolCall
from wass_chat.agent.session import open_session
from wass_chat.config import Settings

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]


async def _ask(session: Any, text: str) -> list[ChatEvent]:
    return [event async for event in session.send(text)]


def _calls(events: list[ChatEvent]) -> list[ToolCall]:
    return [e for e in events if isinstance(e, ToolCall)]


async def test_an_unqualified_what_if_replays_the_live_clusters_workload(
    cluster: Cluster, wass_home: Path
) -> None:
    settings = Settings(home=wass_home, ollama_host="http://127.0.0.1:9", ollama_timeout=0.5)
    session = open_session(settings, offline=True)
    assert session.cluster_live()

    events = await _ask(session, "what if I add 2 nodes?")
    calls = _calls(events)
    assert [c.name for c in calls] == ["cluster_whatif"]
    assert calls[0].arguments.get("add_nodes") == 2
    answer = events[-1]
    assert isinstance(answer, Final)
    assert answer.facts.get("kind") != "simulation" and "demo-" not in answer.text

    # Once a run is the conversation's subject, the same words are about that run.
    await _ask(session, "simulate montage-60")
    events = await _ask(session, "what if I add 2 nodes?")
    assert [c.name for c in _calls(events)] == ["simulate"]
