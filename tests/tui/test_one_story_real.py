"""One story on the real agent (offline, the shipped demo knowledge base): the scheduler a
why-answer cites as faster is the one ``/compare`` ranks first on the same run, and the run
panel's cases follow the subject (issue 31 item 4, as a new user met it).

Before: "why did task merge_bams go to gpu02?" cited a past case with a lookahead scheduler at
446.3 s, then ``/compare`` said "Best: wass 501.3 s" (the lookahead was not ranked), and the
panel kept genomics-49's cases under a montage-60 chart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.pilot_steps import ask, chat_screen
from tests.tui.real_app import real_app
from tui.widgets.chat_log import AnswerMessage
from tui.widgets.run_panel import RunPanel
from tui.widgets.tool_call import ToolCallBlock
from wass_chat.agent.facts.whatif import TIE_TOLERANCE_S

pytestmark = pytest.mark.slow


def last_facts(pilot: Pilot[None]) -> dict[str, Any]:
    block = list(chat_screen(pilot).query(ToolCallBlock))[-1]
    assert block.result is not None and block.result.error is None, block.result
    return block.result.data


async def test_compare_ranks_first_what_the_why_answer_cited_and_the_panel_follows(
    tmp_path: Path,
) -> None:
    app, session = real_app(tmp_path / "home", tmp_path / "history")  # the shipped demo kb
    async with app.run_test(size=(160, 48)) as pilot:
        await ask(pilot, "why did task merge_bams go to gpu02?")
        why = last_facts(pilot)
        cited, cited_s = (
            why["verdict"]["best_case_scheduler"],
            why["verdict"]["best_case_makespan_s"],
        )
        assert why["verdict"]["best_case_gain_s"] > 0  # the answer says a faster plan exists
        answer = list(chat_screen(pilot).query(AnswerMessage))[-1].text
        assert f"`{cited}`" in answer and f"{cited_s:.1f} s" in answer
        panel = chat_screen(pilot).query_one(RunPanel)
        assert panel.subject == "genomics-49" and panel.cases

        await ask(pilot, "/compare")
        ranking = last_facts(pilot)
        assert ranking["workflow"] == why["workflow"]
        assert ranking["platform"] == why["platform"]
        assert cited in ranking["tied_best"]  # ranked first (ties named as ties)
        first = ranking["results"][0]["makespan_s"]
        assert abs(first - cited_s) < TIE_TOLERANCE_S  # the same run, the same number
        assert cited in ranking["from_cases"]
        answer = list(chat_screen(pilot).query(AnswerMessage))[-1].text
        best_line = next(line for line in answer.splitlines() if line.startswith("Best: "))
        assert f"`{cited}`" in best_line
        assert panel.trace is not None and panel.trace.scheduler in ranking["tied_best"]
        assert panel.trace.workflow == "genomics-49" and panel.cases  # same subject: kept
        assert session.current_run == f"demo-genomics-49-{ranking['best']}"

        await ask(pilot, "/simulate montage-60")
        assert panel.trace is not None and panel.trace.workflow == "montage-60"
        assert panel.cases == [] and panel.subject == "montage-60"  # not genomics-49's cases
        await ask(pilot, "/cases")
        assert panel.cases and panel.cases_subject == "montage-60"
        assert panel.trace is not None and panel.trace.workflow == "montage-60"
