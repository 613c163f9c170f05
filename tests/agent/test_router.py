"""The offline intent router: slash commands and plain-English patterns."""

from __future__ import annotations

import pytest

from wass_chat.agent.router import GREETING, HELP, route


@pytest.mark.parametrize(
    ("text", "tool", "arguments"),
    [
        (
            "why did task merge_bams of run demo-genomics-49-heft go to node gpu02?",
            "explain_placement",
            {"task": "merge_bams", "run": "demo-genomics-49-heft", "node": "gpu02"},
        ),
        (
            "/explain demo-x-heft t1 n2",
            "explain_placement",
            {"run": "demo-x-heft", "task": "t1", "node": "n2"},
        ),
        ("what if I add 4 nodes?", "simulate", {"add_nodes": 4}),
        ("What if we remove two nodes", "simulate", {"remove_count": 2}),
        ("what if the bandwidth doubled?", "simulate", {"bandwidth_factor": 2.0}),
        ("/whatif add 3 nodes with peft", "simulate", {"add_nodes": 3, "other_scheduler": "peft"}),
        ("submit montage.json", "submit_workflow", {"workflow": "montage.json"}),
        (
            "please submit workflow genomics-49 using cpop",
            "submit_workflow",
            {"workflow": "genomics-49", "scheduler": "cpop"},
        ),
        (
            "/submit montage.json peft",
            "submit_workflow",
            {"workflow": "montage.json", "scheduler": "peft"},
        ),
        ("why did job 4242 wait so long?", "job_why", {"jobid": "4242"}),
        ("/why 17", "job_why", {"jobid": "17"}),
        ("/status demo-a-heft", "run_status", {"run": "demo-a-heft"}),
        ("/status", "cluster_status", {}),
        ("/cases montage-60 3", "similar_cases", {"workflow": "montage-60", "k": 3}),
        (
            "/compare montage-60 heft,cpop",
            "compare_schedulers",
            {"workflow": "montage-60", "schedulers": ["heft", "cpop"]},
        ),
        ("/sacct 30d alice", "sacct_summary", {"period": "30d", "user": "alice"}),
        ("/report 30d md", "generate_report", {"period": "30d", "format": "md"}),
    ],
)
def test_requests_route_to_tools(text: str, tool: str, arguments: dict[str, object]) -> None:
    intent = route(text)
    assert intent.tool == tool
    assert {k: v for k, v in intent.arguments.items() if v is not None} == arguments


def test_greetings_help_and_unknown_requests_get_replies_not_tools() -> None:
    assert route("hello!").reply == GREETING and route("hello!").tool == ""
    assert route("/help").reply == HELP
    unknown = route("make me a sandwich")
    assert unknown.tool == "" and HELP in unknown.reply
    assert route("/frobnicate").tool == ""
