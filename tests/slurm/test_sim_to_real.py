"""Sim-to-real: a scaled workflow on the real cluster against the simulator, two schedulers;
and the sacct parser (wass_chat.sacct) against what squeue reported while the jobs ran."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.slurm.conftest import Cluster, layered_workflow, wait_for_final
from wass_chat.runlog import RunLog
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.nodes import platform_from_slurm
from wass_chat.slurm.runs import submit_plan
from wass_chat.slurm.submission import plan_submission

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]

SCALE = 1.0


def real_makespan(rows: dict[str, dict[str, str]]) -> float:
    starts = [datetime.fromisoformat(r["Start"]) for r in rows.values()]
    ends = [datetime.fromisoformat(r["End"]) for r in rows.values()]
    return (max(ends) - min(starts)).total_seconds()


@pytest.mark.parametrize("scheduler", ["heft", "minmin"])
def test_real_makespan_is_close_to_the_simulated_one(
    cluster: Cluster, wass_home: Path, scheduler: str
) -> None:
    wf = layered_workflow("s2r", (2, 4, 2), (3.0, 5.0), seed=4)
    commands = SlurmCommands()
    plan = plan_submission(wf, platform_from_slurm(commands).platform, scheduler,
                           f"s2r-{scheduler}", wass_home / "out", scale=SCALE)  # fmt: skip
    record = submit_plan(plan, commands, RunLog(wass_home / "runs"))
    seen: dict[str, tuple[str, str]] = {}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # what squeue reports while the jobs run
        live = commands.queue(list(record.job_ids))
        for job_id, q in live.items():
            if q.state == "RUNNING":
                seen[job_id] = (q.nodes, q.state)
        if all(q.state not in ("PENDING", "RUNNING", "CONFIGURING") for q in live.values()):
            break
        time.sleep(0.3)
    rows = wait_for_final(list(record.job_ids), timeout=60)
    assert {r["State"] for r in rows.values()} == {"COMPLETED"}
    real = real_makespan(rows)
    simulated = plan.planned_makespan * SCALE
    error = abs(real - simulated) / simulated
    print(f"\nsim-to-real {scheduler}: simulated {simulated:.1f} s, real {real:.1f} s, "
          f"error {100 * error:.1f}%")  # fmt: skip
    assert error < 0.25
    check_sacct_parser_agrees(record.job_ids, seen)


def check_sacct_parser_agrees(job_ids: tuple[str, ...], seen: dict[str, tuple[str, str]]) -> None:
    """wass_chat.sacct's parser on real ``sacct -P`` text matches squeue's live view."""
    sacct = pytest.importorskip("wass_chat.sacct.parse")
    from wass_chat.sacct.fields import FIELDS

    commands = SlurmCommands()
    known = set(commands.run(["sacct", "--helpformat"]).lower().split())
    fields = [f for f in FIELDS if f.name.lower() in known]  # 22.05 has no Dependency field
    text = commands.run(["sacct", "-P", "-n", "-X", "-j", ",".join(job_ids),
                         "-o", ",".join(f.name for f in fields)])  # fmt: skip
    result = sacct.parse_sacct_text(text, fields)
    assert result.malformed == 0
    jobs = {r["job_id"]: r for r in result.jobs.to_dicts()}
    assert set(jobs) == set(job_ids)
    assert {r["state"] for r in jobs.values()} == {"COMPLETED"}
    assert seen, "squeue never showed a running job"
    for job_id, (nodes, _) in seen.items():
        assert jobs[job_id]["node_list"] == nodes
