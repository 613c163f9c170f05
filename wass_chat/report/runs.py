"""The workflow-run sections: decisions from the decision log, and classic schedulers replayed.

The decision log (``wass_chat.runlog``), the scheduler registry (``policy.registry``) and the
simulator are imported when the report is built; if one is missing the sections still render
and say what could not be wired. Only the site's own runs are read: a demo run that an earlier
version left in the site's log is skipped (:mod:`wass_chat.demo_home`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sim.errors import UserFacingError
from wass_chat.analytics.insights import amount

MAX_RUNS_SIMULATED = 20
"""Re-simulate at most this many runs (the most recent) so report time stays bounded."""
MAX_EVIDENCE_CHARS = 400


@dataclass(frozen=True)
class DecisionRow:
    """One placement decision as shown in the report."""

    task: str
    node: str
    job_id: str
    planned: str
    state: str
    alternatives: str
    evidence: str


@dataclass(frozen=True)
class RunSection:
    """One run: identity, plan, decisions, and the makespan of each scheduler on its workflow."""

    run_id: str
    created: str
    workflow: str
    scheduler: str
    state: str
    planned_makespan: float | None
    decisions: tuple[DecisionRow, ...]
    jobs: int = 0
    """Slurm jobs submitted for the run (0: none reached Slurm)."""
    scale: float | None = None
    """Sleep scale of a ``--scale`` run: its planned makespan in real seconds is x scale."""
    actual_makespan: float | None = None
    """First real start to last real end (seconds), once every task has both; else None."""
    makespans: dict[str, float] = field(default_factory=dict)
    """Scheduler name -> simulated makespan (seconds)."""
    simulation_problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunsReport:
    """All runs of the period plus anything that could not be wired or simulated."""

    runs: tuple[RunSection, ...]
    not_wired: tuple[str, ...] = ()


def collect_runs(runs_dir: Path, start: datetime, end: datetime) -> RunsReport:
    """Read the decision log for ``[start, end)`` and re-simulate each run's workflow."""
    try:
        from wass_chat.demo_home import site_runs
        from wass_chat.runlog import RunLog
    except ImportError as exc:
        return RunsReport((), (f"decision log (wass_chat.runlog) not importable: {exc}",))
    records = [r for r in site_runs(RunLog(runs_dir)) if start <= local_time(r.created) < end]
    simulate, problem = _simulator()
    sections = []
    for index, record in enumerate(records):
        makespans: dict[str, float] = {}
        problems: list[str] = []
        if simulate is not None and index >= len(records) - MAX_RUNS_SIMULATED:
            makespans, problems = simulate(record)
        elif simulate is not None:
            problems = [f"not re-simulated (only the {MAX_RUNS_SIMULATED} most recent runs are)"]
        sections.append(
            RunSection(
                run_id=record.run_id,
                created=record.created,
                workflow=record.workflow_name,
                scheduler=record.scheduler,
                state=record.state,
                planned_makespan=record.planned_makespan,
                decisions=tuple(_decision_row(d) for d in record.decisions),
                jobs=len(record.job_ids),
                scale=record.scale,
                actual_makespan=actual_makespan(record.decisions),
                makespans=makespans,
                simulation_problems=tuple(problems),
            )
        )
    return RunsReport(tuple(sections), (problem,) if problem else ())


def local_time(stamp: str) -> datetime:
    """An ISO time as naive local time, the clock of sacct and of report periods.

    Run records are stamped in UTC (``+00:00``); comparing their text with a local period would
    shift runs by the UTC offset.
    """
    when = datetime.fromisoformat(stamp)
    return when.astimezone().replace(tzinfo=None) if when.tzinfo else when


def actual_makespan(decisions: Any) -> float | None:
    """Seconds from the first real start to the last real end, when every decision has both
    (sacct's times, cluster local); None while any task has not started or ended."""
    spans = []
    for d in decisions:
        try:
            spans.append((datetime.fromisoformat(d.real_start), datetime.fromisoformat(d.real_end)))
        except (TypeError, ValueError):
            return None
    if not spans:
        return None
    return (max(e for _, e in spans) - min(s for s, _ in spans)).total_seconds()


def _decision_row(decision: Any) -> DecisionRow:
    alternatives = ", ".join(
        f"{node}: {amount(value)} s"
        for node, value in sorted(decision.alternatives.items(), key=lambda kv: kv[1])[:5]
    )
    evidence = evidence_text(_readable(decision.evidence))
    if len(evidence) > MAX_EVIDENCE_CHARS:
        evidence = evidence[: MAX_EVIDENCE_CHARS - 3] + "..."
    planned = f"{amount(decision.planned_start)}-{amount(decision.planned_end)} s"
    return DecisionRow(
        decision.task,
        decision.node,
        decision.job_id or "",
        planned,
        decision.state,
        alternatives or "none recorded",
        evidence if decision.evidence else "none recorded",
    )


def evidence_text(value: Any) -> str:
    """Evidence as a reader's words, not JSON: ``key: value`` pairs separated by ``;``, lists by
    commas, nested maps in parentheses (``source: heft; ranks: (upward: 12)``)."""
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')}: {_nested(v)}" for k, v in sorted(value.items()))
    if isinstance(value, list | tuple):
        return ", ".join(_nested(v) for v in value)
    return "none" if value is None else str(value)


def _nested(value: Any) -> str:
    """A value inside evidence: a map in parentheses, so its pairs read apart from the outer."""
    return f"({evidence_text(value)})" if isinstance(value, dict) else evidence_text(value)


def _readable(value: Any) -> Any:
    """Evidence with its floats at a reader's precision (a score of 0.91466624 reads 0.915)."""
    if isinstance(value, float):
        return round(value) if abs(value) >= 100 else float(f"{value:.3g}")
    if isinstance(value, dict):
        return {k: _readable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_readable(v) for v in value]
    return value


def _simulator() -> tuple[Any, str | None]:
    """A function run -> (makespan per scheduler, problems), or None and why it is unavailable."""
    try:
        from policy.base import plan_and_simulate
        from policy.registry import DEFAULT_COMPARISON, get_scheduler
        from sim.platforms import platform_from_dict
        from sim.wfformat import read_workflow, workflow_from_dict
    except ImportError as exc:
        return None, f"scheduler comparison not available (import failed: {exc})"
    names = DEFAULT_COMPARISON  # not the seconds-per-plan search variants

    def simulate(record: Any) -> tuple[dict[str, float], list[str]]:
        try:
            workflow = (
                workflow_from_dict(record.workflow, record.workflow_name)
                if isinstance(record.workflow, dict)
                else read_workflow(record.workflow)
            )
            platform = platform_from_dict(record.platform, f"platform of {record.run_id}")
        except (UserFacingError, OSError) as exc:
            return {}, [f"workflow or platform unreadable: {exc}"]
        makespans: dict[str, float] = {}
        problems: list[str] = []
        for name in names:
            try:
                makespans[name] = plan_and_simulate(
                    get_scheduler(name, seed=0), workflow, platform
                ).makespan
            except UserFacingError as exc:
                problems.append(f"{name}: {exc.one_line()}")
        return makespans, problems

    return simulate, None
