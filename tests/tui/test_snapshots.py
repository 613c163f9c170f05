"""Snapshot tests (pytest-textual-snapshot): fixed sizes, scripted session, no clocks.

Update after an intended visual change with ``pytest tests/tui/test_snapshots.py
--snapshot-update`` and review the SVGs in ``__snapshots__``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from tests.tui.pilot_steps import ask, settle
from tui.app import WassChatApp
from tui.widgets.chat_input import ChatInput

SnapCompare = Callable[..., bool]


async def _steady(pilot: Pilot[None]) -> None:
    """No blinking cursor, every worker done."""
    for prompt in pilot.app.screen.query(ChatInput):
        prompt.cursor_blink = False
    await settle(pilot)


def test_chat_answer_at_80x24(snap_compare: SnapCompare, make_app: Callable[..., Any]) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "why did mAdd go to node-2?")
        await _steady(pilot)

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_before)


def test_simulation_with_run_panel(snap_compare: SnapCompare, make_app: Callable[..., Any]) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "/simulate montage-demo heft")
        await _steady(pilot)

    assert snap_compare(make_app(), terminal_size=(140, 36), run_before=run_before)


def test_approval_modal_at_80x24(snap_compare: SnapCompare, make_app: Callable[..., Any]) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "/submit montage.json")
        await _steady(pilot)

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_before)


def test_help_screen_light_theme(
    snap_compare: SnapCompare, make_app: Callable[..., WassChatApp]
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await _steady(pilot)
        await pilot.press("ctrl+t", "f1")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_before)
