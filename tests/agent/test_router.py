"""The offline router: every slash command and its arguments, plain English, refusals, ask-backs."""

from __future__ import annotations

import getpass
from typing import Any

import pytest

from wass_chat.agent.understanding.intents import INTENTS, slash_commands
from wass_chat.agent.understanding.router import GREETING, HELP, route

COMMAND_CASES: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "/explain": [
        (
            "/explain demo-x-heft t1 n2",
            "explain_placement",
            {"run": "demo-x-heft", "task": "t1", "node": "n2"},
        ),
        ("/explain merge_bams gpu02", "explain_placement", {"task": "merge_bams", "node": "gpu02"}),
        ("/explain demo-x-heft task=t3", "explain_placement", {"run": "demo-x-heft", "task": "t3"}),
    ],
    "/cases": [
        ("/cases montage-60 3", "similar_cases", {"workflow": "montage-60", "k": 3}),
        ("/cases demo-a-heft", "similar_cases", {"run": "demo-a-heft", "k": 5}),
    ],
    "/simulate": [
        ("/simulate montage-60 cpop", "simulate", {"workflow": "montage-60", "scheduler": "cpop"}),
        (
            "/simulate montage-60 scheduler=peft platform=demo",
            "simulate",
            {"workflow": "montage-60", "scheduler": "peft", "platform": "demo"},
        ),
        ("/simulate demo-a-heft", "simulate", {"run": "demo-a-heft"}),
    ],
    "/whatif": [
        ("/whatif add 3 nodes with peft", "simulate", {"add_nodes": 3, "other_scheduler": "peft"}),
        ("/whatif remove cpu01", "simulate", {"remove_nodes": ["cpu01"]}),
        ("/whatif remove 2 nodes", "simulate", {"remove_count": 2}),
        ("/whatif bandwidth 2", "simulate", {"bandwidth_factor": 2.0}),
        ("/whatif scheduler cpop", "simulate", {"other_scheduler": "cpop"}),
    ],
    "/compare": [
        (
            "/compare montage-60 heft,cpop",
            "compare_schedulers",
            {"workflow": "montage-60", "schedulers": ["heft", "cpop"]},
        ),
        (
            "/compare montage-60 heft peft",
            "compare_schedulers",
            {"workflow": "montage-60", "schedulers": ["heft", "peft"]},
        ),
    ],
    "/submit": [
        (
            "/submit montage.json peft",
            "submit_workflow",
            {"workflow": "montage.json", "scheduler": "peft"},
        ),
        ("/submit genomics-49", "submit_workflow", {"workflow": "genomics-49"}),
    ],
    "/status": [
        ("/status demo-a-heft", "run_status", {"run": "demo-a-heft"}),
        ("/status", "cluster_status", {}),
    ],
    "/cluster": [
        ("/cluster", "cluster_status", {}),
        ("/nodes", "cluster_status", {}),
        ("/node n2", "cluster_status", {"node": "n2"}),
    ],
    "/why": [("/why 17", "job_why", {"jobid": "17"}), ("/why #42_3", "job_why", {"jobid": "42_3"})],
    "/queue": [
        ("/queue", "queue_overview", {}),
        ("/queue gpu user=alice", "queue_overview", {"partition": "gpu", "user": "alice"}),
    ],
    "/waiters": [
        ("/waiters", "top_waiters", {"period": "7d", "count": 5}),
        ("/waiters 30d 3", "top_waiters", {"period": "30d", "count": 3}),
    ],
    "/efficiency": [
        ("/efficiency 42", "efficiency", {"jobid": "42"}),
        ("/seff 7_3", "efficiency", {"jobid": "7_3"}),
        ("/efficiency 2024-01 user=alice", "efficiency", {"period": "2024-01", "user": "alice"}),
        ("/efficiency", "efficiency", {"period": "30d"}),
    ],
    "/gpu": [
        ("/gpu", "gpu_usage", {}),
        ("/gpu now", "gpu_usage", {}),
        ("/gpu 42", "gpu_usage", {"jobid": "42"}),
        ("/gpu 2024-01 user=alice", "gpu_usage", {"period": "2024-01", "user": "alice"}),
    ],
    "/sacct": [
        ("/sacct 30d alice", "sacct_summary", {"period": "30d", "user": "alice"}),
        ("/sacct", "sacct_summary", {"period": "7d"}),
    ],
    "/report": [
        ("/report 30d md", "generate_report", {"period": "30d", "format": "md"}),
        ("/report 2026-05", "generate_report", {"period": "2026-05", "format": "html"}),
    ],
    "/whatif-cluster": [
        ("/whatif-cluster add 8 gpu", "cluster_whatif", {"add_nodes": 8, "node_type": "gpu"}),
        (
            "/whatif-cluster remove 4 batch period=30d",
            "cluster_whatif",
            {"remove_nodes": 4, "partition": "batch", "period": "30d"},
        ),
        ("/whatif-cluster pct -10", "cluster_whatif", {"nodes_pct": -10.0}),
        (
            "/whatif-cluster cap long 24h",
            "cluster_whatif",
            {"partition": "long", "max_time_h": 24.0},
        ),
        (
            "/whatif-cluster power-off 30 boot=120",
            "cluster_whatif",
            {"power_off_after_min": 30.0, "boot_time_s": 120},
        ),
        ("/whatif-cluster predict", "cluster_whatif", {"predict_walltime": True}),
        ("/whatif-cluster scheduler fifo", "cluster_whatif", {"scheduler": "fifo"}),
        ("/whatif-cluster weights age=0", "cluster_whatif", {"weights": "age=0"}),
    ],
    "/energy": [
        ("/energy", "energy_usage", {"period": "30d"}),
        (
            "/energy 2026-10 partition=gpu user=alice",
            "energy_usage",
            {"period": "2026-10", "partition": "gpu", "user": "alice"},
        ),
    ],
    "/help": [("/help", "", {}), ("/h", "", {})],
}


def test_every_command_of_the_table_has_router_cases() -> None:
    assert set(COMMAND_CASES) == {command.name for command, _spec in slash_commands()}


@pytest.mark.parametrize(
    ("text", "tool", "arguments"),
    [case for cases in COMMAND_CASES.values() for case in cases],
)
def test_slash_commands_honour_every_argument(
    text: str, tool: str, arguments: dict[str, Any]
) -> None:
    intent = route(text)
    assert intent.tool == tool
    assert intent.arguments == arguments


def test_commands_without_required_arguments_say_how_to_use_them() -> None:
    assert route("/submit").tool == "" and "/submit WORKFLOW" in route("/submit").reply
    assert route("/why").tool == "" and "/why JOBID" in route("/why").reply
    assert route("/whatif-cluster period=7d").tool == ""
    assert "/whatif-cluster add N" in route("/whatif-cluster").reply


@pytest.mark.parametrize(
    ("text", "tool", "arguments"),
    [
        (
            "why did task merge_bams of run demo-genomics-49-heft go to node gpu02?",
            "explain_placement",
            {"task": "merge_bams", "run": "demo-genomics-49-heft", "node": "gpu02"},
        ),
        ("what if I add 4 nodes?", "simulate", {"add_nodes": 4}),
        ("What if we remove two nodes", "simulate", {"remove_count": 2}),
        ("what if the bandwidth doubled?", "simulate", {"bandwidth_factor": 2.0}),
        ("submit montage.json", "submit_workflow", {"workflow": "montage.json"}),
        (
            "please submit workflow genomics-49 using cpop",
            "submit_workflow",
            {"workflow": "genomics-49", "scheduler": "cpop"},
        ),
        ("why did job 4242 wait so long?", "job_why", {"jobid": "4242"}),
        ("why is 42 still waiting", "job_why", {"jobid": "42"}),
        ("how busy was the cluster last week?", "sacct_summary", {"period": "7d"}),
        ("which users waited the longest last week?", "top_waiters", {"period": "7d", "count": 5}),
        ("what's blocking the queue?", "queue_overview", {}),
        (
            "is montage faster with cpop?",
            "compare_schedulers",
            {"workflow": "montage-60", "schedulers": ["heft", "cpop"]},
        ),
        ("comapre schedulrs on montgae", "compare_schedulers", {"workflow": "montage-60"}),
        ("why is n2 drained?", "cluster_status", {"node": "n2"}),
        ("what's wrong with node c12-3", "cluster_status", {"node": "c12-3"}),
        ("are any nodes down?", "cluster_status", {}),
        ("when will job 130 start", "job_why", {"jobid": "130"}),
        ("why is my job not running", "queue_overview", {"user": getpass.getuser()}),
        ("why won't 144 run", "job_why", {"jobid": "144"}),  # a lone number about a job's fate
        ("is the cluster busy", "cluster_status", {}),  # present tense: now, not accounting
        ("what's running right now", "cluster_status", {}),  # no run named: as `/status` alone
        ("still running?", "run_status", {}),  # a follow-up about the current run
        ("why is nothing running", "queue_overview", {}),
        ("why did my job crash", "job_why", {}),  # no id: the asker's latest bad ending
        ("was 162 efficient", "efficiency", {"jobid": "162"}),
        ("why did n2 go down", "cluster_status", {"node": "n2"}),
        ("why was c12-3 drained", "cluster_status", {"node": "c12-3"}),
        ("why is alice's job pending", "queue_overview", {"user": "alice"}),
        ("estimated start for 139", "job_why", {"jobid": "139"}),
        ("why is the small partition so slow", "queue_overview", {"partition": "small"}),
        ("which partition has free nodes", "queue_overview", {}),
    ],
)
def test_plain_english_routes_to_tools(text: str, tool: str, arguments: dict[str, Any]) -> None:
    intent = route(text)
    assert intent.tool == tool
    assert {k: v for k, v in intent.arguments.items() if v not in (None, [])} == arguments


@pytest.mark.parametrize(
    "text",
    [
        "montage-60 with cpop",
        "plan montage-60 with heft",
        "is genomics-49 ready to go",
        "what would montage cost on the cluster",
        "run status of montage",
        "do not submit genomics-49",
        "dont submit montage yet, just simulate it",
    ],
)
def test_no_submission_is_planned_unless_the_text_asks_for_one(text: str) -> None:
    intent = route(text)
    assert intent.tool != "submit_workflow" and "submit_workflow" not in intent.readings


def test_a_report_file_is_written_only_when_a_report_is_named() -> None:
    assert route("last week").tool != "generate_report"
    assert route("usage last week").tool == "sacct_summary"
    assert route("report last week").tool == "generate_report"


@pytest.mark.parametrize("text", ["cancel job 42", "please kill all my jobs", "reboot gpu02"])
def test_actions_the_assistant_cannot_take_are_refused_without_a_tool(text: str) -> None:
    intent = route(text)
    assert intent.tool == "" and "Nothing was done" in intent.reply


def test_greetings_help_and_unknown_requests_get_replies_not_tools() -> None:
    assert route("hello!").reply == GREETING and route("hello!").tool == ""
    assert route("/help").reply == HELP
    assert route("what can you do?").reply == HELP
    unknown = route("make me a sandwich")
    assert unknown.tool == "" and unknown.name == "none" and "/help" in unknown.reply
    assert unknown.refused and unknown.reply.startswith("I can't answer that here.")
    assert route("/frobnicate").tool == ""


def test_help_lists_every_command_of_the_table() -> None:
    for command, _spec in slash_commands():
        assert command.usage in HELP
    assert {spec.tool for spec in INTENTS if spec.tool} <= {
        "explain_placement",
        "similar_cases",
        "simulate",
        "compare_schedulers",
        "submit_workflow",
        "run_status",
        "cluster_status",
        "job_why",
        "queue_overview",
        "top_waiters",
        "sacct_summary",
        "generate_report",
        "efficiency",
        "cluster_whatif",
        "energy_usage",
        "gpu_usage",
    }


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("what does PartitionConfig mean?", "`PartitionConfig` means: it asks for more than"),
        ("what does reason Resources mean", "`Resources` means: the CPUs, memory"),
        ("what is AssocGrpCpuLimit", "`AssocGrpCpuLimit` means:"),
        ("meaning of OUT_OF_MEMORY", "job state `OUT_OF_MEMORY` means:"),
    ],
)
def test_a_reason_code_is_explained_from_the_explainers_table(text: str, code: str) -> None:
    intent = route(text)
    assert intent.tool == "" and intent.name == "glossary"
    assert code in intent.reply and "/why JOBID" in intent.reply


@pytest.mark.parametrize(
    "text",
    ["what is priority", "why did job 7 fail, what does that mean", "why is montage-60 pending"],
)
def test_ordinary_words_and_job_questions_are_not_taken_for_codes(text: str) -> None:
    """Lower-case words are not codes; a question naming a job is the job's, not the code's;
    the 60 of montage-60 is no job id."""
    intent = route(text)
    assert intent.name != "glossary"
    assert intent.arguments.get("jobid") != "60"
