"""Case records: one past execution k = (G, A, M) as the WASS-RAG paper defines it.

G is the workflow graph (kept as a :class:`~sim.model.Workflow`, stored as WfFormat JSON) plus
its summary features, together with the platform it ran on; A is the scheduler's decision (the
placement of every task and each node's start order); M is the outcome (makespan and the other
metrics). A case also says where it came from (``simulated`` or ``slurm:<run id>``) and when it
was recorded; a case of a real run also carries :class:`RealExecution` (how each task ended, what
the plan predicted, how busy the cluster was), which :mod:`kb.real_runs` fills.

Case ids are deterministic: derived from how the workflow was made (its generation key, or its
content hash), the platform's content hash and the scheduler. Seeding the same plan twice
therefore yields the same ids, which is what makes an interrupted seed resumable without
duplicates.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import cached_property

from sim.metrics import critical_path_bound, schedule_length_ratio
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy
from sim.schedule import SimResult
from sim.workflow_stats import WorkflowSummary, summarize

SIMULATED = "simulated"
"""Source of cases produced by the simulator; real runs use ``slurm:<run id>``."""
REAL_PREFIX = "slurm:"
"""Prefix of the source of a case learned from a real Slurm run (``slurm:<run id>``)."""


def real_source(run_id: str) -> str:
    """The source of the case a real run makes: ``slurm:<run id>``."""
    return REAL_PREFIX + run_id


def is_real(source: str) -> bool:
    """Whether a case's source names a real run (not the simulator)."""
    return source.startswith(REAL_PREFIX)


def _digest(payload: object, length: int = 20) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def workflow_hash(workflow: Workflow) -> str:
    """Content hash of the graph: tasks (work, resources, files, parents) and file sizes.

    The workflow's name is left out, so the same graph generated twice hashes the same. A GPU
    preference or a release is hashed only when set (older workflows keep their hashes).
    """
    tasks = [
        [t.id, t.work, t.cores, t.memory, t.gpus, t.inputs, t.outputs, t.parents]
        + ([t.prefers_gpu, t.release] if t.prefers_gpu or t.release else [])
        for t in workflow.tasks
    ]
    files = [[f.id, f.size] for f in workflow.files]
    return _digest([tasks, files])


def platform_hash(platform: Platform) -> str:
    """Content hash of the platform: every node's resources, latency and filesystem speed.

    A node without a GPU type hashes as before GPU types existed (stored cases keep their ids).
    """
    nodes = [
        {k: v for k, v in asdict(n).items() if not (k == "gpu_type" and v is None)}
        for n in platform.nodes
    ]
    return _digest([nodes, platform.latency, platform.shared_fs_bandwidth])


def make_case_id(workflow_key: str, platform_digest: str, scheduler: str) -> str:
    """The deterministic id of the case (workflow, platform, scheduler)."""
    return "case-" + _digest([workflow_key, platform_digest, scheduler], 24)


def utc_now() -> str:
    """The current time as ISO-8601 UTC (seconds), for ``recorded_at``."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@dataclass(frozen=True, slots=True)
class CaseMetrics:
    """M: what the execution achieved."""

    makespan: float
    energy: float = 0.0
    cross_node_bytes: int = 0
    mean_wait: float = 0.0
    slr: float = 0.0
    """Schedule length ratio (:func:`sim.metrics.schedule_length_ratio`; nan without work)."""


COMPLETED = "COMPLETED"
"""Slurm's state of a job that ran to its end with exit code 0."""


@dataclass(frozen=True)
class RealExecution:
    """What a real run adds to its case: how it ended, what the plan had predicted, and the
    cluster it met. Times are in the workflow's seconds (real seconds over ``scale``), as the
    case's timeline is, so the simulator's prediction and the run compare directly.

    ``state``, ``started_at``, ``task_states`` and ``job_ids`` follow from the tasks' jobs
    (:func:`kb.real_runs.case_from_run` fills them); the rest is what the run's record knew."""

    run_id: str
    state: str = ""
    """``COMPLETED`` when every task completed, else the worst state a task ended in
    (``FAILED``, ``CANCELLED``...): such a run is kept apart and never used as an estimate."""
    submitted_at: str = ""
    """When the run was submitted (ISO-8601, from the decision log)."""
    started_at: str = ""
    """When its first task started (ISO-8601 UTC): the date explanations cite."""
    task_states: Mapping[str, str] = field(default_factory=dict)
    job_ids: Mapping[str, str] = field(default_factory=dict)
    predicted: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    """Task id -> (start, end) the simulator predicted for this very plan when it was made."""
    predicted_makespan: float | None = None
    scale: float = 1.0
    """``--scale`` of the run (tasks slept their planned time x scale): real = case x scale."""
    occupancy: Occupancy | None = None
    """What other jobs held when the plan was made (None: not recorded, e.g. older runs)."""
    estimates: str = ""
    """How the plan's runtimes were estimated (``workflow``, or the knowledge base's cases)."""
    timing: str = ""
    """Where the times come from: ``job stamps`` (sub-millisecond) or ``sacct`` (seconds)."""
    confirmed: str = ""
    """When sacct confirmed the run, as the store wrote the case (ISO-8601 UTC,
    :func:`kb.provenance.stamp_confirmed`); empty: never confirmed on write (stored before the
    check, or written around it). A claim of the record only: readers re-check with sacct
    where they can (:func:`kb.provenance.standing`)."""

    @property
    def completed(self) -> bool:
        return self.state == COMPLETED


@dataclass(frozen=True)
class CaseRecord:
    """One past execution: workflow and platform (G), placements and order (A), metrics (M)."""

    case_id: str
    workflow: Workflow
    platform: Platform
    scheduler: str
    placements: Mapping[str, str]
    order: Mapping[str, tuple[str, ...]]
    metrics: CaseMetrics
    source: str = SIMULATED
    recorded_at: str = field(default_factory=utc_now)
    workflow_key: str = ""
    """How the workflow was made (e.g. ``recipe=montage;tasks=100;seed=7``), else its hash."""
    timeline: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)
    """Task id -> (ready, start, end) times, when the execution recorded them."""
    weight: int = 1
    """How many near-identical executions this case stands for (raised by curation merges)."""
    real: RealExecution | None = None
    """The real run's own record, for a case learned from Slurm (None: simulated)."""
    written_by: str = ""
    """``user@host`` that stored the case (set by :class:`kb.store.KnowledgeBase` on write;
    empty for cases stored before it was recorded). What it came from is ``source``."""

    @cached_property
    def summary(self) -> WorkflowSummary:
        return summarize(self.workflow, self.platform)

    @cached_property
    def workflow_hash(self) -> str:
        return workflow_hash(self.workflow)

    @cached_property
    def platform_hash(self) -> str:
        return platform_hash(self.platform)

    @cached_property
    def nodes_used(self) -> tuple[str, ...]:
        """Distinct nodes the placements name, sorted."""
        return tuple(sorted(set(self.placements.values())))

    @cached_property
    def placement_hash(self) -> str:
        """Content hash of the placements and orders: equal for identical decisions."""
        return _digest([sorted(self.placements.items()), sorted(self.order.items())], 16)


def case_from_result(
    workflow: Workflow,
    platform: Platform,
    result: SimResult,
    workflow_key: str = "",
    source: str = SIMULATED,
    recorded_at: str | None = None,
    scheduler_name: str | None = None,
) -> CaseRecord:
    """The case a finished execution (simulated or replayed from Slurm) makes.

    ``scheduler_name`` overrides the name the result carries (e.g. the registry's canonical
    name), since it enters the case id.
    """
    key = workflow_key or workflow_hash(workflow)
    scheduler = scheduler_name or result.scheduler
    schedule = result.to_schedule()
    return CaseRecord(
        case_id=make_case_id(key, platform_hash(platform), scheduler),
        workflow=workflow,
        platform=platform,
        scheduler=scheduler,
        placements=dict(schedule.assignment),
        order=dict(schedule.order),
        metrics=CaseMetrics(
            makespan=result.makespan,
            energy=result.energy,
            cross_node_bytes=result.cross_node_bytes,
            mean_wait=result.mean_wait,
            slr=schedule_length_ratio(result.makespan, critical_path_bound(workflow, platform)),
        ),
        source=source,
        recorded_at=recorded_at or utc_now(),
        workflow_key=key,
        timeline={r.task: (r.ready, r.start, r.end) for r in result.tasks},
    )
