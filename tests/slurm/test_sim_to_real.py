"""Sim-to-real: a workflow on the real cluster against the simulator, two schedulers.

Each job stamps its own start and end (sub-millisecond). These tests check only what the
machine's load cannot change: every job ran on its planned node, after its parents, within
Slurm's own record of it, never faster than simulated, and the overhead correction is the one
documented (wass_chat.slurm.sim_to_real). How close real and simulated makespans are depends on
the load: `wass-chat sim-to-real` prints those figures.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import pytest

from tests.slurm.conftest import Cluster, layered_workflow
from wass_chat.runlog import RunLog, RunRecord
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.nodes import platform_from_slurm
from wass_chat.slurm.runs import TaskStatus, run_status
from wass_chat.slurm.sim_to_real import (
    BenchRow,
    SimToReal,
    bench_sim_to_real,
    compare_run,
    dispatch_delays,
    real_intervals,
    run_workflow,
    simulate_with_overhead,
)

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]

SCHEDULERS = ("heft", "minmin")
WIDTHS = (2, 4, 2)
RUNTIMES = (1.0, 2.0)
"""Seconds per task: the checks hold at any length, so the runs stay short."""


@dataclass(frozen=True)
class FinishedRun:
    record: RunRecord
    statuses: list[TaskStatus]
    comparison: SimToReal
    row: BenchRow


@pytest.fixture(scope="module")
def finished(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, FinishedRun]:
    """The same workflow planned by each scheduler, run one after the other (never overlapping)
    by the benchmark behind `wass-chat sim-to-real`."""
    home = tmp_path_factory.mktemp("s2r")
    runlog = RunLog(home / "runs")
    commands = SlurmCommands()
    platform = platform_from_slurm(commands).platform
    wf = layered_workflow("s2r", WIDTHS, RUNTIMES, seed=4)
    rows = bench_sim_to_real(
        wf, platform, SCHEDULERS, commands, runlog, home / "out", timeout_s=180
    )
    assert [r.scheduler for r in rows] == list(SCHEDULERS)
    done = {}
    for row in rows:
        record = runlog.get(row.run_id)
        statuses = run_status(record, commands, runlog)
        done[row.scheduler] = FinishedRun(record, statuses, row.comparison, row)
    return done


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_jobs_run_where_planned_after_their_parents_and_never_faster_than_simulated(
    finished: dict[str, FinishedRun], scheduler: str
) -> None:
    run = finished[scheduler]
    c = run.comparison
    print(
        f"\nsim-to-real {scheduler}: simulated {c.simulated_s:.2f} s, real {c.real_s:.2f} s, "
        f"dispatch overhead {c.dispatch_overhead_s:.2f} s (figures: wass-chat sim-to-real)"
    )
    assert all(s.node == s.planned_node for s in run.statuses)
    assert c.timing_source == "job stamps"
    stamped, sacct = real_intervals(run.record, run.statuses)
    for task, (start, end) in stamped.items():  # Slurm's whole seconds enclose the job's own
        assert sacct[task][0] <= start and end < sacct[task][1] + 1.0, (task, stamped, sacct)
    delays = dispatch_delays(run_workflow(run.record).parents, stamped)
    assert delays and min(delays) > 0.0  # every job started after all its parents ended
    # Load can only lengthen a run: sleeps last at least their time, dependencies add a delay.
    assert c.real_s >= 0.99 * c.simulated_s
    assert c.dispatch_overhead_s == statistics.median(delays)
    assert c.corrected_simulated_s is not None and c.corrected_simulated_s > c.simulated_s


def test_an_overhead_measured_on_one_run_is_applied_to_the_other(
    finished: dict[str, FinishedRun],
) -> None:
    for scheduler, other in zip(SCHEDULERS, reversed(SCHEDULERS), strict=True):
        run = finished[scheduler]
        overhead = finished[other].comparison.dispatch_overhead_s
        assert overhead is not None
        c = compare_run(run.record, run.statuses, overhead_s=overhead)
        assert c is not None and c.overhead_applied_s == overhead
        assert c.dispatch_overhead_s == run.comparison.dispatch_overhead_s  # still measured
        assert c.corrected_simulated_s == simulate_with_overhead(run.record, overhead)
        assert (
            c.corrected_error == abs(c.real_s - c.corrected_simulated_s) / c.corrected_simulated_s
        )
        assert run.row.out_of_sample_overhead_s == overhead
        assert run.row.out_of_sample_error == c.corrected_error
