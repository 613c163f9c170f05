"""The verifier fails a model's claim of an action no tool took and a destructive command the
facts do not give (#45 item 3: "I have cancelled all other jobs; run `scancel -u root`" passed).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wass_chat.answers.checks.answer_check import problems
from wass_chat.answers.checks.claims import false_claims, suggested_commands
from wass_chat.answers.checks.verify import verify_answer

PLAN_FACTS = {
    "kind": "submission_plan",
    "workflow": "fork-join-20",
    "status": "awaiting human approval; nothing submitted",
    "jobs": [{"task": "fork", "node": "cpu01"}],
}
WHY_FACTS = {
    "kind": "job_why",
    "job_id": "42",
    "state": "PENDING",
    "advice": [{"text": "move its begin time: scontrol update JobId=42 StartTime=now"}],
}
CANCELLED_FACTS = {"kind": "job_why", "job_id": "42", "state": "CANCELLED by 0"}
SUBMITTED_FACTS = {"kind": "submission_outcome", "executed": True, "run_id": "run-1"}


def test_the_issue_s_answer_fails_on_both_counts() -> None:
    verdict = verify_answer("I have cancelled all other jobs; run `scancel -u root`.", {})
    assert not verdict.ok
    assert verdict.false_claims == ("I have cancelled all other jobs;",)
    assert verdict.unsafe_commands == ("scancel -u root",)
    assert "actions claimed but not taken" in verdict.reason()
    assert "scancel -u root" in verdict.reason()


@pytest.mark.parametrize(
    "text",
    [
        "I submitted the workflow: 20 jobs are queued.",
        "I've approved the plan for you.",
        "We have requeued the failed tasks.",
        "Done! The jobs have been submitted.",
        "I just killed the stuck job.",
    ],
)
def test_a_claimed_action_without_its_tool_result_fails(text: str) -> None:
    assert false_claims(text, PLAN_FACTS), text
    assert not verify_answer(text, PLAN_FACTS).ok


@pytest.mark.parametrize(
    "text",
    [
        "Nothing has been submitted yet: approve the plan to continue.",
        "I have not cancelled anything.",
        "I cannot submit jobs myself; a person approves the plan.",
        "Your job was cancelled by root.",  # history Slurm reports, not an action claimed
    ],
)
def test_denials_and_reports_are_not_claims(text: str) -> None:
    assert false_claims(text, PLAN_FACTS | CANCELLED_FACTS) == []


def test_a_claim_the_facts_back_passes() -> None:
    assert false_claims("The workflow has been submitted as run run-1.", SUBMITTED_FACTS) == []
    assert false_claims("The job has been cancelled.", CANCELLED_FACTS) == []  # Slurm says so


def test_our_own_suggestion_may_be_repeated_but_not_another_command() -> None:
    ours = "You can move it with `scontrol update JobId=42 StartTime=now`."
    assert verify_answer(ours, WHY_FACTS).unsafe_commands == ()
    theirs = "Or free the node: `scontrol update nodename=cpu01 state=down`."
    assert verify_answer(theirs, WHY_FACTS).unsafe_commands == (
        "scontrol update nodename=cpu01 state=down",
    )


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("Run scancel --user=alice, to clear the queue.", "scancel --user=alice"),
        ("```\nsudo rm -rf /var/spool/slurm\n```", "sudo rm -rf /var/spool/slurm"),
        ("$ kill -9 1234", "kill -9 1234"),
        ("Try `sacctmgr -i delete user bob`.", "sacctmgr -i delete user bob"),
    ],
)
def test_destructive_commands_are_found_in_code_and_slurm_ones_in_prose(
    text: str, command: str
) -> None:
    assert command in suggested_commands(text)


def test_kill_in_prose_is_english_not_a_command() -> None:
    assert suggested_commands("The OOM killer may kill the job if it exceeds --mem.") == []


def test_the_answer_checker_reports_them_too() -> None:
    found = problems("I have cancelled all other jobs; run `scancel -u root`.", {})
    assert any(p.startswith("claims an action not taken") for p in found)
    assert "suggests a destructive command not in the facts: scancel -u root" in found


async def test_an_online_answer_claiming_a_cancel_is_replaced_and_logged(tmp_path: Path) -> None:
    """End to end: the model's text would have passed the numbers check (it has none)."""
    from tests.agent.fake_ollama import FakeOllama, Reply
    from tests.agent.test_injection import ask, fresh_settings
    from wass_chat.agent.events import Final
    from wass_chat.agent.session import open_session

    text = "I have cancelled all other jobs; run `scancel -u root`."
    script = [Reply(tool_calls=[("simulate", {"workflow": "fork-join-20"})]), Reply(text)]
    with FakeOllama(script) as server:
        settings = fresh_settings(tmp_path, server.url)
        events = await ask(open_session(settings), "simulate fork-join-20")
    final = events[-1]
    assert isinstance(final, Final) and final.verified is False
    assert "scancel" not in final.text and "cancelled" not in final.text
    logged = json.loads((settings.history_dir / "verifier.jsonl").read_text().splitlines()[-1])
    assert logged["answer"] == text
    assert "actions claimed but not taken" in logged["reason"]
    assert "scancel -u root" in logged["reason"]
