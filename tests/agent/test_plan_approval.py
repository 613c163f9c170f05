"""Approval is bound to the exact plan shown (#45 item 3, #41 item 7): a person approves a digest,
and nothing else reaches Slurm.

``sbatch`` is the recorder on PATH (Slurm's CLI is an external process) and the decision log is
read back from disk: what was submitted and what was recorded are the process's real outputs.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from sim.demo import demo_platform, demo_workflow
from tests.agent.conftest import SbatchRecorder, submit_on_site
from tests.agent.test_injection import ask, fresh_settings, runs_created
from wass_chat.agent.events import ApprovalRequest
from wass_chat.agent.session import open_session
from wass_chat.answers.kinds import render
from wass_chat.runlog import RunLog
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.plan_digest import PlanMismatch, plan_digest, submit_approved
from wass_chat.slurm.submission import plan_submission

pytestmark = pytest.mark.xdist_group("agent-injection")


async def _request(session: object, text: str) -> ApprovalRequest:
    events = await ask(session, text)
    return next(e for e in events if isinstance(e, ApprovalRequest))


async def test_a_plan_on_the_embedded_demo_platform_is_never_submitted_even_approved(
    tmp_path: Path, sbatch: SbatchRecorder
) -> None:
    """#45: with Slurm away the chat plans on the demo platform, whose nodes are not the
    cluster's; a person approving that plan's digest still sends nothing to Slurm."""
    settings = fresh_settings(tmp_path)
    session = open_session(settings, offline=True)
    request = await _request(session, "submit fork-join-20")
    assert request.plan["platform"] == demo_platform().name and request.plan["note"]
    outcome = await session.resolve_approval(request.request_id, "approve", None, request.digest)
    assert outcome.error and "embedded demo platform" in outcome.error, outcome.summary
    assert sbatch.calls() == [] and runs_created(settings) == []


async def test_approve_without_the_digest_shown_or_with_another_submits_nothing(
    tmp_path: Path, sbatch: SbatchRecorder
) -> None:
    settings = fresh_settings(tmp_path)
    session = open_session(settings, offline=True)
    request = await _request(session, submit_on_site(tmp_path))
    assert request.digest == request.plan["plan_digest"] and len(request.digest) == 64
    missing = await session.resolve_approval(request.request_id, "approve")
    other = await _request(session, submit_on_site(tmp_path))
    forged = await session.resolve_approval(other.request_id, "approve", None, "0" * 64)
    assert missing.error and "not the plan shown" in missing.error
    assert forged.error and "not the plan shown" in forged.error
    assert sbatch.calls() == [] and runs_created(settings) == []
    third = await _request(session, submit_on_site(tmp_path))
    done = await session.resolve_approval(third.request_id, "approve", None, third.digest)
    assert done.error is None, done.summary
    assert len(sbatch.calls()) == len(demo_workflow("fork-join-20"))


async def test_the_run_log_records_the_plan_approved_not_a_re_plan(
    tmp_path: Path, sbatch: SbatchRecorder
) -> None:
    """#41 item 7: the log stored a re-plan (1,942 s) instead of the plan approved."""
    settings = fresh_settings(tmp_path)
    session = open_session(settings, offline=True)
    request = await _request(session, submit_on_site(tmp_path))
    kept = session.cluster.prepared[request.plan["planned_run_id"]]
    outcome = await session.resolve_approval(request.request_id, "approve", None, request.digest)
    assert outcome.error is None, outcome.summary
    run_id = outcome.data["run_id"]
    assert run_id == request.plan["planned_run_id"]
    record = json.loads((settings.runs_dir / f"{run_id}.json").read_text())
    assert record["planned_makespan"] == request.plan["predicted_makespan_s"]
    shown = {job["task"]: (job["node"], job["planned_start_s"]) for job in request.plan["jobs"]}
    logged = {d["task"]: (d["node"], d["planned_start"]) for d in record["decisions"]}
    assert logged == shown
    for line, job in zip(sbatch.calls(), kept.jobs, strict=True):  # the kept plan, job by job
        assert f"--job-name {job.name} " in line and f"--nodelist={job.node} " in line
        assert f"--mem={job.memory_mb}M " in line and f"--output={job.output} " in line


async def test_an_edit_submits_the_edited_plan_under_its_own_digest(
    tmp_path: Path, sbatch: SbatchRecorder
) -> None:
    settings = fresh_settings(tmp_path)
    session = open_session(settings, offline=True)
    request = await _request(session, submit_on_site(tmp_path))
    first = request.plan["jobs"][0]["task"]
    outcome = await session.resolve_approval(
        request.request_id, "edit", {"jobs": [{"task": first, "node": "cpu02"}]}
    )
    assert outcome.error is None, outcome.summary
    record = json.loads((settings.runs_dir / f"{outcome.data['run_id']}.json").read_text())
    assert {d["task"]: d["node"] for d in record["decisions"]}[first] == "cpu02"
    assert "--nodelist=cpu02" in sbatch.calls()[0]


@pytest.mark.parametrize(
    "change",
    [
        {"scheduler": "minmin"},  # a re-plan nobody saw
        {"partition": "long"},
        {"jobs": [{"task": "fork_000", "node": "cpu02", "command": ["sh", "-c", "id"]}]},
        {"jobs": [{"task": "fork_000", "sbatch": ["--mem=1T"]}]},
    ],
    ids=["scheduler", "partition", "command", "options"],
)
async def test_an_edit_that_changes_more_than_nodes_is_refused(
    tmp_path: Path, sbatch: SbatchRecorder, change: dict[str, object]
) -> None:
    settings = fresh_settings(tmp_path)
    session = open_session(settings, offline=True)
    request = await _request(session, submit_on_site(tmp_path))
    assert any(job["task"] == "fork_000" for job in request.plan["jobs"])
    outcome = await session.resolve_approval(request.request_id, "edit", change)
    assert outcome.error and "edit" in outcome.error
    assert sbatch.calls() == [] and runs_created(settings) == []


def test_submit_approved_refuses_a_plan_changed_after_approval(
    tmp_path: Path, sbatch: SbatchRecorder
) -> None:
    """Recomputed just before sbatch: a plan that differs in one option is refused, unlogged."""
    wf, pf = demo_workflow("fork-join-20"), demo_platform()
    plan = plan_submission(wf, pf, "heft", "run-approved", tmp_path / "out")
    approved = plan_digest(plan)
    bigger = replace(plan, jobs=(replace(plan.jobs[0], memory_mb=64_000), *plan.jobs[1:]))
    runlog = RunLog(tmp_path / "runs")
    with pytest.raises(PlanMismatch) as caught:
        submit_approved(bigger, approved, SlurmCommands(), runlog)
    assert "not the plan approved" in caught.value.one_line()
    with pytest.raises(PlanMismatch):
        submit_approved(plan, None, SlurmCommands(), runlog)
    assert sbatch.calls() == [] and not list((tmp_path / "runs").glob("*.json"))


def test_the_digest_covers_every_command_word_and_option() -> None:
    wf, pf = demo_workflow("fork-join-20"), demo_platform()
    plan = plan_submission(wf, pf, "heft", "run-x", Path("/tmp/out"))
    job = plan.jobs[1]
    variants = {
        "memory": replace(job, memory_mb=job.memory_mb + 1),
        "time": replace(job, time_limit_s=(job.time_limit_s or 0) + 60),
        "node": replace(job, node="cpu03" if job.node != "cpu03" else "cpu04"),
        "dependency": replace(job, parents=()),
        "command": replace(job, command=("echo", "x"), script="echo x"),
        "partition": replace(job, partition="other"),
    }
    base = plan_digest(plan)
    digests = {
        name: plan_digest(replace(plan, jobs=(plan.jobs[0], changed, *plan.jobs[2:])))
        for name, changed in variants.items()
    }
    assert base not in digests.values() and len(set(digests.values())) == len(variants)
    other_wf = replace(wf, tasks=(replace(wf.tasks[0], command=("true",)), *wf.tasks[1:]))
    assert plan_digest(replace(plan, workflow=other_wf)) != base
    assert plan_digest(plan_submission(wf, pf, "heft", "run-x", Path("/tmp/out"))) == base


async def test_the_chat_plans_on_the_knowledge_bases_runtimes_when_asked(
    tmp_path: Path, sbatch: SbatchRecorder
) -> None:
    """As `wass-chat submit --estimates kb`: asked in words or with the slash option, the plan
    assumes the runtimes the knowledge base's similar runs give, and says which."""
    from kb.estimates import history_words, retrieve_predictions

    settings = fresh_settings(tmp_path)
    session = open_session(settings, offline=True)
    plain = await _request(session, "submit fork-join-20")
    worded = await _request(session, "submit fork-join-20 using past runs")
    slashed = await _request(session, "/submit fork-join-20 estimates=kb")
    assert plain.plan["estimates"] == "workflow"
    wanted = history_words(
        retrieve_predictions(
            session.cluster.sources.knowledge_base, demo_workflow("fork-join-20"), demo_platform()
        )
    )
    assert wanted.startswith("kb: ") and "simulated case" in wanted
    assert worded.plan["estimates"] == slashed.plan["estimates"] == wanted
    assert worded.plan["predicted_makespan_s"] != plain.plan["predicted_makespan_s"]
    assert f"Runtimes from `{wanted}`." in render(worded.plan)  # what the approval screen shows
    assert sbatch.calls() == [] and runs_created(settings) == []
