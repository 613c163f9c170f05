"""Decision-level records: the state at one placement decision, the action taken, the outcome.

The teacher of the learned policy compares a decision with similar past decisions, and the agent
explains a single placement from them. A decision state is a fixed vector of named features
(:data:`DECISION_FEATURES`) about the task being placed and the cluster at that instant;
the action is the node chosen; the outcome is how long the task took from ready to finished and
the makespan the whole run reached.

States are reconstructed from a finished case: at the task's ready time, what had finished, what
was waiting, how busy the cores were and where the task's input data sat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kb.graph_stats import coefficient_of_variation
from kb.records import CaseRecord
from sim.workflow_stats import task_levels

DECISION_FEATURES: tuple[str, ...] = (
    "task_runtime_log10",
    "task_input_bytes_log10",
    "task_parents",
    "task_children",
    "task_level_fraction",
    "progress_fraction",
    "ready_tasks_log10",
    "busy_core_fraction",
    "best_local_input_fraction",
    "nodes_log10",
    "node_speed_cv",
    "work_share_log10",
)
"""Names of the entries of :attr:`DecisionState.features`, in order."""


@dataclass(frozen=True, slots=True)
class DecisionState:
    """The situation when ``task`` became ready: features named by :data:`DECISION_FEATURES`."""

    workflow_hash: str
    platform: str
    task: str
    time: float
    features: tuple[float, ...]

    def feature(self, name: str) -> float:
        return self.features[DECISION_FEATURES.index(name)]


@dataclass(frozen=True, slots=True)
class DecisionOutcome:
    """What followed the decision."""

    response_time: float
    """Seconds from the task becoming ready to it finishing."""
    case_makespan: float


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """One placement decision of a past execution: state, action (node), outcome."""

    decision_id: str
    case_id: str
    scheduler: str
    state: DecisionState
    action: str
    outcome: DecisionOutcome
    source: str


def _log10(x: float) -> float:
    return math.log10(max(x, 1e-12))


def decisions_from_case(case: CaseRecord, limit: int | None = None) -> list[DecisionRecord]:
    """The decision records of ``case``: one per task, or ``limit`` spread evenly over time.

    Cases without a task timeline (``case.timeline`` empty) have none.
    """
    if not case.timeline:
        return []
    ready = {t: times[0] for t, times in case.timeline.items()}
    start = {t: times[1] for t, times in case.timeline.items()}
    end = {t: times[2] for t, times in case.timeline.items()}
    return decisions_from_timeline(case, ready, start, end, limit)


def decisions_from_timeline(
    case: CaseRecord,
    ready: dict[str, float],
    start: dict[str, float],
    end: dict[str, float],
    limit: int | None = None,
) -> list[DecisionRecord]:
    """Decision records of ``case`` given each task's ready, start and end times.

    ``limit`` keeps that many decisions spread evenly over the ready order (all when None).
    """
    wf, platform = case.workflow, case.platform
    tasks = sorted(ready, key=lambda t: (ready[t], t))
    if limit is not None and len(tasks) > limit > 0:
        picks = np.linspace(0, len(tasks) - 1, limit).round().astype(int)
        chosen = [tasks[i] for i in dict.fromkeys(picks.tolist())]
    else:
        chosen = tasks
    ends = np.sort(np.fromiter(end.values(), dtype=np.float64))
    starts = np.sort(np.fromiter(start.values(), dtype=np.float64))
    readies = np.sort(np.fromiter(ready.values(), dtype=np.float64))
    levels = task_levels(wf)
    depth = max(levels.values()) + 1
    total_cores = platform.total_cores
    speed_cv = coefficient_of_variation(np.array([n.speed for n in platform.nodes]))
    mean_work = wf.total_work / len(wf.tasks)
    sizes = wf.file_by_id
    records = []
    for tid in chosen:
        t = ready[tid]
        task = wf.task_by_id[tid]
        input_bytes = sum(sizes[f].size for f in task.inputs)
        local: dict[str, int] = {}
        for parent in wf.parents[tid]:
            node = case.placements.get(parent)
            if node is not None:
                local[node] = local.get(node, 0) + wf.edge_bytes(parent, tid)
        best_local = max(local.values(), default=0) / input_bytes if input_bytes else 0.0
        finished = int(np.searchsorted(ends, t, side="right"))
        started = int(np.searchsorted(starts, t, side="right"))
        waiting = int(np.searchsorted(readies, t, side="right")) - started
        running = started - finished
        features = (
            _log10(task.runtime),
            _log10(input_bytes + 1),
            float(len(wf.parents[tid])),
            float(len(wf.children[tid])),
            levels[tid] / depth,
            finished / len(wf.tasks),
            _log10(waiting + 1),
            min(1.0, running / total_cores),
            best_local,
            _log10(len(platform.nodes)),
            speed_cv,
            _log10(task.work / mean_work) if mean_work > 0 else 0.0,
        )
        state = DecisionState(case.workflow_hash, platform.name, tid, t, features)
        records.append(
            DecisionRecord(
                decision_id=f"{case.case_id}#{tid}",
                case_id=case.case_id,
                scheduler=case.scheduler,
                state=state,
                action=case.placements[tid],
                outcome=DecisionOutcome(end[tid] - t, case.metrics.makespan),
                source=case.source,
            )
        )
    return records
