"""Layout and first impressions: the welcome, the run panel beside the chat, the report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tui.pilot_steps import ask, chat_screen, settle
from tests.tui.scripted_session import OFFLINE_SUMMARY
from tui.app import WassChatApp
from tui.conversation_store import ConversationStore
from tui.transcript_report import render_conversation_report
from tui.widgets.welcome import Welcome


async def test_an_empty_chat_greets_with_the_demo_and_three_questions(
    make_app: Callable[..., WassChatApp], store: ConversationStore
) -> None:
    async with make_app().run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = chat_screen(pilot)
        text = screen.query_one(Welcome).source
        for name in ("genomics-49", "montage-60", "epigenomics-50", "fork-join-20"):
            assert f"`{name}`" in text
        assert text.count("\n- `") == 3
        await ask(pilot, "why did mAdd go to node-2?")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert len(screen.query(Welcome)) == 1  # a new conversation is greeted again
    (saved,) = store.listing()
    conversation = store.load(saved.id)
    assert [e.role for e in conversation.entries] == ["user", "assistant", "notice"]
    texts = [e.text for e in conversation.entries]
    assert not any("Welcome" in t or "New conversation" in t for t in texts)


@pytest.mark.parametrize("width", [100, 109, 115, 120])
async def test_the_run_panel_sits_beside_the_chat_with_its_whole_title(
    make_app: Callable[..., WassChatApp], width: int
) -> None:
    async with make_app().run_test(size=(width, 36)) as pilot:
        await ask(pilot, "/simulate montage-demo heft")
        screen = chat_screen(pilot)
        assert screen.panel_open
        chat, panel = screen.query_one("#chat-column"), screen.query_one("#run-panel")
        assert chat.display and chat.region.width >= 40
        assert panel.region.x >= chat.region.right
        title = screen.query_one("#run-title")
        wanted = "montage-demo on demo · heft · makespan 100.0 s"
        assert str(title.render()).replace("\n", " ").strip() == wanted
        assert title.region.width <= panel.region.width  # wrapped inside the panel, not cut


async def test_ctrl_s_exports_every_answer_once(
    make_app: Callable[..., WassChatApp], tmp_path: Path
) -> None:
    """Offline, an answer is its tool's summary: the report prints it once, not twice."""
    target = tmp_path / "report.md"
    async with make_app().run_test(size=(120, 36)) as pilot:
        await ask(pilot, "/offline-answer")
        await pilot.press("ctrl+s")
        await settle(pilot)
        pilot.app.screen.query_one("#export-path").value = str(target)  # type: ignore[attr-defined]
        await pilot.click("#export")
        await settle(pilot)
        conversation = chat_screen(pilot).conversation
    text = target.read_text()
    assert text == render_conversation_report(conversation)
    assert text.count(OFFLINE_SUMMARY.splitlines()[0]) == 1
    assert "tool `simulate`" in text
