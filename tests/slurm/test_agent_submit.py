"""The chat's submission path on the real cluster: a plan first, jobs only after approval."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sim.demo import demo_workflow
from sim.wfformat import write_workflow
from tests.slurm.conftest import Cluster
from wass_chat.agent.events import ApprovalRequest, ChatEvent, Final
from wass_chat.agent.session import open_session
from wass_chat.config import Settings
from wass_chat.runlog import RunLog
from wass_chat.slurm.commands import SlurmCommands

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]


async def _ask(session: Any, text: str) -> list[ChatEvent]:
    return [event async for event in session.send(text)]


async def test_submit_montage_runs_on_the_cluster_only_after_approval(
    cluster: Cluster, wass_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workflow = demo_workflow("montage-60")
    monkeypatch.chdir(tmp_path)
    write_workflow(workflow, Path("montage.json"))
    settings = Settings(home=wass_home, ollama_host="http://127.0.0.1:9", ollama_timeout=0.5)
    commands = SlurmCommands()
    session = open_session(settings, offline=True)

    events = await _ask(session, "submit montage.json")
    request = next(e for e in events if isinstance(e, ApprovalRequest))
    assert isinstance(events[-1], Final)
    planned = {job["task"]: job["node"] for job in request.plan["jobs"]}
    assert set(planned) == {t.id for t in workflow.tasks}
    cluster_nodes = set(commands.run(["sinfo", "-h", "-N", "-o", "%N"]).split())
    assert set(planned.values()) <= cluster_nodes  # planned on the cluster's own nodes
    assert request.plan["cluster"].startswith("the cluster was")  # from its running jobs
    before = RunLog(settings.runs_dir).list_runs()  # the demo runs are logged as "planned"
    assert all(not run.job_ids and run.state == "planned" for run in before)

    refused = await session.resolve_approval(request.request_id, "approve")  # no digest named
    assert refused.error and "not the plan shown" in refused.error
    request = next(
        e for e in await _ask(session, "submit montage.json") if isinstance(e, ApprovalRequest)
    )
    planned = {job["task"]: job["node"] for job in request.plan["jobs"]}
    outcome = await session.resolve_approval(request.request_id, "approve", None, request.digest)
    assert outcome.error is None, outcome.summary
    job_ids = [str(j) for j in outcome.data["job_ids"]]
    try:
        assert len(job_ids) == len(workflow.tasks)
        shown = commands.show_jobs(job_ids)
        assert set(shown) == set(job_ids)
        record = RunLog(settings.runs_dir).get(outcome.data["run_id"])
        # the plan approved, not a re-plan (#41 item 7: the log held a 1,942 s re-plan)
        assert record.planned_makespan == request.plan["predicted_makespan_s"]
        for decision in record.decisions:
            job = shown[str(decision.job_id)]
            assert job["ReqNodeList"] == planned[decision.task]
            assert f"task={decision.task}" in job.get("Comment", "")
    finally:
        commands.run(["scancel", *job_ids])
