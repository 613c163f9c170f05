"""Conversations are saved atomically after each turn and ``--resume`` rebuilds the screen."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tui.pilot_steps import ask, chat_screen, settle
from tui.app import WassChatApp
from tui.conversation_store import (
    Conversation,
    ConversationFileError,
    ConversationStore,
    Entry,
)
from tui.widgets.chat_input import ChatInput
from tui.widgets.chat_log import AnswerMessage, UserMessage
from tui.widgets.gantt import GanttChart
from tui.widgets.tool_call import ToolCallBlock


async def test_a_turn_is_saved_and_resumed(
    make_app: Callable[..., WassChatApp], store: ConversationStore
) -> None:
    async with make_app().run_test(size=(120, 30)) as pilot:
        await ask(pilot, "/simulate")
        await ask(pilot, "why?")
        saved_id = chat_screen(pilot).conversation.id
    assert store.ids() == [saved_id]
    saved = store.latest()
    assert saved is not None
    assert saved.user_messages == ["/simulate", "why?"]
    assert saved.gantt is not None and saved.gantt["makespan"] == 100.0
    assert [e.role for e in saved.entries].count("tool") == 2

    async with make_app(saved).run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = chat_screen(pilot)
        assert [m.text for m in screen.query(UserMessage)] == ["/simulate", "why?"]
        assert len(screen.query(AnswerMessage)) == 2
        assert [b.call.name for b in screen.query(ToolCallBlock)] == ["simulate", "similar_cases"]
        assert screen.query_one(GanttChart).trace is not None
        prompt = screen.query_one(ChatInput)
        await pilot.press("up")
        assert prompt.value == "why?"
        await ask(pilot, "and now?")
    resumed = store.load(saved_id)
    assert resumed.user_messages == ["/simulate", "why?", "and now?"]


def test_store_round_trip_and_latest_by_write_time(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    assert store.latest() is None
    older, newer = Conversation.new(), Conversation.new()
    newer.entries.append(Entry("user", "hello"))
    store.save(newer)
    older.entries.append(Entry("tool", "ok", {"name": "simulate", "summary": "ok"}))
    path = store.save(older)
    assert not list(tmp_path.glob(".*.tmp"))  # atomic: no temp file left behind
    assert store.latest() == store.load(older.id)
    assert json.loads(path.read_text())["entries"][0]["tool"]["name"] == "simulate"
    assert newer.title == "hello"


def test_a_broken_file_names_every_problem(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text(json.dumps({"entries": [{"role": "robot"}]}))
    with pytest.raises(ConversationFileError) as caught:
        ConversationStore(tmp_path).load("bad")
    assert len(caught.value.problems) == 3  # the role, and the missing id and created
    (tmp_path / "worse.json").write_text("{")
    with pytest.raises(ConversationFileError):
        ConversationStore(tmp_path).load("worse")


async def test_conversations_can_be_switched_renamed_and_deleted(
    make_app: Callable[..., WassChatApp], store: ConversationStore
) -> None:
    from tui.screens.conversations import ConversationsScreen

    async with make_app().run_test(size=(120, 36)) as pilot:
        await ask(pilot, "first question")
        first_id = chat_screen(pilot).conversation.id
        await pilot.press("ctrl+n")
        await ask(pilot, "second question")
        await pilot.press("ctrl+o")
        await settle(pilot)
        listing = pilot.app.screen
        assert isinstance(listing, ConversationsScreen)
        table = listing.query_one("#conversations")
        titles = [str(table.get_row_at(i)[0]).strip() for i in range(table.row_count)]
        assert titles == ["● second question", "first question"]
        await pilot.press("down", "r", *"capacity", "enter")  # rename the first one
        await settle(pilot)
        assert store.load(first_id).title == "capacity"
        await pilot.press("enter")  # open it
        await settle(pilot)
        screen = chat_screen(pilot)
        assert screen.conversation.id == first_id
        assert [m.text for m in screen.query(UserMessage)] == ["first question"]
        await pilot.press("ctrl+o")
        await settle(pilot)
        await pilot.press("d", "d", "escape")  # the open one (highlighted first): deleted
        await settle(pilot)
        assert first_id not in store.ids() and len(store.ids()) == 1
        assert chat_screen(pilot).conversation.id != first_id
        assert not chat_screen(pilot).query(UserMessage)


async def test_resume_offers_every_saved_conversation(
    store: ConversationStore, session: object, tmp_path: Path
) -> None:
    from tui.screens.conversations import ConversationsScreen

    for text in ("older", "newer"):
        conversation = Conversation.new()
        conversation.entries.append(Entry("user", text))
        store.save(conversation)
    latest = store.latest()
    assert latest is not None
    app = WassChatApp(lambda: session, store, latest, list_conversations=True)  # type: ignore[arg-type, return-value]
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConversationsScreen)
        assert pilot.app.screen.query_one("#conversations").row_count == 2
