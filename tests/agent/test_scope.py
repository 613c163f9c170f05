"""Questions no tool answers are refused, in both modes, and never answered as something else."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agent.fake_ollama import MODEL, FakeOllama, Reply
from wass_chat.agent.events import ChatEvent, Final, ToolCall
from wass_chat.agent.online import OnlineSession
from wass_chat.agent.session import open_session
from wass_chat.agent.understanding.intents import INTENTS
from wass_chat.agent.understanding.nlu_eval import evaluate, load_questions, refused_or_asked_back
from wass_chat.agent.understanding.router import route
from wass_chat.agent.understanding.scope import capabilities
from wass_chat.config import Settings

pytestmark = pytest.mark.xdist_group("agent-home")

REPORTED = (
    "is the gpu on n4 being used?",
    "how do I add a user to an account?",
    "which version of slurm",
    "which jobs will finish in the next 10 minutes?",  # was the pending queue's overview
)
"""The questions of issue 41 that got a confident answer about something else."""


async def ask(session: Any, text: str) -> list[ChatEvent]:
    return [event async for event in session.send(text)]


@pytest.mark.parametrize("split", ["scope-tuning", "scope-heldout"])
def test_every_out_of_scope_question_is_refused_or_asked_back(split: str) -> None:
    report = evaluate(split)
    questions, _ = load_questions(split)
    out_of_scope = [q for q in questions if q.out_of_scope]
    assert len(out_of_scope) >= len(questions) - 1  # the tuning set keeps one neighbour
    answered = [e["text"] for e in report.errors if e["got"][0] not in ("none", "clarify")]
    assert report.out_of_scope_answered == 0, answered
    assert report.out_of_scope_refused == report.out_of_scope == len(out_of_scope)
    assert report.wrong_actions == 0 and report.side_effecting_misroutes == 0


@pytest.mark.parametrize("text", REPORTED)
def test_the_reported_questions_are_refused_with_what_can_be_answered(text: str) -> None:
    intent = route(text)
    assert intent.tool == "" and intent.refused
    assert intent.reply.startswith("I can't answer that here")
    offered = intent.reply.split("What I can answer: ", 1)[1]
    tools = [spec for spec in INTENTS if spec.tool]
    assert len(tools) >= 15  # the list comes from the intent table, one phrase per tool
    for spec in tools:
        assert spec.topic and spec.topic in offered, spec.name


def test_a_nodes_live_gpu_reading_is_refused_naming_what_is_answered_instead() -> None:
    reply = route("is the gpu on n4 being used?").reply
    assert reply.startswith("I can't answer that here")
    assert "live readings of a node's GPUs" in reply and "`/gpu`" in reply
    assert route("what's nvidia-smi saying on n2?").refused
    assert "scontrol --version" in route("which version of slurm").reply


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("which GPU jobs are idle right now?", {}),
        ("who wasted the most GPU hours last month?", {"period": "30d", "count": 5}),
        ("how well did job 42 use its GPUs?", {"jobid": "42"}),
        ("gpu waste of alice in may", {"user": "alice", "period": "2026-05", "count": 5}),
    ],
)
def test_how_jobs_used_their_gpus_is_answered_by_gpu_usage(
    text: str, arguments: dict[str, Any]
) -> None:
    from datetime import date

    intent = route(text, today=date(2026, 11, 23))
    assert (intent.tool, intent.arguments) == ("gpu_usage", arguments)


@pytest.mark.parametrize(
    "text",
    [
        "what if n1 is resumed?",
        "what if we undrain n[1-2]?",
        "what would happen if node n1 came back online",
    ],
)
def test_a_drained_nodes_return_is_refused_not_simulated_on_the_demo(text: str) -> None:
    """It got the demo workflow's simulation (no node n1 in it) from the workflow what-if."""
    intent = route(text)
    assert intent.tool == "" and intent.refused
    assert "return to service" in intent.reply and "1 more node" in intent.reply


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("what if we raise the time limit of the long partition to 48 hours?", "cluster_whatif"),
        ("are the gpu nodes busy right now?", "cluster_status"),
        ("how much energy did the gpu partition use last month?", "energy_usage"),
        ("accounting for alice in may", "sacct_summary"),
        ("how efficient was job 42?", "efficiency"),
        ("what's the gpu partition's queue like right now", "queue_overview"),
        ("if we add 8 GPU nodes, how much shorter are waits?", "cluster_whatif"),
        ("why is n1 drained?", "cluster_status"),
        ("what if the debug partition had 1 more node?", "cluster_whatif"),
        ("when does the maintenance reservation end?", "cluster_status"),
        ("what reservations are there?", "cluster_status"),
        ("is n3 reserved tonight?", "cluster_status"),
        ("when will job 14 end?", "job_why"),
        ("what is the max time limit in the small partition?", "cluster_status"),
        ("what are the limits of partition gpu?", "cluster_status"),
        ("which partition should I use for a 2 hour job?", "cluster_status"),
        ("which jobs ended in the last hour?", "sacct_summary"),
    ],
)
def test_in_scope_neighbours_of_the_refused_topics_still_run_their_tool(
    text: str, tool: str
) -> None:
    assert route(text).tool == tool


def test_an_unknown_workflow_name_is_passed_as_typed_not_replaced_by_the_current_run() -> None:
    questions, _ = load_questions("scope-tuning")
    for q in questions:
        if q.unknown:
            assert refused_or_asked_back(q, route(q.text)), q.text
    assert route("compare schedulers on blast-12").arguments["workflow"] == "blast-12"


@pytest.mark.parametrize(
    "text",
    [
        "simulate montage-61",
        "compare schedulers on blast-12",
        "similar cases for sipht-30",
        "status of run demo-montage-60-foo",
    ],
)
async def test_an_unknown_name_ends_in_an_error_naming_the_real_ones(
    settings: Settings, text: str
) -> None:
    session = open_session(settings, offline=True)
    events = await ask(session, text)
    answer = events[-1]
    assert isinstance(answer, Final)
    assert answer.facts["kind"] == "error", answer.text
    assert "so I did not answer" in answer.text, answer.text
    assert "Did you mean" in answer.text or "Workflows: `genomics-49`" in answer.text, answer.text


async def test_online_a_refused_question_never_reaches_the_model_or_a_tool(
    settings: Settings,
) -> None:
    script = [Reply(tool_calls=[("cluster_status", {})]), Reply("All 4 nodes are idle.")]
    with FakeOllama(script) as server:
        session = open_session(
            settings.model_copy(update={"ollama_host": server.url, "ollama_model": MODEL})
        )
        assert isinstance(session, OnlineSession)
        events = await ask(session, "which version of slurm")
        assert server.chat_requests == []
    assert not [e for e in events if isinstance(e, ToolCall)]
    answer = events[-1]
    assert isinstance(answer, Final) and answer.text.startswith("I can't answer that here")
    assert capabilities() in answer.text
