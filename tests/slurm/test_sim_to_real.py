"""Sim-to-real: a scaled workflow on the real cluster against the simulator, two schedulers.

Each job stamps its own start and end (sub-millisecond); the comparison reports the raw error
and the error once Slurm's measured dispatch overhead per dependent job is modelled
(wass_chat.slurm.sim_to_real). The overhead measured in one scheduler's run is also applied to
the other's (out of sample), so the correction is not fitted to the makespan it explains.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.slurm.conftest import Cluster, layered_workflow, wait_for_final
from wass_chat.runlog import RunLog, RunRecord
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.nodes import platform_from_slurm
from wass_chat.slurm.runs import TaskStatus, run_status, submit_plan
from wass_chat.slurm.sim_to_real import SimToReal, compare_run
from wass_chat.slurm.submission import plan_submission

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]

SCALE = 1.0
SCHEDULERS = ("heft", "minmin")
WIDTHS = (2, 4, 2)
RUNTIMES = (6.0, 9.0)
"""Seconds per task: long enough that Slurm's ~1 s per dependency level is a small share."""


@dataclass(frozen=True)
class FinishedRun:
    record: RunRecord
    statuses: list[TaskStatus]
    comparison: SimToReal


@pytest.fixture(scope="module")
def finished(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, FinishedRun]:
    """The same workflow planned by each scheduler, run one after the other (never overlapping)."""
    home = tmp_path_factory.mktemp("s2r")
    runlog = RunLog(home / "runs")
    commands = SlurmCommands()
    platform = platform_from_slurm(commands).platform
    wf = layered_workflow("s2r", WIDTHS, RUNTIMES, seed=4)
    done = {}
    for scheduler in SCHEDULERS:
        plan = plan_submission(wf, platform, scheduler, f"s2r-{scheduler}", home / "out",
                               scale=SCALE)  # fmt: skip
        record = submit_plan(plan, commands, runlog)
        wait_for_final(list(record.job_ids), timeout=120)
        record = runlog.get(record.run_id)
        statuses = run_status(record, commands, runlog)
        comparison = compare_run(record, statuses)
        assert comparison is not None, [(s.task, s.state) for s in statuses]
        done[scheduler] = FinishedRun(runlog.get(record.run_id), statuses, comparison)
    return done


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_real_makespan_is_close_to_the_simulated_one(
    finished: dict[str, FinishedRun], scheduler: str
) -> None:
    run = finished[scheduler]
    c = run.comparison
    assert all(s.node == s.planned_node for s in run.statuses)
    assert c.timing_source == "job stamps"
    assert c.real_sacct_s is not None and abs(c.real_sacct_s - c.real_s) <= 2.0
    assert c.dispatch_overhead_s is not None and 0.0 < c.dispatch_overhead_s < 5.0
    assert c.corrected_error is not None and c.corrected_simulated_s is not None
    print(f"\nsim-to-real {scheduler}: simulated {c.simulated_s:.2f} s, real {c.real_s:.2f} s "
          f"(sacct {c.real_sacct_s:.0f} s), raw error {100 * c.raw_error:.1f}%; dispatch "
          f"overhead {c.dispatch_overhead_s:.2f} s -> {c.corrected_simulated_s:.2f} s, "
          f"corrected error {100 * c.corrected_error:.1f}%")  # fmt: skip
    assert c.raw_error < 0.25
    assert c.corrected_error < 0.10


def test_overhead_measured_on_one_run_corrects_the_other(
    finished: dict[str, FinishedRun],
) -> None:
    errors = {}
    for scheduler, other in zip(SCHEDULERS, reversed(SCHEDULERS), strict=True):
        run = finished[scheduler]
        overhead = finished[other].comparison.dispatch_overhead_s
        c = compare_run(run.record, run.statuses, overhead_s=overhead)
        assert c is not None and c.corrected_error is not None and overhead is not None
        errors[scheduler] = c.corrected_error
        print(f"\nsim-to-real {scheduler} with {other}'s overhead {overhead:.2f} s: "
              f"{c.corrected_simulated_s:.2f} s vs real {c.real_s:.2f} s, "
              f"error {100 * c.corrected_error:.1f}%")  # fmt: skip
    assert max(errors.values()) < 0.15  # the overhead varies with load (0.1-0.9 s measured)
