"""The approval screen names a running array task as people do, ``100_3``, not by Slurm's
internal job id of that task (#41 item 7); checked on real output of the live cluster, by both
routes (``squeue --json`` from 24.05 on, ``scontrol -d`` before)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.slurm.conftest import Cluster
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.occupancy import detailed_jobs, json_jobs, running_jobs


def test_an_array_task_of_scontrol_is_named_by_its_array_job_and_index() -> None:
    line = (
        "JobId=105 ArrayJobId=100 ArrayTaskId=3 JobName=a UserId=u(1) JobState=RUNNING "
        "Reason=None TimeLimit=00:05:00 EndTime=Unknown Partition=p NodeList=n1 NumNodes=1 "
        "NumCPUs=1 JOB_GRES=(null)   Nodes=n1 CPU_IDs=0 Mem=0 GRES= MinMemoryNode=0"
    )
    (job,) = detailed_jobs(line)
    assert job.job_id == "105" and job.shown_id == "100_3"
    assert job.line().startswith("job 100_3 (u)")
    (plain,) = detailed_jobs(line.replace("ArrayJobId=100 ArrayTaskId=3 ", ""))
    assert plain.shown_id == "105" and plain.line().startswith("job 105 (u)")


def test_an_array_task_of_squeue_json_is_named_the_same_way() -> None:
    def number(n: int, is_set: bool = True) -> dict[str, object]:
        return {"set": is_set, "infinite": False, "number": n}

    job = {
        "job_id": 105,
        "job_state": ["RUNNING"],
        "user_name": "u",
        "partition": "p",
        "time_limit": number(5),
        "end_time": number(0),
        "array_job_id": number(100),
        "array_task_id": number(3),
        "job_resources": {"nodes": {"allocation": [{"name": "n1", "cpus": {"count": 1}}]}},
    }
    plain = {**job, "job_id": 7, "array_job_id": number(0), "array_task_id": number(0, False)}
    found = json_jobs({"jobs": [job, plain]})
    assert found is not None and [j.shown_id for j in found] == ["100_3", "7"]


@pytest.mark.slurm
@pytest.mark.xdist_group("slurm")
def test_the_live_cluster_s_array_tasks_are_shown_as_array_and_index(
    cluster: Cluster, wass_home: Path
) -> None:
    commands = SlurmCommands()
    argv = [
        "sbatch",
        "--parsable",
        "--array=0-1",
        "-n1",
        "-t",
        "5",
        "--mem=64",
        "--output=/dev/null",
        "--wrap=sleep 120",
        "-J",
        "busy-array",
    ]
    array_id = commands.run(argv).strip().split(";")[0]
    try:
        deadline = time.monotonic() + 60
        while True:
            jobs, source = running_jobs(commands)
            mine = sorted(j.shown_id for j in jobs if j.shown_id.startswith(f"{array_id}_"))
            if len(mine) == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert mine == [f"{array_id}_0", f"{array_id}_1"], (source, [j.line() for j in jobs])
        lines = [j.line() for j in jobs if j.shown_id in mine]
        assert all(line.startswith(f"job {array_id}_") for line in lines), lines
    finally:
        commands.run(["scancel", array_id])
