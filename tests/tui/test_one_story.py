"""The app tells one story (issue 31 item 4): the header says whether Slurm answers and which
engine does, the greeting offers live-cluster questions only when a cluster answers, and the run
panel is about one workflow at a time.

The ranking and the cases on the real agent are in ``test_one_story_real.py``; the header and
greeting with a real cluster answering in ``tests/slurm/test_app_live.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from tests.tui.pilot_steps import MOUNT_REFRESHES, ask, chat_screen, settle
from tests.tui.scripted_session import ScriptedSession
from tui.app import WassChatApp
from tui.conversation_store import ConversationStore
from tui.slurm_status import SlurmStatus
from tui.widgets.chat_input import ChatInput
from tui.widgets.chat_log import AnswerMessage
from tui.widgets.gantt import GanttChart
from tui.widgets.run_panel import RunPanel
from tui.widgets.status_header import StatusHeader
from tui.widgets.welcome import LIVE_QUESTIONS, Welcome
from wass_chat.agent.tools import GATED_TOOLS, TOOL_SPECS
from wass_chat.agent.understanding.router import route


def _label(pilot: Pilot[None], selector: str) -> str:
    return str(chat_screen(pilot).query_one(selector).render())


async def test_with_no_slurm_the_header_says_so_and_the_greeting_offers_only_the_demo(
    make_app: Callable[..., WassChatApp], no_slurm: Path
) -> None:
    async with make_app().run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        header = chat_screen(pilot).query_one(StatusHeader)
        assert header.mode == "offline"  # the model's state
        assert header.slurm.state == "unreachable"
        assert _label(pilot, "#slurm-badge") == "Slurm: unreachable"
        assert str(no_slurm) in header.slurm.detail  # the real check names the missing file
        greeting = chat_screen(pilot).query_one(Welcome).source
        assert "/compare" in greeting
        assert not any(question in greeting for question in LIVE_QUESTIONS)
        assert "Slurm cluster answers" not in greeting


async def test_the_slurm_check_never_blocks_the_chat_and_a_cluster_brings_live_questions(
    session: ScriptedSession, store: ConversationStore
) -> None:
    """A check that takes its time (a silent controller) leaves the chat usable; when the
    cluster answers, the header says so and the greeting offers the live questions."""
    release = threading.Event()

    def slow_cluster() -> SlurmStatus:
        release.wait(timeout=60)
        return SlurmStatus("reachable", "Slurm 22.05.8 answers")

    app = WassChatApp(lambda: session, store, slurm_probe=slow_cluster)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = chat_screen(pilot)
        prompt = screen.query_one(ChatInput)
        prompt.focus()
        prompt.value = "why did mAdd go to node-2?"
        await pilot.press("enter")
        for _ in range(MOUNT_REFRESHES):  # settle() would wait for the blocked check too
            if screen.query(AnswerMessage) and not screen.answering:
                break
            await pilot.pause()
        assert [a.text for a in screen.query(AnswerMessage)]  # answered while Slurm is asked
        assert _label(pilot, "#slurm-badge") == "Slurm: checking…"
        assert not any(q in screen.query_one(Welcome).source for q in LIVE_QUESTIONS)
        release.set()
        await settle(pilot)
        assert screen.query_one(StatusHeader).slurm.state == "reachable"
        assert _label(pilot, "#slurm-badge") == "Slurm: reachable"
        greeting = screen.query_one(Welcome).source
        assert all(f"`{question}`" in greeting for question in LIVE_QUESTIONS)


def test_the_live_questions_the_greeting_offers_are_read_as_cluster_questions() -> None:
    """Each is answered from the cluster by the offline router, and none acts on it."""
    cluster_tools = {spec.name for spec in TOOL_SPECS if spec.owner == "cluster"} - GATED_TOOLS
    for question in LIVE_QUESTIONS:
        assert route(question).tool in cluster_tools, question


async def test_the_run_panel_shows_one_workflow_and_resumes_so(
    make_app: Callable[..., WassChatApp], store: ConversationStore
) -> None:
    async with make_app().run_test(size=(140, 40)) as pilot:
        await ask(pilot, "/simulate montage-demo heft")
        panel = chat_screen(pilot).query_one(RunPanel)
        assert panel.cases and panel.cases_subject == "montage-demo"
        assert _label(pilot, "#cases-heading") == "Similar cases to montage-demo"

        await ask(pilot, "/trace-of genomics-demo")  # another workflow's schedule
        assert panel.trace is not None and panel.trace.workflow == "genomics-demo"
        assert panel.cases == [] and panel.subject == "genomics-demo"
        assert "None retrieved for genomics-demo" in _label(pilot, "#cases-note")

        await ask(pilot, "/cases-of montage-demo")  # cases of yet another subject
        assert panel.trace is None
        assert chat_screen(pilot).query_one(GanttChart).trace is None
        assert "No schedule of montage-demo" in _label(pilot, "#run-title")
        assert panel.cases and panel.subject == "montage-demo"
        assert not chat_screen(pilot).query_one("#cases-note").display
        conversation_id = chat_screen(pilot).conversation.id

    saved = store.load(conversation_id)
    assert saved.gantt is None and saved.cases_subject == "montage-demo" and saved.cases
    async with make_app(saved).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        panel = chat_screen(pilot).query_one(RunPanel)
        assert panel.trace is None and panel.subject == "montage-demo" and panel.cases
