"""A workflow plan that holds on a busy cluster (#41 item 7), judged by Slurm's own starts.

fork-join-20 was predicted at 1,432 s while Slurm put its first task two hours out: each task
asked ``--mem=2048M`` on nodes whose free memory was less, and the plan saw only cores. Here
every node of the local cluster (n1, n2: 2000 MB; n3: 4000 MB; n4: 8000 MB) has less memory free
than a task asks (1500 MB, the join 2500 MB), for a minute, and a job pending behind them takes
most of n4's memory for a minute more. The plan must wait for the memory (not start at 0 on
idle cores), never put the join on a 2000 MB node, keep off n4 while the pending job holds
it, and predict the first start within the stated bound of the real one (sacct). The run log
must then hold the plan approved: its digest and the document it hashes.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sim.model import Task, Workflow
from tests.slurm.conftest import Cluster, wait_for_final
from wass_chat.runlog import RunLog
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.formats import slurm_time
from wass_chat.slurm.nodes import platform_from_slurm
from wass_chat.slurm.plan_digest import canonical_json, plan_digest, sha256_hex, submit_approved
from wass_chat.slurm.submission import plan_new_run

MB = 2**20
FILLERS = {"n1": 1000, "n2": 1000, "n3": 3000, "n4": 7000}
"""Memory each node's filler job holds: every node then has less than 1500 MB free."""
FILLER_S = 55
"""How long a filler sleeps, under its one-minute limit (the model holds it the whole limit)."""


def fork_join(width: int, seconds: float) -> Workflow:
    """fork, ``width`` branches of 1500 MB, a 2500 MB join; one core each."""
    tasks = [Task("fork", seconds * 1e9, memory=1500 * MB)]
    tasks += [
        Task(f"branch_{k:02d}", seconds * 1e9, memory=1500 * MB, parents=("fork",))
        for k in range(width)
    ]
    joined = tuple(f"branch_{k:02d}" for k in range(width))
    tasks.append(Task("join", seconds * 1e9, memory=2500 * MB, parents=joined))
    return Workflow("fork-join-mem", tuple(tasks), ())


def _sbatch(commands: SlurmCommands, *args: str) -> str:
    return commands.sbatch(["--job-name", "wass-test-filler", "--output=/dev/null", *args])


def _wait_running(commands: SlurmCommands, job_ids: list[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        live = commands.queue(job_ids)
        if all(j in live and live[j].state == "RUNNING" for j in job_ids):
            return
        assert time.monotonic() < deadline, {j: live.get(j) for j in job_ids}
        time.sleep(0.5)


@pytest.mark.slurm
@pytest.mark.xdist_group("slurm")
def test_the_plan_waits_for_memory_and_the_queue_and_slurm_agrees(
    cluster: Cluster, wass_home: Path, tmp_path: Path
) -> None:
    commands = SlurmCommands()
    fillers = [
        _sbatch(
            commands,
            "-N1",
            f"--nodelist={node}",
            "--ntasks=1",
            "--cpus-per-task=1",
            f"--mem={mb}M",
            "--time=1",
            f"--wrap=sleep {FILLER_S}",
        )
        for node, mb in FILLERS.items()
    ]
    pending: list[str] = []
    try:
        _wait_running(commands, fillers)
        # Only n4 can host 7500 MB: this job waits for n4's filler, then holds n4 a minute.
        pending.append(
            _sbatch(
                commands,
                "-N1",
                "--ntasks=1",
                "--cpus-per-task=1",
                "--mem=7500M",
                "--time=1",
                f"--wrap=sleep {FILLER_S}",
            )
        )
        time.sleep(1)  # let the controller give it a reason (Resources)
        platform = platform_from_slurm(commands).platform
        made = datetime.now()
        plan = plan_new_run(
            fork_join(6, 5.0), platform, "heft", tmp_path / "runs", live=commands, scale=1.0
        )
        assert plan.queue is not None and plan.queue.memory_counted
        starts = {r.task: r for r in plan.predicted.tasks}
        # Nothing fits anywhere before the fillers end: the plan waits for the memory.
        assert plan.first_start >= FILLER_S - 15, plan.first_start
        assert starts["join"].node in ("n3", "n4")  # 2500 MB: never a 2000 MB node
        n4_pending = [h for h in plan.occupancy.holds if h.job == pending[0]]
        assert [h.node for h in n4_pending] == ["n4"], plan.occupancy.holds
        for record in starts.values():  # off n4 while the pending job holds 7500 of 8000 MB
            if record.node == "n4":
                assert record.end <= n4_pending[0].start or record.start >= n4_pending[0].until
        words = plan.start_lines()[0]
        assert "1 pending job ahead" in words and f"within {plan.queue.tolerance_s} s" in words

        digest = plan_digest(plan)
        runlog = RunLog(wass_home / "runs")
        record = submit_approved(plan, digest, commands, runlog)
        stored = runlog.get(record.run_id)
        assert stored.plan_digest == digest  # the plan approved, not a re-plan
        assert stored.approved_plan is not None
        assert sha256_hex(canonical_json(stored.approved_plan)) == digest
        assert stored.planned_makespan == plan.planned_makespan
        assert {d.task: d.node for d in stored.decisions} == {j.task: j.node for j in plan.jobs}

        rows = wait_for_final(list(record.job_ids), timeout=400, commands=commands)
        assert {r["State"].split()[0] for r in rows.values()} == {"COMPLETED"}, rows
        real_first = min(slurm_time(r["Start"]) or made for r in rows.values())
        predicted_first = made + timedelta(seconds=plan.first_start)
        error = (real_first - predicted_first).total_seconds()
        print(
            f"\nSlurm {cluster.version}: first task predicted {plan.first_start:.0f} s after "
            f"planning, started {(real_first - made).total_seconds():.0f} s after; error "
            f"{error:+.0f} s, bound {plan.queue.tolerance_s} s"
        )
        assert abs(error) <= plan.queue.tolerance_s
        ran_on = {d.task: rows[d.job_id]["NodeList"] for d in stored.decisions if d.job_id}
        assert ran_on == {j.task: j.node for j in plan.jobs}  # pinned: Slurm kept the plan
    finally:
        commands.cancel([*fillers, *pending])
