"""Cancel cancels: Escape during a long tool call stops its work and leaves nothing behind.

Issue 21: Escape during the first ``/cases`` said "Answer cancelled." while the knowledge-base
build went on at 190% CPU, and the next ``/cases`` failed because the SQLite connection had been
opened in another thread. The knowledge base now installs in milliseconds (issue 20), so the long
tool call here is a ``/compare``: its second scheduler is held at its start until Escape cancels
the answer (so the test does not depend on how fast a scheduler runs on a loaded machine), and
Escape must keep the schedulers after it from running at all. Real agent, offline, real
simulations; the only instruments are spies recording which schedulers ran and when the
comparison stopped itself, and the gate holding the second one.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

import wass_chat.agent.facts.whatif
from tests.tui.pilot_steps import ask, chat_screen, settle
from tests.tui.real_app import real_app
from tui.widgets.chat_log import Notice
from tui.widgets.tool_call import ToolCallBlock
from wass_chat.agent.cancellation import Work, WorkCancelled, current_work

pytestmark = pytest.mark.slow
HELD = "peft"
"""The scheduler the comparison is running when Escape is pressed."""
PATIENCE_S = 120.0
"""How long the test waits for something to happen (a bound on waiting, not a speed goal)."""


async def until(condition: Any, what: str) -> None:
    """Poll ``condition()`` until true; fail saying ``what`` never happened."""
    for _ in range(int(PATIENCE_S / 0.1)):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what} did not happen within {PATIENCE_S} s")


async def test_escape_during_a_comparison_stops_the_schedulers_still_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    real_run = wass_chat.agent.facts.whatif.run_scheduler

    def recording_run(*args: Any, **kwargs: Any) -> Any:
        started.append(args[2])
        if args[2] == HELD:  # "long work": it runs on once the answer is cancelled
            current_work().cancelled.wait(PATIENCE_S)
        return real_run(*args, **kwargs)

    stopped_after: list[int] = []  # schedulers started when the comparison stopped itself
    real_check = Work.check

    def recording_check(work: Work) -> None:
        try:
            real_check(work)
        except WorkCancelled:
            stopped_after.append(len(started))
            raise

    monkeypatch.setattr(wass_chat.agent.facts.whatif, "run_scheduler", recording_run)
    monkeypatch.setattr(Work, "check", recording_check)
    app, _ = real_app(tmp_path / "home", tmp_path / "history")
    async with app.run_test(size=(160, 48)) as pilot:
        await ask(pilot, f"/compare fork-join-20 heft,{HELD},cpop,minmin", wait=False)
        screen = chat_screen(pilot)
        await until(lambda: HELD in started, "the second scheduler starting")
        await until(
            lambda: any(HELD in str(b.title) for b in screen.query(ToolCallBlock)),
            "the comparison's progress shown on the tool call",
        )
        await pilot.press("escape")
        await until(lambda: stopped_after, "the comparison stopping itself")
        await settle(pilot)
        # (the demo runs a fresh home simulates first go through the same function)
        assert started[-2:] == ["heft", HELD], started
        assert stopped_after == [len(started)] and not {"cpop", "minmin"} & set(started), started
        (block,) = screen.query(ToolCallBlock)
        assert "cancelled" in str(block.title)
        assert any(n.text == "Answer cancelled." for n in screen.query(Notice))
        assert not screen.answering


async def test_the_knowledge_base_answers_from_any_worker_thread(
    seeded_home: Path, tmp_path: Path
) -> None:
    app, session = real_app(seeded_home, tmp_path / "history")
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(pilot, "/cases fork-join-20")
        (block,) = chat_screen(pilot).query(ToolCallBlock)
        assert block.result is not None and block.result.error is None
        found: list[Any] = []

        def other_thread() -> None:
            try:
                found.append(session.facts.similar_cases(workflow="genomics-49", k=3))
            except Exception as exc:  # recorded: the assertion below shows it
                found.append(exc)

        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        assert isinstance(found[0], dict), found[0]
        assert len(found[0]["cases"]) == 3
