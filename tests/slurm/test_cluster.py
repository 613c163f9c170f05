"""Against a real Slurm cluster: platform, submission order and nodes, cancel, a refused sbatch."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from sim.wfformat import write_workflow
from tests.slurm.conftest import Cluster, layered_workflow, wait_for_final
from wass_chat.cli import main
from wass_chat.runlog import RunLog
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.nodes import platform_from_slurm
from wass_chat.slurm.runs import PartlySubmitted, cancel_run, submit_plan
from wass_chat.slurm.submission import plan_submission

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_platform_from_slurm_matches_the_cluster_config(
    cluster: Cluster, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "platform.json"
    doc = cli_json(capsys, "platform", "from-slurm", "-o", str(out))
    assert isinstance(doc, dict)
    nodes = {
        n["name"]: (n["cores"], n["memory"] // 2**20, n["gpus"], n["features"])
        for n in doc["nodes"]
    }
    assert nodes == {
        "n1": (2, 2000, 0, ["small"]),
        "n2": (2, 2000, 0, ["small"]),
        "n3": (4, 4000, 0, ["medium"]),
        "n4": (8, 8000, 2, ["large"]),
    }
    assert doc["excluded"] == [] and json.loads(out.read_text())["nodes"] == doc["nodes"]
    small = platform_from_slurm(partition="small")
    assert small.platform.node_names == ("n1", "n2")


def test_twenty_tasks_run_in_dependency_order_on_the_planned_nodes(
    cluster: Cluster, wass_home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    wf = layered_workflow("twenty", (3, 5, 5, 4, 3), (1.0, 3.0), seed=1)
    assert len(wf) == 20
    path = tmp_path / "twenty.json"
    write_workflow(wf, path)
    dry = cli_json(capsys, "submit", str(path), "--dry-run", "--scale", "0.3")
    assert isinstance(dry, dict)
    assert all(j["argv"][:2] == ["sbatch", "--parsable"] for j in dry["jobs"])
    result = cli_json(capsys, "submit", str(path), "--yes", "--scale", "0.3")
    assert isinstance(result, dict)
    run_id, job_of = result["run_id"], result["jobs"]
    rows = wait_for_final(list(job_of.values()), timeout=120)

    record = RunLog(wass_home / "runs").get(run_id)
    assert record.state == "submitted" and len(record.decisions) == 20

    def when(text: str) -> datetime:
        return datetime.fromisoformat(text)

    for d in record.decisions:
        row = rows[job_of[d.task]]
        assert row["State"] == "COMPLETED", row
        assert row["NodeList"] == d.node, (d.task, row["NodeList"], d.node)
        assert f"task={d.task};node={d.node}" in row["Comment"]
        for parent in wf.parents[d.task]:
            assert when(rows[job_of[parent]]["End"]) <= when(row["Start"]), (parent, d.task)

    status = cli_json(capsys, "status", run_id)
    assert isinstance(status, dict) and status["run_id"] == run_id
    assert {s["state"] for s in status["tasks"]} == {"COMPLETED"}
    s2r = status["sim_to_real"]  # every job stamped its own times (sleep jobs of --scale)
    assert s2r["timing_source"] == "job stamps" and s2r["simulated_s"] > 0
    assert s2r["real_s"] > s2r["simulated_s"] * 0.5 and s2r["dispatch_overhead_s"] > 0
    logged = RunLog(wass_home / "runs").get(run_id)
    assert all(d.real_node == d.node for d in logged.decisions)
    runs = cli_json(capsys, "runs")
    assert isinstance(runs, list) and [r["run_id"] for r in runs] == [run_id]


def test_cancel_stops_every_unfinished_job(
    cluster: Cluster, wass_home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    wf = layered_workflow("long", (2, 2), (200.0, 300.0), seed=2)
    path = tmp_path / "long.json"
    write_workflow(wf, path)
    result = cli_json(capsys, "submit", str(path), "--yes")
    assert isinstance(result, dict)
    assert main(["cancel", result["run_id"], "--yes"]) == 0
    rows = wait_for_final(list(result["jobs"].values()), timeout=30)
    assert {r["State"].split()[0] for r in rows.values()} == {"CANCELLED"}
    assert RunLog(wass_home / "runs").get(result["run_id"]).state == "cancelled"


def test_a_refused_sbatch_stops_the_submission_and_keeps_the_jobs_before_it(
    cluster: Cluster, wass_home: Path
) -> None:
    wf = layered_workflow("broken", (2, 2), (100.0, 200.0), seed=3)
    pf = platform_from_slurm().platform
    plan = plan_submission(wf, pf, "heft", "broken-run", wass_home / "out")
    bad = plan.jobs[2]
    object.__setattr__(bad, "node", "no-such-node")  # sbatch rejects the third job
    runlog = RunLog(wass_home / "runs")
    with pytest.raises(PartlySubmitted, match="partly submitted: 2 of 4 jobs") as raised:
        submit_plan(plan, SlurmCommands(), runlog)
    assert "job 3 of 4" in str(raised.value) and "wass-chat cancel broken-run" in str(raised.value)
    record = runlog.get("broken-run")
    assert record.state == "partly submitted" and "Invalid node name" in (record.error or "")
    assert not (wass_home / "runs" / "broken-run.jobs").exists()  # folded into the record
    submitted = [d.job_id for d in record.decisions if d.job_id]
    assert len(submitted) == 2 and [d.state for d in record.decisions][2:] == ["NOT_SUBMITTED"] * 2
    cancelled = cancel_run(record, SlurmCommands(), runlog)
    assert sorted(cancelled, key=int) == sorted(submitted, key=int)
    rows = wait_for_final(submitted, timeout=30)
    assert {r["State"].split()[0] for r in rows.values()} == {"CANCELLED"}


def test_refuses_to_submit_without_confirmation(
    cluster: Cluster, wass_home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "w.json"
    write_workflow(layered_workflow("w", (2,), (1.0, 2.0)), path)
    assert main(["submit", str(path)]) == 2  # pytest's stdin is not a terminal
    assert not (wass_home / "runs").exists() or not list((wass_home / "runs").glob("*.json"))
