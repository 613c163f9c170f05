"""The app with a real cluster answering: the header says Slurm is reachable, the greeting offers
the live questions, and the first of them is answered from the cluster (issue 31 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slurm.conftest import Cluster
from tests.tui.pilot_steps import ask, chat_screen, settle
from tests.tui.real_app import real_app
from tui.widgets.status_header import StatusHeader
from tui.widgets.tool_call import ToolCallBlock
from tui.widgets.welcome import LIVE_QUESTIONS, Welcome
from wass_chat.slurm.availability import forget_checks

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]


async def test_the_app_says_slurm_answers_and_offers_live_questions(
    cluster: Cluster, tmp_path: Path
) -> None:
    forget_checks()  # a check remembered from another test's configuration must not count
    app, _ = real_app(tmp_path / "home", tmp_path / "history")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        header = chat_screen(pilot).query_one(StatusHeader)
        assert header.slurm.state == "reachable", header.slurm.detail
        assert cluster.version in header.slurm.detail
        assert str(cluster.slurm_conf) in header.slurm.detail
        assert str(chat_screen(pilot).query_one("#slurm-badge").render()) == "Slurm: reachable"
        greeting = chat_screen(pilot).query_one(Welcome).source
        assert all(f"`{question}`" in greeting for question in LIVE_QUESTIONS)

        await ask(pilot, LIVE_QUESTIONS[0])
        block = list(chat_screen(pilot).query(ToolCallBlock))[-1]
        assert block.call.name == "queue_overview"
        assert block.result is not None and block.result.error is None, block.result
        assert header.slurm.state == "reachable"  # re-checked after the answer
