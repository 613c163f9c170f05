"""The sim-to-real arithmetic without a cluster: job stamps, dispatch delays, the correction."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sim.model import Platform
from sim.wfformat import workflow_to_dict
from tests.slurm.conftest import layered_workflow
from tests.slurm.plugin_cases import CLUSTER
from wass_chat.runlog import RunLog
from wass_chat.slurm.job_stamps import read_stamps, stamped_sleep
from wass_chat.slurm.runs import platform_summary
from wass_chat.slurm.sim_to_real import dispatch_delays, makespan, simulate_with_overhead
from wass_chat.slurm.submission import plan_submission, sleep_time_limit


def test_a_stamped_sleep_reports_its_own_start_and_end(tmp_path: Path) -> None:
    out = tmp_path / "job.out"
    with out.open("w") as stdout:
        subprocess.run(["sh", "-c", stamped_sleep(0.2)], stdout=stdout, check=True)
    stamps = read_stamps(out)
    assert stamps is not None
    assert stamps[1] - stamps[0] >= 0.2  # a sleep lasts at least its time
    out.write_text("wass-start 12.5\n")  # a job killed mid-sleep has no end stamp
    assert read_stamps(out) is None and read_stamps(tmp_path / "missing.out") is None


def test_sleep_jobs_ask_for_twice_their_length_plus_a_minute() -> None:
    assert sleep_time_limit(1.0) == 120  # 62 s rounded up to whole minutes
    assert sleep_time_limit(60.0) == 180


def test_dispatch_delay_is_start_minus_the_latest_parent_end() -> None:
    intervals = {"a": (0.0, 2.0), "b": (0.0, 3.0), "c": (3.25, 5.0), "d": (5.5, 6.0)}
    parents = {"a": (), "b": (), "c": ("a", "b"), "d": ("c",)}
    assert dispatch_delays(parents, intervals) == [0.25, 0.5]
    assert makespan(intervals) == 6.0


def test_the_correction_adds_the_overhead_along_the_critical_chain(tmp_path: Path) -> None:
    platform: Platform = CLUSTER
    wf = layered_workflow("chain", (1, 1, 1), (2.0, 2.0), seed=0)  # three tasks in a chain
    plan = plan_submission(wf, platform, "heft", "chain", tmp_path, scale=0.5)
    record = RunLog(tmp_path / "runs").create(
        wf.name,
        workflow_to_dict(wf),
        platform_summary(plan),
        plan.scheduler,
        plan.planned_makespan,
        plan.decisions,
        scale=0.5,
    )
    base = simulate_with_overhead(record, 0.0)
    assert abs(base - plan.planned_makespan * 0.5) < 1e-6
    assert abs(simulate_with_overhead(record, 0.4) - base - 2 * 0.4) < 1e-6  # two dependent jobs
