"""Small Pilot steps shared by the TUI tests."""

from __future__ import annotations

from textual.pilot import Pilot

from tui.screens.chat import ChatScreen
from tui.widgets.chat_input import ChatInput


async def settle(pilot: Pilot[None]) -> None:
    """Wait until every worker is done and the screen has caught up."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def ask(pilot: Pilot[None], text: str, wait: bool = True) -> None:
    """Type ``text`` into the prompt and press Enter (optionally waiting for the answer)."""
    await settle(pilot)
    prompt = pilot.app.screen.query_one(ChatInput)
    prompt.focus()
    prompt.value = text
    await pilot.press("enter")
    if wait:
        await settle(pilot)


def chat_screen(pilot: Pilot[None]) -> ChatScreen:
    return next(s for s in pilot.app.screen_stack if isinstance(s, ChatScreen))
