"""The main flows against the real agent in offline mode (the embedded default of ``make run``).

Needs only what ships in the package (demo workflows and platform, the simulator, the offline
router); approving a plan would reach Slurm, so these tests stop at the modal and at reject,
and prove the gate executed nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tui.pilot_steps import ask, chat_screen, settle
from tui.app import WassChatApp
from tui.conversation_store import ConversationStore
from tui.screens.approval import ApprovalScreen
from tui.widgets.chat_log import AnswerMessage
from tui.widgets.gantt import GanttChart
from tui.widgets.status_header import StatusHeader
from tui.widgets.tool_call import ToolCallBlock
from wass_chat.config import Settings

pytestmark = pytest.mark.slow


def _real_app(tmp_path: Path) -> tuple[WassChatApp, Any]:
    from wass_chat.agent.session import open_session

    session = open_session(Settings(home=tmp_path / "home"), offline=True)
    app = WassChatApp(lambda: session, ConversationStore(tmp_path / "history"))
    return app, session


async def test_help_and_simulate_draw_a_gantt(tmp_path: Path) -> None:
    app, _ = _real_app(tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await ask(pilot, "/help")
        screen = chat_screen(pilot)
        assert screen.query_one(StatusHeader).mode == "offline"
        assert "/simulate" in screen.query_one(AnswerMessage).text
        await ask(pilot, "/simulate demo:fork-join-20")
        await settle(pilot)  # the panel's own simulation runs in a thread worker
        (block,) = screen.query(ToolCallBlock)
        assert block.call.name == "simulate" and block.result is not None
        trace = screen.query_one(GanttChart).trace
        assert trace is not None and len(trace.bars) == 20
        assert f"{trace.makespan:.1f} s" in block.result.summary


async def test_submit_waits_for_the_modal_and_reject_executes_nothing(tmp_path: Path) -> None:
    app, session = _real_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ask(pilot, "/submit demo:fork-join-20")
        modal = pilot.app.screen
        assert isinstance(modal, ApprovalScreen)
        assert modal.query_one("#plan-jobs").row_count == 20
        assert list(session.gate.pending) == [modal.request.request_id]
        assert session.gate.executed == []
        await pilot.click("#reject")
        await settle(pilot)
        assert session.gate.executed == []
        assert session.gate.pending == {}
