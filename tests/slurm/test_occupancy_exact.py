"""Occupancy exactly as Slurm allocated it, node by node (issue #35, item 3).

The parsers run on real output of Slurm 22.05 (tests/slurm/data); the last tests run jobs spread
unevenly on the real cluster and check that the planner's holds equal ``scontrol show node``'s
CPUAlloc on every node, and that the plan shown for approval names each busy job's partition,
``--time`` and ``--mem``.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

import pytest

from sim.model import Node, Platform
from sim.occupancy import Hold
from sim.wfformat import write_workflow
from tests.slurm.conftest import Cluster, layered_workflow
from wass_chat.cli import main
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.nodes import platform_from_slurm
from wass_chat.slurm.occupancy import (
    NO_END_HOLD_S,
    BusyJob,
    cluster_occupancy,
    detailed_jobs,
    holds_of,
    json_jobs,
    running_jobs,
)

DATA = Path(__file__).parent / "data" / "slurm-22.05"
PLATFORM = Platform(
    "local", tuple(Node(n, c, 8 * 2**30) for n, c in (("n1", 2), ("n2", 2), ("n3", 4), ("n4", 8)))
)


def test_per_node_cpus_come_from_the_detail_lines_of_scontrol() -> None:
    """Real 22.05 output: a 7-CPU job on n[1-3] holds 2 + 2 + 3, a 3-CPU cyclic job on n[3-4]
    holds 1 + 2 (an even share would have said 3 + 3 + 1 and 2 + 2); finished and pending jobs
    hold nothing."""
    jobs = detailed_jobs((DATA / "scontrol-d-oneliner-show-job.txt").read_text())
    assert [(j.job_id, j.cpus_by_node) for j in jobs] == [
        ("5", (("n1", 2), ("n2", 2), ("n3", 3))),
        ("6", (("n3", 1), ("n4", 2))),
    ]
    block, cyclic = jobs
    assert (block.partition, block.time_limit, block.memory) == (
        "debug",
        "00:10:00",
        "--mem-per-cpu=100M",
    )
    assert (cyclic.time_limit, cyclic.memory, cyclic.user) == ("00:05:00", "--mem=200M", "root")
    assert block.end == datetime(2026, 11, 27, 8, 14, 38)  # EndTime: start + time limit
    line = block.line(now=block.end)
    assert line.startswith("job 5 (root): partition debug, --time=00:10:00, --mem-per-cpu=100M;")
    assert "n1 2 + n2 2 + n3 3 CPUs" in line


def test_22_05_json_has_no_per_node_cpus_so_the_text_is_read() -> None:
    """openapi v0.0.38 (22.05) gives a per-socket core map without threads, not CPUs per node:
    :func:`json_jobs` declines, and :func:`running_jobs` reads ``scontrol -d`` instead."""
    payload = json.loads((DATA / "squeue-json-running.json").read_text())
    assert payload["meta"]["plugin"]["type"] == "openapi/v0.0.38"
    assert json_jobs(payload) is None


@pytest.mark.parametrize(("release", "parser"), [("24.11", "v0.0.42"), ("26.05", "v0.0.45")])
def test_newer_json_and_text_say_the_same_per_node_cpus(release: str, parser: str) -> None:
    """Real output of Debian's 24.11 and 26.05: ``job_resources.nodes.allocation[].cpus.count``
    and the ``CPU_IDs`` detail agree job by job, on the same uneven jobs (``-n5 -w n2,n3
    --distribution=block``: 2 + 3; ``-n3 -N2 --distribution=cyclic``: 1 + 2; ``-c5`` on n4)."""
    data = DATA.parent / f"slurm-{release}"
    payload = json.loads((data / "squeue-json-running.json").read_text())
    assert payload["meta"]["plugin"]["data_parser"] == f"data_parser/{parser}"
    from_json = json_jobs(payload)
    from_text = detailed_jobs((data / "scontrol-d-oneliner-show-job.txt").read_text())
    assert from_json is not None
    assert [(j.job_id, j.cpus_by_node, j.time_limit, j.memory) for j in from_json] == [
        ("13", (("n2", 2), ("n3", 3)), "00:10:00", "--mem-per-cpu=64M"),
        ("14", (("n3", 1), ("n4", 2)), "00:07:00", "--mem=128M"),
        ("15", (("n4", 5),), "00:05:00", "--mem=256M"),
    ]
    assert from_json == from_text  # the pending job 16 holds nothing in either


def test_holds_are_capped_at_a_nodes_cores_and_counted_from_now() -> None:
    now = datetime(2026, 11, 24, 2, 0, 0)
    jobs = [
        BusyJob("11", "a", "debug", "00:10:00", "", (("n1", 2),), datetime(2026, 11, 24, 2, 10)),
        BusyJob("12", "b", "debug", "", "", (("n3", 3), ("elsewhere", 4)), None),
        BusyJob("13", "c", "debug", "", "", (("n3", 64),), datetime(2026, 11, 24, 3, 0)),
        BusyJob("14", "d", "debug", "", "", (("n2", 1),), datetime(2026, 11, 24, 1, 59)),
    ]
    occupancy = holds_of(jobs, PLATFORM, now)
    assert occupancy.holds == (
        Hold("n1", 2, 600.0, "11"),
        Hold("n3", 3, NO_END_HOLD_S, "12"),  # no time limit: a week; "elsewhere" is not ours
        Hold("n3", 1, 3600.0, "13"),  # only the core left on n3
    )  # job 14 is past its end: nothing held
    occupancy.check(PLATFORM)


def test_core_ids_of_a_node_with_two_threads_per_core_are_scaled_to_num_cpus() -> None:
    line = (
        "JobId=9 JobName=t UserId=u(1) JobState=RUNNING Reason=None TimeLimit=01:00:00 "
        "EndTime=Unknown Partition=p NodeList=n[1-2] NumNodes=2 NumCPUs=8 "
        "JOB_GRES=(null)   Nodes=n1 CPU_IDs=0-2 Mem=0 GRES=   Nodes=n2 CPU_IDs=0 Mem=0 GRES= "
        "MinCPUsNode=1 MinMemoryNode=0"
    )
    (job,) = detailed_jobs(line)
    assert job.cpus_by_node == (("n1", 6), ("n2", 2)) and job.cpus == 8
    assert job.memory == "" and job.end is None


def _cpu_alloc(commands: SlurmCommands) -> dict[str, int]:
    return {r["NodeName"]: int(r.get("CPUAlloc") or 0) for r in commands.show_nodes()}


def _per_node(jobs: list[BusyJob]) -> dict[str, int]:
    held: dict[str, int] = {}
    for job in jobs:
        for node, cpus in job.cpus_by_node:
            held[node] = held.get(node, 0) + cpus
    return held


@pytest.mark.slurm
def test_occupancy_equals_cpualloc_on_every_node_for_uneven_jobs(
    cluster: Cluster, wass_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commands = SlurmCommands()
    usable = platform_from_slurm(commands).platform.node_names
    wide = [n for n in ("n2", "n3", "n4") if n in usable]
    assert len(wide) == 3, f"the test needs n2-n4 usable: {usable}"
    base = ["sbatch", "--parsable", "--output=/dev/null", "--wrap=sleep 300"]
    jobs = [
        # all of n2, 3 of n3's 4 CPUs; then 1 on n3 and 2 on n4 (cyclic), 5 more on n4
        [
            *base,
            "-n5",
            "-w",
            "n2,n3",
            "--distribution=block",
            "--mem-per-cpu=64",
            "-t",
            "10",
            "-J",
            "uneven-block",
        ],
        [
            *base,
            "-n3",
            "-N2",
            "-w",
            "n3,n4",
            "--distribution=cyclic",
            "--mem=128",
            "-t",
            "7",
            "-J",
            "uneven-cyclic",
        ],
        [*base, "-N1", "-w", "n4", "-c", "5", "--mem=256", "-t", "5", "-J", "uneven-one"],
    ]
    ids = [commands.run(argv).strip().split(";")[0] for argv in jobs]
    try:
        deadline = time.monotonic() + 60
        while set(ids) - set(commands.run(["squeue", "-h", "-t", "R", "-o", "%i"]).split()):
            assert time.monotonic() < deadline, "the uneven jobs never all started"
            time.sleep(0.5)
        for _ in range(5):  # another test's job may end between the two reads: read again
            mine, source = running_jobs(commands)
            alloc = _cpu_alloc(commands)
            if _per_node(mine) == {n: c for n, c in alloc.items() if c}:
                break
            time.sleep(1)
        assert _per_node(mine) == {n: c for n, c in alloc.items() if c}, (source, alloc)
        release = tuple(int(p) for p in getattr(cluster, "version", "22.05").split("."))
        structured = release >= (24, 5)  # squeue --json gives CPUs per node from 24.05 on
        assert source == ("squeue --json -t R" if structured else "scontrol -d --oneliner show job")
        by_id = {j.job_id: j for j in mine}
        assert by_id[ids[0]].cpus_by_node == (("n2", 2), ("n3", 3))
        assert by_id[ids[1]].cpus_by_node == (("n3", 1), ("n4", 2))
        assert by_id[ids[2]].cpus_by_node == (("n4", 5),)
        assert by_id[ids[1]].memory == "--mem=128M" and by_id[ids[1]].time_limit == "00:07:00"
        platform = platform_from_slurm(commands).platform
        live = cluster_occupancy(commands, platform)
        held = {h.node: 0 for h in live.occupancy.holds}
        for h in live.occupancy.holds:
            held[h.node] += h.cores
        assert held == {n: c for n, c in alloc.items() if c and n in usable}
        path = tmp_path / "w.json"
        write_workflow(layered_workflow("w", (2, 2), (20.0, 40.0), seed=3), path)
        capsys.readouterr()
        assert main(["submit", str(path), "--dry-run", "--json"]) == 0
        plan = json.loads(capsys.readouterr().out)
        lines = {line.split(" ")[1]: line for line in plan["busy_jobs"]}
        assert lines[ids[0]].startswith(
            f"job {ids[0]} (root): partition debug, --time=00:10:00, --mem-per-cpu=64M; "
            "n2 2 + n3 3 CPUs, until about "
        )
        assert "--time=00:05:00, --mem=256M; n4 5 CPUs" in lines[ids[2]]
        assert f"{sum(held.values())} of {platform.total_cores} cores" in plan["cluster"]
    finally:
        commands.cancel(ids)


BUSY_PLAN = {
    "kind": "submission_plan",
    "workflow": "w",
    "scheduler": "heft",
    "platform": "slurm-debug",
    "platform_ref": "slurm",
    "predicted_makespan_s": 95.0,
    "jobs": [{"task": "a", "node": "n1", "cores": 1, "after": []}],
    "cluster": "the cluster was busy: 10 of 16 cores on 3 of 4 nodes held by 2 running jobs",
    "busy_jobs": [
        "job 5 (root): partition debug, --time=00:10:00, --mem-per-cpu=100M; n1 2 + n2 2 + n3 3 "
        "CPUs, until about 08:14",
        "job 6 (root): partition debug, --time=00:05:00, --mem=200M; n3 1 + n4 2 CPUs, until "
        "about 08:09",
    ],
}


def test_the_approval_text_names_each_busy_jobs_partition_time_and_memory() -> None:
    from wass_chat.answers.submission_plan import render_submission_plan

    text = render_submission_plan(BUSY_PLAN)
    for line in BUSY_PLAN["busy_jobs"]:
        assert f"- held by `{line}`" in text


async def test_the_approval_modal_lists_the_busy_jobs_under_the_plan() -> None:
    from textual.app import App
    from textual.widgets import Static

    from tui.screens.approval import ApprovalScreen, busy_jobs, plan_fields
    from wass_chat.agent.events import ApprovalRequest

    assert busy_jobs(BUSY_PLAN) == BUSY_PLAN["busy_jobs"]
    assert "busy jobs" not in dict(plan_fields(BUSY_PLAN))  # one line each, not one JSON blob
    app: App[None] = App()
    async with app.run_test(size=(160, 40)) as pilot:
        app.push_screen(ApprovalScreen(ApprovalRequest("req-1", "submit_workflow", BUSY_PLAN)))
        await pilot.pause()
        shown = [str(s.render()).strip() for s in app.screen.query(Static).filter(".plan-busy")]
        assert shown == BUSY_PLAN["busy_jobs"]
