"""Sim-to-real: a finished run's real makespan against the simulated one.

Real times come from the jobs themselves when every job stamped them
(:mod:`wass_chat.slurm.job_stamps`, sub-millisecond), else from sacct's Start/End (whole
seconds); the sacct figure is reported as well.

Slurm starts a dependent job at the first scheduling pass after its last parent ended, about a
second later on our test cluster; the simulator starts it at once. That overhead is an explicit,
measured parameter of the comparison, never fitted to the makespan:

* ``raw_error`` = |real - simulated| / simulated, simulated = planned makespan x scale;
* ``dispatch_overhead_s`` = median, over jobs with parents, of (job start - latest parent end);
* ``corrected_simulated_s``: the plan's own placements and per-node order re-simulated with that
  overhead added before every dependent task (as extra work on its node), x scale;
  ``corrected_error`` compares it with the real makespan.

``wass-chat sim-to-real`` (:func:`bench_sim_to_real`) runs one workflow under several
schedulers on the live cluster and prints these figures; they depend on the machine's load, so
the tests check only what load cannot change (placements, dependency order).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sim.errors import ServiceUnavailable
from sim.model import Platform, Workflow
from sim.platforms import platform_from_dict
from sim.schedule import StaticSchedule
from sim.uncertainty import planned_inputs
from sim.wfformat import read_workflow, workflow_from_dict
from wass_chat.runlog import RunLog, RunRecord, new_run_id
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.job_stamps import read_stamps
from wass_chat.slurm.runs import FINISHED_STATES, TaskStatus, run_status, submit_plan
from wass_chat.slurm.submission import plan_submission

Interval = tuple[float, float]
_UNSET = ("", "Unknown", "None")


@dataclass(frozen=True)
class SimToReal:
    """Simulated versus real makespan of one finished run, raw and overhead-corrected."""

    simulated_s: float
    real_s: float
    timing_source: str
    """``job stamps`` (in-job ``date +%s.%N``) or ``sacct`` (whole seconds)."""
    real_sacct_s: float | None
    raw_error: float
    dispatch_overhead_s: float | None
    """Measured median dispatch delay of dependent jobs (None: no job has parents)."""
    overhead_applied_s: float | None
    """The overhead the correction used: the measured one, or one given (out of sample)."""
    corrected_simulated_s: float | None
    corrected_error: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sacct_seconds(text: str) -> float | None:
    """Epoch seconds of a sacct timestamp (cluster local time), None when unset."""
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def real_intervals(
    record: RunRecord, statuses: Sequence[TaskStatus]
) -> tuple[dict[str, Interval], dict[str, Interval]]:
    """Per task (start, end): from the jobs' own stamps (empty unless all have them), sacct."""
    sacct: dict[str, Interval] = {}
    for s in statuses:
        start, end = sacct_seconds(s.start), sacct_seconds(s.end)
        if start is not None and end is not None:
            sacct[s.task] = (start, end)
    stamped: dict[str, Interval] = {}
    for d in record.decisions:
        stamps = read_stamps(Path(d.output)) if d.output else None
        if stamps is not None:
            stamped[d.task] = stamps
    return (stamped if len(stamped) == len(record.decisions) else {}), sacct


def makespan(intervals: Mapping[str, Interval]) -> float:
    return max(e for _, e in intervals.values()) - min(s for s, _ in intervals.values())


def dispatch_delays(
    parents: Mapping[str, Sequence[str]], intervals: Mapping[str, Interval]
) -> list[float]:
    """For each task with parents: its start minus the end of its last parent."""
    return [
        intervals[task][0] - max(intervals[p][1] for p in ps) for task, ps in parents.items() if ps
    ]


def simulate_with_overhead(record: RunRecord, overhead_s: float) -> float:
    """The run's planned schedule re-simulated (on the runtimes the plan assumed) with
    ``overhead_s`` real seconds before each dependent task; returns the makespan in real
    seconds (simulated x scale)."""
    from sim.engine import simulate

    scale = record.scale or 1.0
    workflow, platform = planned_inputs(  # a plan on the kb's estimates: those runtimes
        run_workflow(record),
        platform_from_dict(record.platform, f"platform of {record.run_id}"),
        record.planned_on,
    )
    node_of = {d.task: d.node for d in record.decisions}
    speed = {n.name: n.speed for n in platform.nodes}
    tasks = tuple(
        replace(t, work=t.work + overhead_s / scale * speed[node_of[t.id]] * t.cores)
        if workflow.parents[t.id]
        else t
        for t in workflow.tasks
    )
    schedule = StaticSchedule.from_priorities(
        node_of, {d.task: d.planned_start for d in record.decisions}, record.scheduler
    )
    return simulate(replace(workflow, tasks=tasks), platform, schedule).makespan * scale


def compare_run(
    record: RunRecord, statuses: Sequence[TaskStatus], overhead_s: float | None = None
) -> SimToReal | None:
    """The comparison once every job completed (None before, or without a planned makespan).

    ``overhead_s`` overrides the dispatch overhead measured in this run (to apply one measured
    elsewhere, out of sample).
    """
    if record.planned_makespan is None or not statuses:
        return None
    if any(s.state != "COMPLETED" for s in statuses):
        return None
    stamped, sacct = real_intervals(record, statuses)
    intervals = stamped or sacct
    if len(intervals) != len(record.decisions):
        return None
    simulated = record.planned_makespan * (record.scale or 1.0)
    real = makespan(intervals)
    delays = dispatch_delays(run_workflow(record).parents, intervals)
    measured = statistics.median(delays) if delays else None
    overhead = overhead_s if overhead_s is not None else measured
    corrected = simulate_with_overhead(record, overhead) if overhead is not None else None
    return SimToReal(
        simulated_s=simulated,
        real_s=real,
        timing_source="job stamps" if stamped else "sacct",
        real_sacct_s=makespan(sacct) if len(sacct) == len(record.decisions) else None,
        raw_error=abs(real - simulated) / simulated,
        dispatch_overhead_s=measured,
        overhead_applied_s=overhead,
        corrected_simulated_s=corrected,
        corrected_error=abs(real - corrected) / corrected if corrected else None,
    )


def run_workflow(record: RunRecord) -> Workflow:
    """The workflow a run submitted (stored inline, or the path it was read from)."""
    if isinstance(record.workflow, dict):
        return workflow_from_dict(record.workflow, record.workflow_name)
    return read_workflow(Path(record.workflow))


def wait_until_finished(
    record: RunRecord,
    commands: SlurmCommands,
    runlog: RunLog | None = None,
    timeout_s: float = 600.0,
    poll_s: float = 1.0,
) -> list[TaskStatus]:
    """Poll until every job of the run finished with its Start and End in sacct (which lags
    squeue by about a second); a run still going after ``timeout_s`` is an error."""
    deadline = time.monotonic() + timeout_s
    while True:
        statuses = run_status(record, commands, runlog)
        if all(s.state in FINISHED_STATES and s.end not in _UNSET for s in statuses):
            return statuses
        if time.monotonic() > deadline:
            states = {s.task: s.state for s in statuses}
            raise ServiceUnavailable(
                f"run {record.run_id} not finished after {timeout_s:.0f} s: {states}"
            )
        time.sleep(poll_s)


@dataclass(frozen=True)
class BenchRow:
    """One scheduler's run in ``wass-chat sim-to-real``: its comparison, plus the correction
    with the next scheduler's measured overhead (out of sample)."""

    scheduler: str
    run_id: str
    comparison: SimToReal
    out_of_sample_overhead_s: float | None
    out_of_sample_error: float | None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "comparison": self.comparison.to_dict()}


def bench_sim_to_real(
    workflow: Workflow,
    platform: Platform,
    schedulers: Sequence[str],
    commands: SlurmCommands,
    runlog: RunLog,
    out_dir: Path,
    scale: float | None = None,
    timeout_s: float = 600.0,
) -> list[BenchRow]:
    """Plan ``workflow`` with each scheduler, run the plans one after the other on the cluster
    (never overlapping), and compare each run with its simulation.

    The figures depend on the machine's load (Slurm's dispatch overhead grows with it), which is
    why they are a command's output and not a test's assertion.
    """
    finished: list[tuple[str, RunRecord, list[TaskStatus], SimToReal]] = []
    for scheduler in schedulers:
        run_id = new_run_id()
        plan = plan_submission(workflow, platform, scheduler, run_id, out_dir / run_id, scale=scale)
        record = submit_plan(plan, commands, runlog)
        statuses = wait_until_finished(record, commands, runlog, timeout_s)
        record = runlog.get(record.run_id)
        comparison = compare_run(record, statuses)
        if comparison is None:
            states = {s.task: s.state for s in statuses}
            raise ServiceUnavailable(f"run {record.run_id} did not complete: {states}")
        finished.append((scheduler, record, statuses, comparison))
    rows = []
    for k, (scheduler, record, statuses, comparison) in enumerate(finished):
        following = finished[(k + 1) % len(finished)][3]
        other = following.dispatch_overhead_s if len(finished) > 1 else None
        crossed = compare_run(record, statuses, overhead_s=other) if other is not None else None
        rows.append(
            BenchRow(
                scheduler,
                record.run_id,
                comparison,
                other,
                crossed.corrected_error if crossed else None,
            )
        )
    return rows
