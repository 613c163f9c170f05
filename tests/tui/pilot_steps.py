"""Small Pilot steps shared by the TUI tests."""

from __future__ import annotations

from textual.pilot import Pilot

from tui.screens.chat import ChatScreen
from tui.widgets.chat_input import ChatInput

MOUNT_REFRESHES = 200
"""Refreshes :func:`settle` waits, at most, for a pushed screen to finish mounting."""


async def settle(pilot: Pilot[None]) -> None:
    """Wait until every worker is done and the screen has caught up.

    A pushed screen is on the stack (``app.screen``) before its ``on_mount`` has run, which is
    where screens fill their tables; on a loaded CI machine one refresh was not always enough
    (the conversations list was once found empty), so wait for the mount too, a refresh at a
    time (bounded: a screen that never mounts fails the caller's own assertions).
    """
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    for _ in range(MOUNT_REFRESHES):
        if pilot.app.screen.is_mounted:
            break
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
