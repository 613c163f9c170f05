"""The offline session answers the demo question set from real simulations and retrieval."""

from __future__ import annotations

from typing import Any

import pytest

from policy.base import plan_and_simulate
from policy.registry import get_scheduler
from sim.demo import demo_platform, demo_workflow
from sim.engine import simulate
from wass_chat.agent.events import (
    ApprovalRequest,
    ChatEvent,
    Final,
    ModeChanged,
    ToolCall,
    ToolResult,
)
from wass_chat.agent.facts.sources import Sources
from wass_chat.agent.session import OfflineSession, open_session
from wass_chat.config import Settings

pytestmark = pytest.mark.xdist_group("agent-home")

RUN = "demo-genomics-49-heft"


async def ask(session: Any, text: str) -> list[ChatEvent]:
    return [event async for event in session.send(text)]


def final(events: list[ChatEvent]) -> Final:
    last = events[-1]
    assert isinstance(last, Final)
    return last


async def test_unreachable_ollama_gives_offline_mode(settings: Settings) -> None:
    """A refused connection means offline at once (no timed bound: a loaded machine is slow)."""
    session = open_session(settings)
    events = await ask(session, "hello")
    assert isinstance(events[0], ModeChanged) and events[0].mode == "offline"
    assert "127.0.0.1:9" in events[0].detail
    assert session.mode == "offline"


async def test_why_answer_cites_cases_and_a_counterfactual_that_matches_a_simulation(
    settings: Settings,
) -> None:
    session = open_session(settings, offline=True)
    events = await ask(session, f"why did task merge_bams of run {RUN} go to node gpu02?")
    answer = final(events)
    facts = answer.facts
    assert facts["kind"] == "placement" and facts["task"] == "merge_bams"
    assert len(facts["cases"]) >= 3
    for case in facts["cases"][:3]:
        assert case["case_id"] in answer.text and case["case_id"] in answer.cited_ids
    assert RUN in answer.cited_ids
    # The counterfactual is a simulation: redo it independently and compare the numbers.
    run = Sources(settings).run(RUN)
    alternative = facts["alternatives"][0]
    moved = {**run.placements, "merge_bams": alternative["node"]}
    again = simulate(run.workflow, run.platform, run.schedule(moved), settings.network_model)
    assert again.makespan == pytest.approx(alternative["makespan_s"], rel=1e-9)
    assert f"{alternative['makespan_s']:.1f} s" in answer.text
    assert facts["locality"]["input_bytes"] > 0
    assert str(facts["locality"]["input_bytes"]) in answer.text


async def test_what_if_adding_nodes_reports_the_simulated_change(settings: Settings) -> None:
    session = open_session(settings, offline=True)
    await ask(session, f"/explain {RUN} merge_bams")  # makes RUN the conversation's run
    answer = final(await ask(session, "what if I add 4 nodes?"))
    facts = answer.facts
    assert facts["kind"] == "simulation" and facts["run_id"] == RUN
    assert facts["variant"]["nodes"] == facts["baseline"]["nodes"] + 4
    baseline = plan_and_simulate(
        get_scheduler("heft"), demo_workflow("genomics-49"), demo_platform(), settings.network_model
    )
    assert facts["baseline"]["makespan_s"] == pytest.approx(baseline.makespan)
    assert facts["delta_s"] == pytest.approx(
        facts["variant"]["makespan_s"] - facts["baseline"]["makespan_s"]
    )
    assert "makespan" in answer.text and f"{facts['variant']['makespan_s']:.1f} s" in answer.text


async def test_submit_shows_the_plan_and_waits_for_approval(settings: Settings) -> None:
    session = open_session(settings, offline=True)
    assert isinstance(session, OfflineSession)
    events = await ask(session, "submit montage.json")
    requests = [e for e in events if isinstance(e, ApprovalRequest)]
    assert len(requests) == 1
    plan = requests[0].plan
    assert plan["workflow"] == "montage-60" and len(plan["jobs"]) == len(
        demo_workflow("montage-60")
    )
    assert "Nothing has been submitted" in final(events).text
    assert session.gate.executed == []
    rejected = await session.resolve_approval(requests[0].request_id, "reject")
    assert rejected.data["executed"] is False and session.gate.executed == []
    again = await session.resolve_approval(requests[0].request_id, "approve")
    assert again.error is not None and session.gate.executed == []


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("/status", "cluster"),
        (f"/status {RUN}", "run_status"),
        ("/cases genomics-49 3", "cases"),
        ("compare schedulers on fork-join-20", "comparison"),
        ("/simulate montage-60 scheduler=cpop", "simulation"),
        ("/whatif bandwidth 2", "simulation"),
    ],
)
async def test_other_questions_are_answered_from_facts(
    settings: Settings, question: str, kind: str
) -> None:
    events = await ask(open_session(settings, offline=True), question)
    assert any(isinstance(e, ToolCall) for e in events)
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.error is None, result.summary
    assert final(events).facts["kind"] == kind


async def test_bad_references_are_errors_in_the_answer_not_crashes(settings: Settings) -> None:
    answer = final(await ask(open_session(settings, offline=True), "/explain demo-nope-heft x"))
    assert answer.facts["kind"] == "error" and "demo-nope-heft" in answer.text
