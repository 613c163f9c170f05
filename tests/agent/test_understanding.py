"""Understanding that knows its limits (issue 31 item 1): the issue's examples asked again, names
that do not exist refused with the nearest real ones, what-ifs and submissions in many wordings,
and questions outside every intent asked back with choices."""

from __future__ import annotations

from typing import Any

import pytest

from sim.errors import UnknownName, nearest_names
from wass_chat.agent.events import ChatEvent, Final, ToolCall
from wass_chat.agent.session import open_session
from wass_chat.agent.understanding.router import route
from wass_chat.agent.understanding.scope import outside_topic
from wass_chat.agent.understanding.slots import find_changes, find_workflow
from wass_chat.agent.understanding.submit_wording import asks_to_submit, may_mean_submit
from wass_chat.config import Settings

pytestmark = pytest.mark.xdist_group("agent-home")


async def answer(settings: Settings, text: str) -> tuple[Final, list[ChatEvent]]:
    events = [e async for e in open_session(settings, offline=True).send(text)]
    last = events[-1]
    assert isinstance(last, Final)
    return last, events


@pytest.mark.parametrize(
    ("text", "tool", "arguments"),
    [
        ("which users wasted the most core-hours?", "efficiency", {"period": "30d", "count": 5}),
        (
            "what was the cpu efficiency in january 2024?",
            "efficiency",
            {"period": "2024-01", "count": 5},
        ),
        (
            "what happens to genomics-49 if gpu02 dies?",
            "simulate",
            {"workflow": "genomics-49", "remove_nodes": ["gpu02"]},
        ),
        ("what if gpu02 goes down?", "simulate", {"remove_nodes": ["gpu02"]}),
        ("simulate montage-61", "simulate", {"workflow": "montage-61"}),
    ],
)
def test_the_issues_examples_route_to_what_they_ask(
    text: str, tool: str, arguments: dict[str, Any]
) -> None:
    intent = route(text)
    assert (intent.tool, intent.arguments) == (tool, arguments)


def test_jobs_that_wasted_cpu_this_week_are_an_efficiency_question() -> None:
    intent = route("jobs that wasted the most cpu this week")
    assert intent.tool == "efficiency" and ".." in intent.arguments["period"]


async def test_the_node_failure_what_if_removes_the_node_from_the_workflows_platform(
    settings: Settings,
) -> None:
    final, _ = await answer(settings, "what happens to genomics-49 if gpu02 dies?")
    facts = final.facts
    assert facts["kind"] == "simulation" and facts["workflow"] == "genomics-49"
    assert facts["changes"]["remove_nodes"] == ["gpu02"]
    assert facts["variant"]["makespan_s"] != facts["baseline"]["makespan_s"]
    assert final.text.startswith("With gpu02 removed (as if it failed)")


@pytest.mark.parametrize(
    ("text", "what", "name", "nearest"),
    [
        ("simulate montage-61", "workflow", "montage-61", "montage-60"),
        ("compare schedulers on genomics-50", "workflow", "genomics-50", "genomics-49"),
        (
            "status of run demo-montage-61-heft",
            "run",
            "demo-montage-61-heft",
            "demo-montage-60-heft",
        ),
        ("what if gpu07 goes down", "node", "gpu07", "gpu01"),
        ("/explain demo-genomics-49-heft merge_bams gpu09", "node", "gpu09", "gpu01"),
        ("/simulate montage-60 hefty", "scheduler", "hefty", "heft"),
        ("/explain demo-genomics-49-heft align_99", "task", "align_99", "align_00"),
    ],
)
async def test_a_name_that_does_not_exist_is_refused_with_the_nearest_real_ones(
    settings: Settings, text: str, what: str, name: str, nearest: str
) -> None:
    final, events = await answer(settings, text)
    assert any(isinstance(e, ToolCall) for e in events)
    assert final.facts["kind"] == "error"
    assert final.facts["unknown"]["what"] == what and final.facts["unknown"]["name"] == name
    assert nearest in final.facts["unknown"]["nearest"]
    assert final.text.startswith(f"There is no {what} `{name}`")
    assert f"`{nearest}`" in final.text  # offered, not silently used


def test_nearest_names_put_the_same_stem_first_and_an_unknown_name_lists_the_known() -> None:
    demos = ["genomics-49", "montage-60", "epigenomics-50", "fork-join-20"]
    assert nearest_names("genomics-50", demos)[0] == "genomics-49"
    assert nearest_names("montgae-60", demos) == ["montage-60"]
    assert UnknownName("workflow", "zzz", demos).one_line() == (
        "there is no workflow 'zzz'; known: genomics-49, montage-60, epigenomics-50, fork-join-20"
    )


def test_a_demo_stem_with_another_number_is_kept_as_typed_and_a_typo_is_repaired() -> None:
    assert find_workflow("simulate montage-61") == "montage-61"
    assert find_workflow("simulate montgae") == "montage-60"
    assert find_workflow("simulate montage60") == "montage-60"


@pytest.mark.parametrize(
    ("text", "changes"),
    [
        ("montage-60 with cpu03 dead", {"remove_nodes": ["cpu03"]}),
        ("suppose cpu05 fails", {"remove_nodes": ["cpu05"]}),
        ("impact of losing gpu02 on genomics-49", {"remove_nodes": ["gpu02"]}),
        ("a failure of cpu04: what does it cost?", {"remove_nodes": ["cpu04"]}),
        ("gpu01 outage", {"remove_nodes": ["gpu01"]}),
        ("what if gpu 2 crashes", {"remove_nodes": ["gpu02"]}),
        ("what if the network was twice as fast", {"bandwidth_factor": 2.0}),
        ("what if bandwidth halves", {"bandwidth_factor": 0.5}),
        ("a 10x faster interconnect", {"bandwidth_factor": 10.0}),
        ("links 4 times slower", {"bandwidth_factor": 0.25}),
        ("a faster network (3x)", {"bandwidth_factor": 3.0}),
        ("what if bandwidth x4", {"bandwidth_factor": 4.0}),
        ("why did n2 go down?", {}),
        ("is gpu02 down", {}),
        ("twice as many cases", {}),
    ],
)
def test_what_if_changes_are_read_in_many_wordings(text: str, changes: dict[str, Any]) -> None:
    assert find_changes(text) == changes


@pytest.mark.parametrize(
    ("text", "asks", "may_mean"),
    [
        ("submit montage-60", True, False),
        ("get genomics-49 running on the cluster", True, True),
        ("I'd like montage-60 to run on slurm tonight", True, True),
        ("could you get genomics-49 going on the cluster", True, True),
        ("kick off epigenomics-50 on the real cluster", True, True),
        ("how would montage-60 run on the cluster", False, False),
        ("what if montage-60 ran on the cluster", False, False),
        ("can montage-60 go on the cluster sometime", False, True),
        ("montage-60 needs to go on the cluster at some point", False, True),
        ("don't put genomics-49 on the cluster, just simulate it", False, False),
        ("do not submit montage-60", False, False),
    ],
)
def test_a_submission_is_licensed_only_by_a_clear_request(
    text: str, asks: bool, may_mean: bool
) -> None:
    assert asks_to_submit(text) is asks
    assert may_mean_submit(text) is may_mean


def test_an_unclear_submission_is_asked_back_with_the_submission_as_a_choice() -> None:
    intent = route("montage-60 needs to go on the cluster at some point")
    assert intent.tool == "" and intent.name == "clarify"
    assert intent.readings[0] == "submit_workflow" and "`/submit montage-60`" in intent.reply


def test_a_question_about_running_on_the_cluster_is_a_simulation_never_a_plan() -> None:
    for text in ("how would montage-60 run on the cluster", "don't run montage-60 on slurm"):
        assert route(text).tool != "submit_workflow"
    assert route("how would montage-60 run on the cluster").tool == "simulate"


@pytest.mark.parametrize(
    "text",
    [
        "what's the temperature of gpu02 right now",
        "how much did the cluster cost us last month",
        "install pytorch on all the nodes",
        "reset my password",
        "how much disk quota do I have left",
    ],
)
def test_questions_about_what_the_assistant_has_no_data_on_are_refused(text: str) -> None:
    intent = route(text)
    assert intent.tool == "" and intent.name == "none" and intent.refused
    assert intent.reply.startswith("I can't answer that here: I ")


def test_topic_words_next_to_a_job_or_efficiency_stay_in_scope() -> None:
    assert outside_topic("what did job 42's idle cores cost us") is not None
    assert route("what did job 42's idle cores cost us").tool == "efficiency"
    assert route("how much time did we lose in gpu02 outage").tool == "simulate"
