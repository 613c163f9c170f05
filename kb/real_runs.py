"""Cases from real executions: a finished Slurm run becomes a case, ``source = slurm:<run id>``.

The knowledge base's cases were all simulated; a run the cluster really executed is the better
evidence, for estimates as for explanations. :func:`case_from_run` turns what a run measured
(each task's node, start, end and Slurm state) into a :class:`~kb.records.CaseRecord` with the
same graph (the workflow as submitted, its stated runtimes included), the platform it was planned
on, the placements Slurm really used, and a timeline in the workflow's seconds, so retrieval,
the node fit (:mod:`kb.node_fit`) and the estimates read it as they read a simulated case. The
:class:`~kb.records.RealExecution` it carries keeps what only a real run has: how each task
ended, the simulator's prediction of this very plan, the cluster's occupancy at submission.

The case id depends on the run id alone (:func:`real_case_id`): learning a run twice, live or
from the accounting cache, names the same case, which is what makes learning idempotent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kb.codec import case_from_bytes
from kb.records import (
    COMPLETED,
    CaseMetrics,
    CaseRecord,
    RealExecution,
    real_source,
    workflow_hash,
)
from sim.metrics import critical_path_bound, schedule_length_ratio
from sim.model import Platform, Workflow

if TYPE_CHECKING:
    from kb.store import KnowledgeBase

FAILURE_ORDER = (
    "FAILED",
    "OUT_OF_MEMORY",
    "TIMEOUT",
    "NODE_FAIL",
    "BOOT_FAIL",
    "DEADLINE",
    "PREEMPTED",
    "CANCELLED",
)
"""Which state names a run that did not complete: the first of these any task ended in."""


def real_case_id(run_id: str) -> str:
    """The id of the case of run ``run_id``: one per run, however it is learned."""
    digest = hashlib.sha256(json.dumps(["slurm", run_id]).encode()).hexdigest()[:24]
    return "case-" + digest


@dataclass(frozen=True, slots=True)
class TaskExecution:
    """One task's job as Slurm ran it: where, when (epoch seconds) and how it ended."""

    node: str
    start: float | None
    end: float | None
    state: str
    job_id: str = ""

    @property
    def ran(self) -> bool:
        return self.start is not None and self.end is not None and self.end >= self.start


@dataclass(frozen=True)
class FinishedRun:
    """Everything a case of a real run is made of (see :func:`case_from_run`)."""

    workflow: Workflow
    """The workflow as submitted (its runtimes are the submitter's estimates)."""
    platform: Platform
    """The platform the run was planned on (the cluster's nodes)."""
    scheduler: str
    tasks: Mapping[str, TaskExecution]
    known: RealExecution
    """What the run's record knew: its id, the plan's predicted times (in the workflow's
    seconds), scale, occupancy, estimates, timing source (the rest comes from ``tasks``)."""

    @property
    def run_id(self) -> str:
        return self.known.run_id

    @property
    def state(self) -> str:
        """``COMPLETED`` when every task completed, else the worst state one ended in."""
        states = {t.state for t in self.tasks.values()}
        if states == {COMPLETED} and len(self.tasks) == len(self.workflow.tasks):
            return COMPLETED
        for state in FAILURE_ORDER:
            if state in states:
                return state
        return next(iter(sorted(states - {COMPLETED})), "CANCELLED")


def case_from_run(run: FinishedRun) -> CaseRecord:
    """The case run ``run`` makes: real placements, a timeline from its first start, in the
    workflow's seconds (real seconds over the run's scale), and its :class:`RealExecution`.

    A task that never started (cancelled while pending) has no timeline entry, only its state.
    """
    ran = {t: x for t, x in run.tasks.items() if x.ran}
    t0 = min((x.start for x in ran.values() if x.start is not None), default=0.0)
    scale = run.known.scale or 1.0

    def frame(value: float | None) -> float:
        return ((value or t0) - t0) / scale

    timeline: dict[str, tuple[float, float, float]] = {}
    for task, x in ran.items():
        parents = [frame(ran[p].end) for p in run.workflow.parents[task] if p in ran]
        start, end = frame(x.start), frame(x.end)
        timeline[task] = (min(max(parents, default=0.0), start), start, end)
    placements = {t: x.node for t, x in run.tasks.items() if x.node}
    order: dict[str, tuple[str, ...]] = {}
    for task in sorted(timeline, key=lambda t: (timeline[t][1], t)):
        if task in placements:
            order[placements[task]] = (*order.get(placements[task], ()), task)
    makespan = max((e for _, _, e in timeline.values()), default=0.0)
    waits = [s - r for r, s, _ in timeline.values()]
    real = replace(
        run.known,
        state=run.state,
        started_at=datetime.fromtimestamp(t0, UTC).replace(microsecond=0).isoformat()
        if ran
        else run.known.submitted_at,  # no task started: the run is dated by its submission
        task_states={t: x.state for t, x in run.tasks.items()},
        job_ids={t: x.job_id for t, x in run.tasks.items() if x.job_id},
        scale=scale,
    )
    return CaseRecord(
        case_id=real_case_id(run.run_id),
        workflow=run.workflow,
        platform=run.platform,
        scheduler=run.scheduler,
        placements=placements,
        order=order,
        metrics=CaseMetrics(
            makespan=makespan,
            cross_node_bytes=_cross_node_bytes(run.workflow, placements),
            mean_wait=sum(waits) / len(waits) if waits else 0.0,
            slr=schedule_length_ratio(makespan, critical_path_bound(run.workflow, run.platform)),
        ),
        source=real_source(run.run_id),
        recorded_at=real.started_at,
        workflow_key=workflow_hash(run.workflow),
        timeline=timeline,
        real=real,
    )


def _cross_node_bytes(workflow: Workflow, placements: Mapping[str, str]) -> int:
    """Bytes of the files a task read from a parent placed on another node."""
    total = 0
    for task in workflow.tasks:
        for file_id in task.inputs:
            producer = workflow.producer.get(file_id)
            node = placements.get(task.id)
            if producer is not None and node and placements.get(producer) not in (None, node):
                total += workflow.file_by_id[file_id].size
    return total


def task_errors(case: CaseRecord) -> dict[str, tuple[float, float]]:
    """Task id -> (predicted, real) duration in real seconds, for every task that ran and that
    the plan predicted (empty for a simulated case)."""
    real = case.real
    if real is None:
        return {}
    found = {}
    for task, (_ready, start, end) in case.timeline.items():
        if task in real.predicted:
            p_start, p_end = real.predicted[task]
            found[task] = ((p_end - p_start) * real.scale, (end - start) * real.scale)
    return found


def per_task_mape(case: CaseRecord) -> float | None:
    """Mean |predicted - real| / real over the tasks' durations: how far the plan's runtime
    estimates were from what then ran (None without a prediction or a task that ran)."""
    pairs = [(p, r) for p, r in task_errors(case).values() if r > 0]
    if not pairs:
        return None
    return sum(abs(p - r) / r for p, r in pairs) / len(pairs)


def learned_cases(kb: KnowledgeBase) -> list[CaseRecord]:
    """Every case the knowledge base learned from a real run that completed, oldest first."""
    return kb.cases_in_order(kb.sidecar.real_ids())


def failed_runs(kb: KnowledgeBase) -> list[CaseRecord]:
    """The cases of real runs that did not complete (kept apart), oldest first."""
    ids = kb.sidecar.real_ids("failed_cases")
    bodies = kb.sidecar.bodies(ids, "failed_cases")
    return [case_from_bytes(bodies[i]) for i in ids if i in bodies]
