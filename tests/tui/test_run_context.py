"""What-ifs, comparisons and cases follow the current run (real agent, offline, demo inputs).

The flows of issue 21: after ``/simulate montage-60 scheduler=cpop``, ``/whatif add 4 nodes``
(and its plain-English form) changes that run, and only its node count; ``/compare`` ranks
every scheduler, learned ones included, names ties and draws the best run; ``/cases`` is about
the current run. Numbers are checked against the simulator called directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from policy.base import plan_and_simulate
from policy.registry import get_scheduler
from sim.demo import demo_platform, demo_workflow
from tests.tui.pilot_steps import ask, chat_screen
from tests.tui.real_app import real_app
from tui.widgets.chat_log import AnswerMessage
from tui.widgets.gantt import GanttChart
from tui.widgets.tool_call import ToolCallBlock
from wass_chat.agent.facts.whatif import WhatIf, changed_platform

pytestmark = pytest.mark.slow
RUN = "demo-montage-60-cpop"


def last_block(pilot: Pilot[None]) -> ToolCallBlock:
    return list(chat_screen(pilot).query(ToolCallBlock))[-1]


def last_facts(pilot: Pilot[None]) -> dict[str, Any]:
    block = last_block(pilot)
    assert block.result is not None and block.result.error is None, block.result
    return block.result.data


def cpop_with(add_nodes: int) -> float:
    """montage-60 under CPOP on the demo platform with ``add_nodes`` more nodes, simulated here."""
    platform = changed_platform(demo_platform(), WhatIf(add_nodes=add_nodes))
    return plan_and_simulate(get_scheduler("cpop"), demo_workflow("montage-60"), platform).makespan


@pytest.mark.parametrize("question", ["/whatif add 4 nodes", "what if I add 4 nodes?"])
async def test_a_what_if_changes_the_current_run_and_only_its_nodes(
    seeded_home: Path, tmp_path: Path, question: str
) -> None:
    app, _ = real_app(seeded_home, tmp_path / "history")
    async with app.run_test(size=(160, 48)) as pilot:
        await ask(pilot, "/simulate montage-60 scheduler=cpop")
        assert last_facts(pilot)["run_id"] == RUN
        await ask(pilot, question)
        assert last_block(pilot).call.arguments.get("run") == RUN
        facts = last_facts(pilot)
        base, variant = facts["baseline"], facts["variant"]
        assert (facts["workflow"], facts["run_id"]) == ("montage-60", RUN)
        assert (base["scheduler"], variant["scheduler"]) == ("cpop", "cpop")
        assert (base["nodes"], variant["nodes"]) == (8, 12)
        assert base["makespan_s"] == cpop_with(0)
        assert variant["makespan_s"] == cpop_with(4)
        assert facts["change_notes"] == ["4 nodes added"]
        answer = list(chat_screen(pilot).query(AnswerMessage))[-1].text
        assert RUN in answer
        trace = chat_screen(pilot).query_one(GanttChart).trace
        assert trace is not None and len(trace.nodes) == 12 and trace.scheduler == "cpop"
        assert trace.makespan == variant["makespan_s"]


async def test_a_scheduler_named_with_a_node_change_is_the_baseline_not_a_second_change(
    seeded_home: Path, tmp_path: Path
) -> None:
    app, _ = real_app(seeded_home, tmp_path / "history")
    async with app.run_test(size=(160, 48)) as pilot:
        await ask(pilot, "/simulate montage-60 scheduler=heft")
        await ask(pilot, "/whatif add 4 nodes with cpop")
        facts = last_facts(pilot)
        assert facts["baseline"]["scheduler"] == facts["variant"]["scheduler"] == "cpop"
        assert facts["variant"]["makespan_s"] == cpop_with(4)
        await ask(pilot, "/whatif add 2 nodes bandwidth 2")
        result = last_block(pilot).result
        assert result is not None and result.error is not None
        assert "one thing at a time" in result.error


async def test_compare_ranks_learned_schedulers_names_ties_and_draws_the_best(
    seeded_home: Path, tmp_path: Path
) -> None:
    app, session = real_app(seeded_home, tmp_path / "history")
    async with app.run_test(size=(160, 48)) as pilot:
        await ask(pilot, "/simulate fork-join-20 scheduler=cpop")
        await ask(pilot, "/compare")
        assert last_block(pilot).call.arguments.get("run") == "demo-fork-join-20-cpop"
        facts = last_facts(pilot)
        ranked = [r["scheduler"] for r in facts["results"]]
        assert {"policy", "rag-guarded", "heft", "cpop"} <= set(ranked)
        fastest = facts["results"][0]["makespan_s"]
        tied = [r["scheduler"] for r in facts["results"] if r["makespan_s"] - fastest < 0.05]
        assert facts["tied_best"] == tied and len(tied) >= 2  # rag-guarded ties its best guard
        trace = chat_screen(pilot).query_one(GanttChart).trace
        assert trace is not None and trace.scheduler == facts["best"]
        assert trace.makespan == fastest
        assert session.current_run == f"demo-fork-join-20-{facts['best']}"
        answer = list(chat_screen(pilot).query(AnswerMessage))[-1].text
        assert "\n\nBest: " in answer  # a paragraph of its own, not glued onto the last bullet


async def test_cases_without_argument_are_about_the_current_run(
    seeded_home: Path, tmp_path: Path
) -> None:
    app, _ = real_app(seeded_home, tmp_path / "history")
    async with app.run_test(size=(160, 48)) as pilot:
        await ask(pilot, "/simulate fork-join-20 scheduler=cpop")
        await ask(pilot, "/cases")
        assert last_block(pilot).call.arguments.get("run") == "demo-fork-join-20-cpop"
        facts = last_facts(pilot)
        assert facts["subject"] == "demo-fork-join-20-cpop" and facts["cases"]
