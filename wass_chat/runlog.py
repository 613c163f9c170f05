"""The durable decision log: every submitted (or attempted) run and each placement decision.

One JSON file per run under ``Settings().runs_dir`` (``<run_id>.json``), written atomically, so a
crash never leaves half a record and other tools (reports, the agent) can read the directory
without locks. Records are frozen dataclasses; the JSON layout is their field names.

A record is created before any job is submitted (state ``planned``), then rewritten with job ids
(``submitted``) or the failure (``failed``), and with per-task Slurm states by ``update_states``;
once every job ended, with ``completed`` or ``failed`` and the knowledge-base case it became
(``learned``, see :mod:`wass_chat.learn`).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sim.errors import InputError, NoSuchName
from wass_chat.atomic_files import write_atomic

RUNLOG_VERSION = 1


class UnknownRunError(NoSuchName):
    """A run id with no record in the decision log, refused with the nearest logged ones."""

    def __init__(self, run_id: str, runs_dir: Path) -> None:
        known = [path.stem for path in runs_dir.glob("*.json")] if runs_dir.is_dir() else []
        super().__init__("run", run_id, known, f"in {runs_dir}")


@dataclass(frozen=True)
class Decision:
    """Where one task was placed, why, and what Slurm did with it.

    ``alternatives`` maps other candidate nodes to the scheduler's predicted finish time (or the
    predicted makespan) had the task gone there; it may be empty. ``evidence`` holds whatever
    the scheduler or agent offered as the reason (ranks, retrieved cases, scores).
    """

    task: str
    node: str
    job_id: str | None = None
    planned_start: float = 0.0
    planned_end: float = 0.0
    alternatives: dict[str, float] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    state: str = "PLANNED"
    """Last Slurm state seen (PENDING, RUNNING, COMPLETED...), or PLANNED before submission."""
    real_node: str | None = None
    """The node Slurm actually ran the job on, once known."""
    real_start: str | None = None
    real_end: str | None = None
    output: str | None = None
    """The job's standard output file, once submitted (``--scale`` jobs stamp their times there)."""


@dataclass(frozen=True)
class RunRecord:
    """One workflow run: what was planned, on which platform, and each task's decision.

    ``workflow`` is the WfFormat JSON document (a dict) or the path it was read from;
    ``platform`` is a plain dict description of the nodes used for planning.
    """

    run_id: str
    created: str
    workflow_name: str
    workflow: dict[str, Any] | str
    platform: dict[str, Any]
    scheduler: str
    planned_makespan: float | None
    decisions: tuple[Decision, ...]
    state: str = "planned"
    """``planned``, ``submitted``, ``completed`` (every job ended COMPLETED), ``failed``
    (nothing left queued, some job or sbatch failed), ``cancelled``."""
    scale: float | None = None
    """Sleep scale when tasks were replaced by ``sleep runtime*scale`` (``--scale``)."""
    error: str | None = None
    version: int = RUNLOG_VERSION
    occupancy: dict[str, Any] | None = None
    """What other jobs held when the plan was made (``Occupancy.to_dict()``; None: unknown)."""
    estimates: str = ""
    """How the plan's runtimes were estimated: ``workflow`` (as stated) or the knowledge
    base's cases it used (``kb: ...``); empty for runs logged before it was recorded."""
    learned: str | None = None
    """The knowledge-base case this run became once it ended (None: not learned yet)."""
    planned_on: dict[str, dict[str, float]] | None = None
    """What a plan on the knowledge base's estimates assumed: ``runtimes`` (task -> seconds on
    the reference machine) and ``slowdowns`` (node -> factor); None: the stated runtimes.
    Re-simulating the run (explanations, what-ifs) uses them, as the plan did."""

    @property
    def job_ids(self) -> tuple[str, ...]:
        return tuple(d.job_id for d in self.decisions if d.job_id)

    def decision(self, task: str) -> Decision:
        for d in self.decisions:
            if d.task == task:
                return d
        raise KeyError(task)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> RunRecord:
        decisions = tuple(Decision(**d) for d in doc.get("decisions", ()))
        return cls(**{**doc, "decisions": decisions})


def new_run_id(now: datetime | None = None) -> str:
    """A sortable, unique id: UTC timestamp plus 4 random hex digits (``20260121-101502-a3f9``)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(2)}"


class RunLog:
    """The run records under one directory (``Settings().runs_dir``)."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = Path(runs_dir)

    def path(self, run_id: str) -> Path:
        return self.runs_dir / f"{run_id}.json"

    def create(
        self,
        workflow_name: str,
        workflow: dict[str, Any] | str,
        platform: dict[str, Any],
        scheduler: str,
        planned_makespan: float | None,
        decisions: tuple[Decision, ...],
        scale: float | None = None,
        run_id: str | None = None,
        occupancy: dict[str, Any] | None = None,
        estimates: str = "",
        planned_on: dict[str, dict[str, float]] | None = None,
    ) -> RunRecord:
        """Record a new run in state ``planned`` and return it."""
        record = RunRecord(
            run_id=run_id or new_run_id(),
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            workflow_name=workflow_name,
            workflow=workflow,
            platform=platform,
            scheduler=scheduler,
            planned_makespan=planned_makespan,
            decisions=decisions,
            scale=scale,
            occupancy=occupancy,
            estimates=estimates,
            planned_on=planned_on,
        )
        self.save(record)
        return record

    def save(self, record: RunRecord) -> None:
        """Write ``record`` atomically (replacing any earlier version)."""
        write_atomic(self.path(record.run_id), json.dumps(record.to_dict(), indent=1))

    def get(self, run_id: str) -> RunRecord:
        path = self.path(run_id)
        if not path.is_file():
            raise UnknownRunError(run_id, self.runs_dir)
        try:
            return RunRecord.from_dict(json.loads(path.read_text()))
        except (OSError, ValueError, TypeError) as exc:
            raise InputError(str(path), [f"unreadable run record: {exc}"]) from exc

    def list_runs(self, start: str | None = None, end: str | None = None) -> list[RunRecord]:
        """Every readable run, oldest first; ``start``/``end`` bound ``created`` (ISO strings)."""
        records = []
        for path in sorted(self.runs_dir.glob("*.json")):
            record = self.get(path.stem)
            if start and record.created < start:
                continue
            if end and record.created > end:
                continue
            records.append(record)
        return records

    def update(self, run_id: str, **changes: Any) -> RunRecord:
        """Replace top-level fields of a run (state, error, decisions) and save it."""
        record = replace(self.get(run_id), **changes)
        self.save(record)
        return record

    def update_states(self, run_id: str, states: dict[str, dict[str, Any]]) -> RunRecord:
        """Merge per-task Slurm observations (``task -> {state, real_node, ...}``) and save."""
        record = self.get(run_id)
        decisions = tuple(
            replace(d, **states[d.task]) if d.task in states else d for d in record.decisions
        )
        record = replace(record, decisions=decisions)
        self.save(record)
        return record
