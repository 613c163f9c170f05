"""The Gantt trace, its utilisation maths and its drawing."""

from __future__ import annotations

from typing import Any

import pytest

from sim.demo import demo_platform, demo_workflow
from tests.tui.scripted_session import GANTT
from tui.gantt_data import (
    GanttBar,
    GanttTraceError,
    node_utilisation,
    pack_lanes,
    trace_from_json,
)
from tui.widgets.gantt import draw_gantt, draw_utilisation
from wass_chat.agent.facts.whatif import WhatIf, what_if


def test_utilisation_uses_cores_when_known_and_covered_time_otherwise() -> None:
    trace = trace_from_json(GANTT)
    used = node_utilisation(trace)
    # node-1 (2 cores): 40 + 30 + 15 core-seconds over 2 x 100
    assert used["node-1"] == pytest.approx(85 / 200)
    # node-2 (1 core): 35 + 30 over 100
    assert used["node-2"] == pytest.approx(0.65)
    no_cores = trace_from_json({**GANTT, "nodes": []})
    # union of [0,40], [40,70], [45,60] = 70 s of 100
    assert node_utilisation(no_cores)["node-1"] == pytest.approx(0.70)


def test_pack_lanes_puts_overlapping_bars_on_separate_rows() -> None:
    bars = trace_from_json(GANTT).bars_on("node-1")
    rows = pack_lanes(bars)
    assert [[b.task for b in row] for row in rows] == [["mProject_1", "mDiff_1"], ["mDiff_2"]]


def test_bad_traces_report_every_problem() -> None:
    with pytest.raises(GanttTraceError) as caught:
        trace_from_json(
            {"tasks": [{"task": "a"}, {"task": "b", "node": "n", "start": 5, "end": 1}]}
        )
    assert len(caught.value.problems) == 2
    with pytest.raises(GanttTraceError):
        trace_from_json({"tasks": "nope"})


def test_drawing_fits_the_width_and_shows_lanes_axis_and_utilisation() -> None:
    trace = trace_from_json(GANTT)
    lines = draw_gantt(trace, 60).plain.splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert lines[0].startswith("node-1│") and lines[0].endswith(" 42%")
    assert lines[1].startswith("      │")  # node-1's second row (mDiff_2 runs in parallel)
    assert lines[2].startswith("node-2│") and lines[2].endswith(" 65%")
    assert "└┬" in lines[3] and lines[4].strip().startswith("0")
    assert lines[4].endswith("100.0 s")  # the last tick is the makespan
    capped = draw_gantt(trace, 60, max_rows_per_node=1).plain
    assert "+1 more tasks in parallel" in capped
    bars = draw_utilisation(trace, 40).plain.splitlines()
    assert bars[1].endswith(" 65%") and bars[1].count("█") == round(0.65 * 27)


def test_a_wide_bar_carries_its_task_name() -> None:
    trace = trace_from_json(GANTT)
    assert "mProject_1" in draw_gantt(trace, 120).plain


def test_the_simulate_facts_carry_the_trace_of_what_they_simulated() -> None:
    """The producer owns its data: the what-if facts hold the variant's trace, drawn as is."""
    from policy.base import plan_and_simulate
    from policy.registry import get_scheduler
    from wass_chat.agent.facts.whatif import changed_platform

    workflow, platform = demo_workflow("fork-join-20"), demo_platform()
    change = WhatIf(add_nodes=2)
    facts = what_if(workflow, platform, "heft", change)
    trace = trace_from_json(facts["gantt"])
    bigger = changed_platform(platform, change)
    result = plan_and_simulate(get_scheduler("heft"), workflow, bigger)
    assert trace.makespan == result.makespan == facts["variant"]["makespan_s"]
    assert {b.task: b.node for b in trace.bars} == result.placements
    assert set(trace.nodes) == set(bigger.node_names)
    assert "transfers" not in facts["gantt"]
    assert trace_from_json(trace.to_json()) == trace
    assert GanttBar("t", "n", 1.0, 3.5).duration == 2.5


def test_the_axis_uses_one_unit() -> None:
    """A 170 s run: every tick in minutes (not "85.1 s" next to "2.8 min")."""
    tasks: list[dict[str, Any]] = GANTT["tasks"]  # type: ignore[assignment]
    stretched = [{**t, "start": t["start"] * 1.7, "end": t["end"] * 1.7} for t in tasks]
    long = {**GANTT, "makespan": 170.0, "tasks": stretched}
    axis = draw_gantt(trace_from_json(long), 100).plain.splitlines()[-1]
    labels = axis.split()
    assert labels[0] == "0" and labels[-1] == "min" and labels[-2] == "2.8"
    assert " s" not in axis and axis.count("min") == len(axis.split("min")) - 1 >= 3
