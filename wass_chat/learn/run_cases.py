"""A decision-log run as Slurm ran it: what :func:`kb.real_runs.case_from_run` is made of.

The run record (:mod:`wass_chat.runlog`) holds the workflow as submitted, the platform it was
planned on, the scheduler, the plan's predicted times, the cluster's occupancy then and how the
runtimes were estimated; Slurm (``squeue``/``sacct``, or the accounting cache) says where and
when each task's job ran and how it ended. Times come from the jobs' own stamps when every job
that ran left them (sub-millisecond, :mod:`wass_chat.slurm.job_stamps`), else from sacct's
whole seconds, never a mix of the two clocks. The stamps are files the jobs wrote, so sacct
must confirm them: a stamped interval outside its job's sacct interval (a forged or edited
output file) makes the run refused, not learned.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kb.real_runs import FinishedRun, TaskExecution
from kb.records import RealExecution
from sim.errors import InputError
from sim.occupancy import Hold, Occupancy
from sim.platforms import platform_from_dict
from wass_chat.runlog import NOT_SUBMITTED, RunRecord
from wass_chat.slurm.job_stamps import read_stamps
from wass_chat.slurm.recovery import needs_reconciling
from wass_chat.slurm.runs import FINISHED_STATES, TaskStatus
from wass_chat.slurm.sim_to_real import run_workflow, sacct_seconds

UNSET = ("", "Unknown", "None")
STAMP_SLACK_S = 2.0
"""How far a job's own stamps may fall outside its sacct interval: sacct keeps whole seconds
(truncated) and the stamps come from the compute node's clock, not slurmctld's."""


class SacctDisagrees(InputError):
    """A run whose recorded times sacct does not confirm: it is not learned."""


def run_ended(record: RunRecord, statuses: Sequence[TaskStatus]) -> bool:
    """Whether every job of the run has ended and sacct has its End (it lags squeue by about a
    second); a run with no job submitted never ends."""
    submitted = [s for s in statuses if s.job_id]
    if not submitted or not record.job_ids or needs_reconciling(record):
        return False  # a run whose record may not list all its jobs has not ended for sure
    return all(s.state in FINISHED_STATES and s.end not in UNSET for s in submitted)


def finished_run(record: RunRecord, statuses: Sequence[TaskStatus]) -> FinishedRun:
    """The run as :mod:`kb.real_runs` takes it (call once :func:`run_ended` is true)."""
    by_task = {s.task: s for s in statuses}
    sacct = {t: _sacct_interval(s) for t, s in by_task.items()}
    ran = [t for t, interval in sacct.items() if interval is not None]
    stamps = {
        d.task: found
        for d in record.decisions
        if d.task in ran and d.output and (found := read_stamps(Path(d.output))) is not None
    }
    use_stamps = bool(ran) and len(stamps) == len(ran)
    if use_stamps:
        confirm_stamps(record.run_id, stamps, sacct)
    tasks = {}
    for d in record.decisions:
        status = by_task.get(d.task)
        if status is None or not d.job_id:
            tasks[d.task] = TaskExecution("", None, None, NOT_SUBMITTED)
            continue
        interval = stamps.get(d.task) if use_stamps else sacct[d.task]
        start, end = interval if interval is not None else (None, None)
        tasks[d.task] = TaskExecution(status.node or "", start, end, status.state, d.job_id)
    holds = (record.occupancy or {}).get("holds")
    return FinishedRun(
        workflow=run_workflow(record),
        platform=platform_from_dict(record.platform, f"platform of {record.run_id}"),
        scheduler=record.scheduler,
        tasks=tasks,
        known=RealExecution(
            run_id=record.run_id,
            submitted_at=record.created,
            predicted={d.task: (d.planned_start, d.planned_end) for d in record.decisions},
            predicted_makespan=record.planned_makespan,
            scale=record.scale or 1.0,
            occupancy=Occupancy(tuple(Hold(**h) for h in holds)) if holds is not None else None,
            estimates=record.estimates,
            timing="job stamps" if use_stamps else "sacct",
        ),
    )


def confirm_stamps(
    run_id: str,
    stamps: dict[str, tuple[float, float]],
    sacct: dict[str, tuple[float, float] | None],
) -> None:
    """Raise :class:`SacctDisagrees` naming every task whose stamped (start, end) is not
    within its job's sacct interval (give or take :data:`STAMP_SLACK_S`)."""
    problems = []
    for task, (start, end) in sorted(stamps.items()):
        interval = sacct.get(task)
        if interval is None:
            continue
        first, last = interval
        if not (first - STAMP_SLACK_S <= start <= end <= last + STAMP_SLACK_S):
            problems.append(
                f"task {task}: its stamps say {end - start:.1f} s from {start:.1f}, sacct says"
                f" {last - first:.0f} s from {first:.0f}"
            )
    if problems:
        raise SacctDisagrees(
            f"run {run_id}", [f"{p} (job output edited or forged?): not learned" for p in problems]
        )


def _sacct_interval(status: TaskStatus) -> tuple[float, float] | None:
    """(start, end) epoch seconds from sacct, None for a job that never started: sacct gives a
    job cancelled while pending its cancellation time as Start, but no node."""
    if status.start in UNSET or status.end in UNSET or not status.node:
        return None
    start, end = sacct_seconds(status.start), sacct_seconds(status.end)
    if start is None or end is None:
        return None
    return start, end
