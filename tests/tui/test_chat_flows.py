"""The main flows, end to end through the app on the scripted session."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from sim.errors import ServiceUnavailable
from tests.tui.pilot_steps import ask, chat_screen, settle
from tests.tui.scripted_session import ScriptedSession
from tui.app import WassChatApp
from tui.conversation_store import ConversationStore
from tui.widgets.chat_input import ChatInput
from tui.widgets.chat_log import AnswerMessage, Notice, UserMessage
from tui.widgets.gantt import GanttChart
from tui.widgets.status_header import StatusHeader
from tui.widgets.tool_call import ToolCallBlock
from wass_chat.agent.events import ChatEvent, Final, Token


async def test_ask_streams_a_markdown_answer(make_app: Callable[..., WassChatApp]) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ask(pilot, "why did mAdd go to node-2?")
        screen = chat_screen(pilot)
        assert [m.text for m in screen.query(UserMessage)] == ["why did mAdd go to node-2?"]
        answers = list(screen.query(AnswerMessage))
        assert len(answers) == 1
        assert "went to `node-2`" in answers[0].text
        assert any("run-1" in n.text for n in screen.query(Notice))
        assert screen.query_one(StatusHeader).mode == "offline"


async def test_simulate_draws_the_gantt_in_the_run_panel(
    make_app: Callable[..., WassChatApp],
) -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await ask(pilot, "/simulate montage-demo heft")
        screen = chat_screen(pilot)
        blocks = list(screen.query(ToolCallBlock))
        assert [b.call.name for b in blocks] == ["simulate", "similar_cases"]
        assert all(b.result is not None for b in blocks)
        assert screen.panel_open
        gantt = screen.query_one("#run-panel").query_one(GanttChart)
        assert gantt.trace is not None and gantt.trace.makespan == 100.0
        drawn = str(gantt.render())
        assert ("node-1" in drawn and "node-2" in drawn and "█" in drawn) or "mAdd" in drawn


async def test_a_session_that_fails_to_open_is_reported(store: ConversationStore) -> None:
    def broken() -> ScriptedSession:
        raise ServiceUnavailable("no Ollama at http://127.0.0.1:1")

    async with WassChatApp(broken, store).run_test(size=(80, 24)) as pilot:
        await ask(pilot, "hello")
        screen = chat_screen(pilot)
        assert screen.query_one(StatusHeader).mode == "unavailable"
        notices = [n.text for n in screen.query(Notice)]
        assert any("could not start" in n and "no Ollama" in n for n in notices)
        assert any(n.startswith("The agent failed") for n in notices)


@dataclass
class BlockingSession(ScriptedSession):
    """An agent that blocks its event loop (as a careless tool would) until released."""

    release: threading.Event = field(default_factory=threading.Event)

    async def send(self, text: str) -> AsyncIterator[ChatEvent]:
        self.sent.append(text)
        yield Token("slow ")
        self.release.wait(timeout=30)  # blocks the session's whole event loop
        yield Token("but done")
        yield Final("slow but done")


async def test_blocking_agent_work_never_freezes_the_ui(store: ConversationStore) -> None:
    session = BlockingSession()
    async with WassChatApp(lambda: session, store).run_test(size=(80, 24)) as pilot:
        await ask(pilot, "anything", wait=False)
        await pilot.press(*"typed")  # handled while the agent's loop is blocked
        assert pilot.app.screen.query_one(ChatInput).value == "typed"
        assert chat_screen(pilot).answering
        session.release.set()
        await settle(pilot)
        assert not chat_screen(pilot).answering
        assert chat_screen(pilot).query_one(AnswerMessage).text.strip() == "slow but done"


async def test_find_in_the_conversation_and_copy_the_found_answer(
    make_app: Callable[..., WassChatApp],
) -> None:
    from tui.widgets.search_bar import SearchBar

    async with make_app().run_test(size=(100, 30)) as pilot:
        await ask(pilot, "why did mAdd go to node-2?")
        await ask(pilot, "/simulate montage-demo heft")
        await pilot.press("ctrl+f", *"inputs were")
        await settle(pilot)
        screen = chat_screen(pilot)
        bar = screen.query_one(SearchBar)
        assert str(bar.query_one("#find-count").render()) == "1 of 1"
        found = bar.current
        assert isinstance(found, AnswerMessage) and found.has_class("-match")
        assert "inputs were there" in found.text
        await pilot.press("ctrl+y")
        assert pilot.app.clipboard == found.text
        await pilot.press("escape")
        await settle(pilot)
        assert not bar.display and not found.has_class("-match")
        await pilot.press("ctrl+y")  # no search: the last answer
        last = list(screen.query(AnswerMessage))[-1]
        assert pilot.app.clipboard == last.text and "montage-demo" in last.text
