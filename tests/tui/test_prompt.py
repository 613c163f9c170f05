"""The prompt: cancelling with Escape, input history, slash-command completion."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.tui.pilot_steps import ask, chat_screen, settle
from tests.tui.scripted_session import ScriptedSession
from tui.app import WassChatApp
from tui.widgets.chat_input import ChatInput, SlashCommandSuggester
from tui.widgets.chat_log import AnswerMessage, Notice
from tui.widgets.status_header import StatusHeader


async def test_escape_cancels_a_running_answer(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "slow answer please", wait=False)
        for _ in range(500):  # until some tokens have been streamed
            await asyncio.sleep(0.02)
            answers = list(chat_screen(pilot).query(AnswerMessage))
            if answers and answers[0].text.count("word") >= 3:
                break
        screen = chat_screen(pilot)
        assert screen.answering
        assert screen.query_one(StatusHeader).activity.startswith("answering")
        await pilot.press("escape")
        await settle(pilot)
        assert not screen.answering
        assert session.cancelled == 1
        assert session.stream_closed == 1
        streamed = screen.query_one(AnswerMessage).text
        assert "word2" in streamed and "never reached" not in streamed
        assert any(n.text == "Answer cancelled." for n in screen.query(Notice))
        assert screen.query_one(StatusHeader).activity == "ready"
        await ask(pilot, "still alive?")  # the chat keeps working after a cancel
        assert len(screen.query(AnswerMessage)) == 2


async def test_messages_sent_while_answering_are_refused(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "slow", wait=False)
        await asyncio.sleep(0.1)
        prompt = pilot.app.screen.query_one(ChatInput)
        prompt.value = "second"
        await pilot.press("enter")
        assert session.sent == ["slow"]
        assert prompt.value == "second"  # kept, to send once the answer is done
        await pilot.press("escape")
        await settle(pilot)


async def test_up_and_down_walk_the_history_and_keep_the_draft(
    make_app: Callable[..., WassChatApp],
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "first question")
        await ask(pilot, "second question")
        prompt = pilot.app.screen.query_one(ChatInput)
        prompt.value = "draft"
        await pilot.press("up")
        assert prompt.value == "second question"
        await pilot.press("up", "up")
        assert prompt.value == "first question"
        await pilot.press("down")
        assert prompt.value == "second question"
        await pilot.press("down")
        assert prompt.value == "draft"


async def test_tab_completes_a_slash_command(make_app: Callable[..., WassChatApp]) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        prompt = pilot.app.screen.query_one(ChatInput)
        assert prompt.has_focus
        await pilot.press("/", "s", "i")
        await settle(pilot)
        await pilot.press("tab")
        assert prompt.value == "/simulate "
        assert prompt.has_focus


async def test_suggester_completes_only_command_names() -> None:
    suggester = SlashCommandSuggester()
    assert await suggester.get_suggestion("/wh") == "/whatif "
    assert await suggester.get_suggestion("/su") == "/submit "
    assert await suggester.get_suggestion("/simulate") is None
    assert await suggester.get_suggestion("/simulate x") is None
    assert await suggester.get_suggestion("hello") is None
