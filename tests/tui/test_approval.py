"""Submissions: the approval modal is the only way a plan reaches the cluster."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path

import tui
from tests.tui.pilot_steps import ask, chat_screen, settle
from tests.tui.scripted_session import PLAN, ScriptedSession
from tui.app import WassChatApp
from tui.screens.approval import ApprovalScreen, plan_jobs
from tui.widgets.chat_log import Notice
from tui.widgets.tool_call import ToolCallBlock


async def test_submit_opens_the_modal_with_the_exact_plan(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/submit montage.json")
        modal = pilot.app.screen
        assert isinstance(modal, ApprovalScreen)
        assert modal.request.plan == PLAN
        table = modal.query_one("#plan-jobs")
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        assert rows == [
            ["mProject_1", "node-1", "–", "–", "–", "–"],
            ["mAdd", "node-2", "–", "–", "–", "mProject_1"],
        ]
        assert session.decisions == [] and session.submitted == []


async def test_approve_submits_once(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/submit montage.json")
        await pilot.click("#approve")
        await settle(pilot)
        assert session.decisions == [("req-1", "approve", None)]
        assert session.submitted == [PLAN]
        blocks = list(chat_screen(pilot).query(ToolCallBlock))
        assert blocks[-1].result is not None and "job 4242" in blocks[-1].result.summary


async def test_reject_never_approves(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/submit montage.json")
        await pilot.click("#reject")
        await settle(pilot)
        assert session.decisions == [("req-1", "reject", None)]
        assert session.submitted == []
        assert any(n.text.startswith("Rejected") for n in chat_screen(pilot).query(Notice))


async def test_escape_and_enter_in_the_modal_reject(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    """Reject has the focus: a stray Enter rejects, and so does Escape."""
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/submit a.json")
        await pilot.press("enter")
        await settle(pilot)
        await ask(pilot, "/submit b.json")
        await pilot.press("escape")
        await settle(pilot)
        assert [d for _, d, _ in session.decisions] == ["reject", "reject"]
        assert session.submitted == []


async def test_edit_sends_the_edited_plan(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/submit montage.json")
        await pilot.click("#edit")
        modal = pilot.app.screen
        assert isinstance(modal, ApprovalScreen)
        edited = dict(PLAN, partition="long")
        modal.query_one("#plan-editor").text = json.dumps(edited)  # type: ignore[attr-defined]
        await pilot.click("#approve")
        await settle(pilot)
        assert session.decisions == [("req-1", "edit", edited)]
        assert session.submitted == [edited]


async def test_invalid_edit_keeps_the_modal_open(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/submit montage.json")
        await pilot.click("#edit")
        pilot.app.screen.query_one("#plan-editor").text = "{not json"  # type: ignore[attr-defined]
        await pilot.click("#approve")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ApprovalScreen)
        assert session.decisions == []


def test_plan_jobs_reads_the_usual_spellings() -> None:
    plan = {"tasks": [{"task": "a", "nodes": ["n1", "n2"], "after": ["x", "y"]}, "bare"]}
    assert plan_jobs(plan) == [("a", "n1, n2", "x, y"), ("bare", "–", "–")]


def _calls(path: Path, attribute: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == attribute
    ]


def test_only_the_approval_modal_builds_a_decision_that_acts() -> None:
    """No path around the modal, proved on the source: the session hears a decision in exactly
    one place of the chat (passing the modal's outcome on), the bridge forwards it unchanged, and
    outside the modal no code spells an ``ApprovalOutcome`` other than ``reject``."""
    package = Path(tui.__file__).parent
    ui_calls = {
        path.relative_to(package).as_posix(): _calls(path, "resolve_approval")
        for path in package.rglob("*.py")
        if path.name != "session_bridge.py"
    }
    ui_calls = {path: calls for path, calls in ui_calls.items() if calls}
    assert list(ui_calls) == ["screens/chat.py"]
    (call,) = ui_calls["screens/chat.py"]
    assert ast.unparse(call.func) == "self.bridge.resolve_approval"
    assert ast.unparse(call.args[1]) == "outcome.decision"
    (forward,) = _calls(package / "session_bridge.py", "resolve_approval")
    forwarded = [ast.unparse(a) for a in forward.args]
    assert forwarded == ["request_id", "decision", "edited_plan", "digest"]
    literals = {
        argument.value
        for path in package.rglob("*.py")
        if path.name != "approval.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "ApprovalOutcome"
        for argument in node.args
        if isinstance(argument, ast.Constant)
    }
    assert literals == {"reject"}


DEMO_PLAN = {
    "kind": "submission_plan",
    "planned_run_id": "run-20261123-1",
    "workflow": "montage-60",
    "scheduler": "heft",
    "platform": "demo-cluster",
    "platform_ref": "demo",
    "predicted_makespan_s": 519.9128458133517,
    "jobs": [{"task": "mProject_1", "node": "cpu01", "after": []}],
    "note": "planned on the demo platform: the cluster is unavailable (scontrol: error: "
    "resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\nscontrol: error: fetch_config:"
    " DNS SRV lookup failed\nscontrol: fatal: Could not establish a configuration source)",
}


async def test_a_plan_on_the_demo_platform_can_only_be_closed(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    """Slurm unreachable: the plan names demo nodes, so the modal offers no Approve or Edit,
    says why in one line, and shows numbers in people's units."""
    session.plans["/submit montage-60"] = DEMO_PLAN
    async with make_app().run_test(size=(120, 40)) as pilot:
        await ask(pilot, "/submit montage-60")
        modal = pilot.app.screen
        assert isinstance(modal, ApprovalScreen)
        assert [b.id for b in modal.query("Button")] == ["reject"]
        warning = str(modal.query_one("#approval-warning").render())
        assert "cannot be submitted" in warning and "Unknown host" in warning
        assert "fatal" not in warning and "\n" not in warning.strip()
        fields = [str(s.render()) for s in modal.query(".plan-field")]
        assert "predicted makespan: 519.9 s" in fields
        assert not any("519.912" in f or "scontrol" in f for f in fields)
        await pilot.press("ctrl+a")  # nothing to approve: the modal stays
        await pilot.pause()
        assert pilot.app.screen is modal and session.decisions == []
        await pilot.press("escape")
        await settle(pilot)
        assert session.decisions == [("req-1", "reject", None)] and session.submitted == []


def _big_plan(jobs: int) -> dict[str, object]:
    """A live-cluster plan as ``submit_workflow`` returns it: commands and sbatch options."""
    return {
        "kind": "submission_plan",
        "planned_run_id": "run-big",
        "plan_digest": "digest-of-req-1",
        "workflow": "big",
        "platform_ref": "slurm",
        "jobs": [
            {
                "task": f"align_{i:02d}",
                "node": "n1",
                "after": [f"align_{i - 1:02d}"] if i else [],
                "command": ["bwa", "mem", "$(touch /tmp/pwned)", "ref file.fa"],
                "sbatch": [
                    "--job-name wass-run-big-align",
                    "-N1",
                    "--nodelist=n1",
                    "--mem=700M",
                    "--time=5:00",
                    f"--dependency=afterok:{{job:{i}}}",
                ],
            }
            for i in range(jobs)
        ],
    }


async def test_the_modal_shows_every_job_s_command_and_sbatch_options(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    """#45 item 4 / #41 item 7: the commands (quoted, as the job runs them) and --mem, --time,
    --nodelist and the dependencies are on the screen, not only in the JSON."""
    session.plans["/submit big"] = _big_plan(3)
    async with make_app().run_test(size=(120, 40)) as pilot:
        await ask(pilot, "/submit big")
        modal = pilot.app.screen
        assert isinstance(modal, ApprovalScreen)
        blocks = [str(s.render()) for s in modal.query(".plan-command")]
        assert len(blocks) == 3
        assert "runs: bwa mem '$(touch /tmp/pwned)' 'ref file.fa'" in blocks[0]
        for option in ("--mem=700M", "--time=5:00", "--nodelist=n1", "--dependency=afterok:"):
            assert option in blocks[1]
        assert "digest-of-re" in str(modal.query_one("#plan-digest").render())


async def test_approve_names_the_digest_of_the_plan_shown(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/submit montage.json")
        await pilot.click("#approve")
        await settle(pilot)
    assert session.digests == ["digest-of-req-1"] and session.submitted == [PLAN]


async def test_a_long_plan_scrolls_to_its_last_job(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    """#41 item 7: the approval screen did not scroll; the last of 40 jobs was out of reach."""
    from textual.containers import VerticalScroll

    session.plans["/submit big"] = _big_plan(40)
    async with make_app().run_test(size=(100, 30)) as pilot:
        await ask(pilot, "/submit big")
        modal = pilot.app.screen
        assert isinstance(modal, ApprovalScreen)
        body = modal.query_one("#approval-body", VerticalScroll)
        assert body.max_scroll_y > 0 and body.scroll_y == 0
        last = list(modal.query(".plan-command"))[-1]
        assert not body.region.contains_region(last.region)
        body.focus()
        await pilot.press("end")
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y
        assert body.region.contains_region(last.region)
        assert modal.query_one("#approve").region.height > 0  # the buttons stay on screen


def _real_plan(branches: int) -> dict[str, object]:
    """A fork-join plan exactly as ``submit_workflow`` shows it: a real SubmissionPlan (HEFT on
    a two-node platform, every task asking 2048 MB) turned into the facts the modal gets."""
    from sim.model import Node, Platform, Task, Workflow
    from wass_chat.agent.facts.cluster_tools import plan_facts
    from wass_chat.slurm.submission import plan_submission

    mb = 2**20
    tasks = [Task("fork", 5e9, memory=2048 * mb)]
    tasks += [
        Task(f"branch_{k:02d}", 5e9, memory=2048 * mb, parents=("fork",)) for k in range(branches)
    ]
    tasks.append(
        Task(
            "join", 5e9, memory=2048 * mb, parents=tuple(f"branch_{k:02d}" for k in range(branches))
        )
    )
    platform = Platform(
        "slurm-debug", (Node("n1", 4, memory=4096 * mb), Node("n2", 8, memory=8192 * mb))
    )
    plan = plan_submission(
        Workflow("fork-join", tuple(tasks), ()),
        platform,
        "heft",
        "run-fj",
        Path("/tmp/wass-runs/run-fj"),
        scale=1.0,
    )
    return dict(plan_facts(plan, "fork-join.json", "slurm", ""))


async def test_a_22_job_plan_shows_mem_and_time_for_every_job_and_scrolls(
    make_app: Callable[..., WassChatApp], session: ScriptedSession
) -> None:
    """#41 item 7: --mem and --time of every job are on the screen (in the table and in each
    job's options), jobs are named by the workflow's tasks, the literal sbatch argv is shown,
    and the 22-job plan scrolls to its join."""
    from textual.containers import VerticalScroll

    plan = _real_plan(20)
    session.plans["/submit fork-join"] = plan
    async with make_app().run_test(size=(120, 50)) as pilot:
        await ask(pilot, "/submit fork-join")
        modal = pilot.app.screen
        assert isinstance(modal, ApprovalScreen)
        table = modal.query_one("#plan-jobs")
        rows = [table.get_row_at(i) for i in range(table.row_count)]  # type: ignore[attr-defined]
        assert [r[0] for r in rows] == ["fork", *(f"branch_{k:02d}" for k in range(20)), "join"]
        assert {r[3] for r in rows} == {"2048M"} and all(r[4] != "–" for r in rows)
        assert {r[1] for r in rows} <= {"n1", "n2"} and rows[-1][5].startswith("branch_00")
        blocks = [str(s.render()) for s in modal.query(".plan-command")]
        assert len(blocks) == 22
        for option in (
            "--mem=2048M",
            "--time=",
            "--cpus-per-task=1",
            "--nodelist=n",
            "--dependency=afterok:{job:fork}",
        ):
            assert option in blocks[1], (option, blocks[1])
        assert "argv: sbatch --parsable --job-name wass-run-fj-branch_00" in blocks[1]
        assert "--wrap=" in blocks[1]  # the literal command line, script included
        body = modal.query_one("#approval-body", VerticalScroll)
        last = list(modal.query(".plan-command"))[-1]
        assert body.max_scroll_y > 0 and not body.region.contains_region(last.region)
        body.focus()
        await pilot.press("end")
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert body.region.contains_region(last.region)
        assert str(last.render()).startswith("join")
