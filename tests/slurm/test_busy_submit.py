"""`submit` on a busy cluster: the plan starts from what running jobs hold (issue #18).

The planning is pure (the occupancy parsers' tests are in test_occupancy_exact.py); the last
test runs against the real local cluster (a blocker job on the largest node, then ``submit
--dry-run``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sim.occupancy import Hold, Occupancy
from sim.wfformat import write_workflow
from tests.slurm.conftest import Cluster, layered_workflow
from tests.slurm.plugin_cases import CLUSTER
from wass_chat.cli import main
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.submission import plan_submission


def test_a_busy_node_is_planned_around_and_the_plan_says_so(tmp_path: Path) -> None:
    wf = layered_workflow("p", (3, 3), (10.0, 20.0))
    idle = plan_submission(wf, CLUSTER, "heft", "r1", tmp_path)
    favourite = max(CLUSTER.node_names, key=[j.node for j in idle.jobs].count)
    node = CLUSTER.node_by_name[favourite]
    busy = Occupancy((Hold(favourite, node.cores, 3600.0, "77"),))
    plan = plan_submission(wf, CLUSTER, "heft", "r2", tmp_path, occupancy=busy)
    assert favourite not in {j.node for j in plan.jobs}
    assert plan.occupancy == busy and idle.occupancy == Occupancy()
    assert plan.planned_makespan < 3600.0
    line = busy.summary(CLUSTER)
    assert line.startswith("the cluster was busy") and "1 running job" in line
    assert f"{node.cores} of {CLUSTER.total_cores} cores" in line


def test_a_node_whose_memory_is_all_held_is_planned_around(tmp_path: Path) -> None:
    """A running job without ``--mem`` holds its node's whole memory (CR_Core_Memory): the
    workflow's jobs ask at least 64 MB, so none is planned there however many cores are idle,
    even for tasks that state no memory."""
    wf = layered_workflow("p", (3, 3), (10.0, 20.0))
    assert all(t.memory == 0 for t in wf.tasks)
    idle = plan_submission(wf, CLUSTER, "heft", "r1", tmp_path)
    favourite = max(CLUSTER.node_names, key=[j.node for j in idle.jobs].count)
    node = CLUSTER.node_by_name[favourite]
    busy = Occupancy((Hold(favourite, 1, 3600.0, "77", memory=node.memory),))
    plan = plan_submission(wf, CLUSTER, "heft", "r2", tmp_path, occupancy=busy)
    assert favourite not in {j.node for j in plan.jobs}
    assert plan.planned_makespan < 3600.0


def test_the_demo_platform_plans_on_an_idle_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = main(["submit", "demo:fork-join-20", "--platform", "demo", "--dry-run", "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert "cluster" not in summary and "occupancy" not in summary


@pytest.mark.slurm
def test_submit_on_the_live_cluster_plans_around_a_running_job(
    cluster: Cluster, wass_home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "w.json"
    write_workflow(layered_workflow("w", (4, 4, 2), (20.0, 40.0), seed=4), path)
    capsys.readouterr()
    assert main(["submit", str(path), "--dry-run", "--json"]) == 0
    idle = json.loads(capsys.readouterr().out)
    assert idle["cluster"].startswith("the cluster was idle") and idle["occupancy"] == []
    favourite = max({j["node"] for j in idle["jobs"]}, key=[j["node"] for j in idle["jobs"]].count)
    commands = SlurmCommands()
    cores = {"n1": 2, "n2": 2, "n3": 4, "n4": 8}[favourite]
    blocker = (
        commands.run(
            [
                "sbatch",
                "--parsable",
                "-N1",
                f"--nodelist={favourite}",
                f"--cpus-per-task={cores}",
                "--mem=64M",
                "--time=30",
                "--job-name=busy-blocker",
                "--output=/dev/null",
                "--wrap=sleep 600",
            ]
        )
        .strip()
        .split(";")[0]
    )
    try:
        deadline = time.monotonic() + 60
        while favourite not in commands.run(["squeue", "-h", "-t", "R", "-o", "%N"]):
            assert time.monotonic() < deadline, "the blocker never started"
            time.sleep(0.5)
        assert main(["submit", str(path), "--dry-run", "--json"]) == 0
        busy = json.loads(capsys.readouterr().out)
        assert busy["cluster"].startswith("the cluster was busy")
        held = [h for h in busy["occupancy"] if h["job"] == blocker]
        assert [(h["node"], h["cores"]) for h in held] == [(favourite, cores)]
        assert 25 * 60 < held[0]["until"] <= 30 * 60  # the time limit, counted from now
        assert favourite not in {j["node"] for j in busy["jobs"]}
        assert main(["submit", str(path), "--dry-run"]) == 0
        assert "# the cluster was busy" in capsys.readouterr().out
    finally:
        commands.run(["scancel", blocker])
