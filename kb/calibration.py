"""Sim-to-real over every learned run: how far the simulator's plans were from what then ran.

Each real case (:mod:`kb.real_runs`) keeps the simulator's prediction of its own plan (every
task's start and end, the makespan) next to what Slurm measured. :func:`calibration_report`
compares the two over all of them:

* per run: the makespan error ``|real - predicted| / predicted`` (as ``wass-chat status``
  reports it for one run) and the per-task error, the mean ``|predicted - real| / real`` of the
  tasks' durations (MAPE: how good the runtime estimates the plan used were);
* per node and per task category, over every task of every run: the same per-task MAPE and the
  median ratio real / predicted (above 1: the node, or the category, runs slower than planned;
  what the knowledge base's estimates then learn, :mod:`kb.estimates`).

Durations are in real seconds (a ``--scale`` run's times multiplied back). Pure: no I/O.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from kb.real_runs import per_task_mape, task_errors
from kb.records import CaseRecord
from sim.uncertainty import task_category


@dataclass(frozen=True)
class RunCalibration:
    """One learned run: its makespan and per-task errors against its own plan."""

    run_id: str
    workflow: str
    scheduler: str
    started_at: str
    nodes: tuple[str, ...]
    estimates: str
    tasks: int
    predicted_makespan_s: float | None
    real_makespan_s: float
    makespan_error: float | None
    per_task_mape: float | None


@dataclass(frozen=True)
class GroupError:
    """The per-task error over every task that ran on one node, or of one category."""

    key: str
    tasks: int
    mape: float
    ratio: float
    """Median real / predicted duration (1: as planned; 1.2: 20% slower)."""


@dataclass(frozen=True)
class CalibrationReport:
    """Sim-to-real over every learned run (see the module docstring)."""

    runs: list[RunCalibration] = field(default_factory=list)
    by_node: list[GroupError] = field(default_factory=list)
    by_category: list[GroupError] = field(default_factory=list)
    makespan_mape: float | None = None
    per_task_mape: float | None = None
    failed_runs: int = 0
    """Runs that did not complete: kept apart, not in these figures."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_calibration(case: CaseRecord) -> RunCalibration:
    """One real case's errors (its plan's prediction against what ran)."""
    real = case.real
    if real is None:
        raise ValueError(f"case {case.case_id} is not a real run's")
    predicted = real.predicted_makespan * real.scale if real.predicted_makespan else None
    makespan = case.metrics.makespan * real.scale
    return RunCalibration(
        run_id=real.run_id,
        workflow=case.workflow.name,
        scheduler=case.scheduler,
        started_at=real.started_at,
        nodes=case.nodes_used,
        estimates=real.estimates,
        tasks=len(case.timeline),
        predicted_makespan_s=predicted,
        real_makespan_s=makespan,
        makespan_error=abs(makespan - predicted) / predicted if predicted else None,
        per_task_mape=per_task_mape(case),
    )


def calibration_report(cases: Sequence[CaseRecord], failed_runs: int = 0) -> CalibrationReport:
    """Errors over ``cases`` (real ones; others are ignored), oldest first as given."""
    real = [c for c in cases if c.real is not None and c.real.completed]
    runs = [run_calibration(c) for c in real]
    by_node: dict[str, list[tuple[float, float]]] = defaultdict(list)
    by_category: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for case in real:
        for task, pair in task_errors(case).items():
            by_node[case.placements[task]].append(pair)
            by_category[task_category(case.workflow.task_by_id[task])].append(pair)
    spans = [r.makespan_error for r in runs if r.makespan_error is not None]
    every = [pair for pairs in by_node.values() for pair in pairs]
    return CalibrationReport(
        runs=runs,
        by_node=_groups(by_node),
        by_category=_groups(by_category),
        makespan_mape=statistics.fmean(spans) if spans else None,
        per_task_mape=_mape(every),
        failed_runs=failed_runs,
    )


def _mape(pairs: Sequence[tuple[float, float]]) -> float | None:
    kept = [(p, r) for p, r in pairs if r > 0]
    return statistics.fmean(abs(p - r) / r for p, r in kept) if kept else None


def _groups(groups: dict[str, list[tuple[float, float]]]) -> list[GroupError]:
    found = []
    for key, pairs in sorted(groups.items()):
        mape = _mape(pairs)
        ratios = [r / p for p, r in pairs if p > 0]
        if mape is not None and ratios:
            found.append(GroupError(key, len(pairs), mape, statistics.median(ratios)))
    return found
