"""The sidecar's record layout: its tables, the ``cases`` columns and rows, and what reading
them gives back (:class:`CaseRow`, :class:`CaseHit`, :class:`ActiveEmbedder`). Shared by the
SQLite sidecar (:mod:`kb.sidecar`), the served one (:mod:`kb.served_sidecar`) and the seeding
shards, so the three write and read the same rows."""

from __future__ import annotations

from dataclasses import dataclass

from kb.records import CaseRecord

TABLES = ("cases", "decisions", "failed_cases")
"""The record tables: cases (each with a vector), their decisions, and the cases of real runs
that did not complete (``failed_cases``: kept apart, never retrieved, no vectors)."""
REAL_RANGE = ("slurm:", "slurm;")
"""Sources from ``slurm:`` (inclusive) to ``slurm;`` (exclusive): every real run's, as an
index range (``LIKE`` would not use the index)."""


CASE_COLUMNS = (
    "id",
    "workflow_hash",
    "workflow_key",
    "platform",
    "platform_hash",
    "scheduler",
    "makespan",
    "placement_hash",
    "nodes_used",
    "weight",
    "source",
    "recorded_at",
    "body",
    "workflow",
)
"""Columns of the ``cases`` table, in the order
:meth:`kb.sidecar.Sidecar.insert_case_rows` expects."""


def case_row(case: CaseRecord, body: bytes) -> tuple[object, ...]:
    """The ``cases`` row of ``case`` (values in :data:`CASE_COLUMNS` order), ``body`` its
    encoded record: what :meth:`kb.sidecar.Sidecar.put_cases` stores, and what seeding shards
    carry."""
    c = case
    return (
        c.case_id,
        c.workflow_hash,
        c.workflow_key,
        c.platform.name,
        c.platform_hash,
        c.scheduler,
        c.metrics.makespan,
        c.placement_hash,
        ",".join(c.nodes_used),
        c.weight,
        c.source,
        c.recorded_at,
        body,
        c.workflow.name,
    )


@dataclass(frozen=True, slots=True)
class ActiveEmbedder:
    """Which embedder filled the store's collections, as
    :meth:`kb.sidecar.Sidecar.active_embedder` reads it back: the name
    ``kb.embedders.embedder_by_name`` rebuilds it from, and its checksum."""

    name: str
    checksum: str


@dataclass(frozen=True, slots=True)
class CaseRow:
    """The curation columns of one stored case (its body left compressed)."""

    id: str
    workflow_hash: str
    platform: str
    platform_hash: str
    scheduler: str
    makespan: float
    placement_hash: str
    nodes_used: tuple[str, ...]
    weight: int
    source: str
    workflow_key: str = ""
    """How the workflow was made (``montage;tasks=100;seed=7``), else its content hash."""

    @property
    def kind(self) -> str:
        """The recipe or shape of a generated workflow (``montage``), else ``other``."""
        return self.workflow_key.split(";")[0] if ";" in self.workflow_key else "other"


@dataclass(frozen=True, slots=True)
class CaseHit:
    """What a retrieval hit shows without decoding the record, plus the compressed record."""

    scheduler: str
    makespan: float
    workflow: str
    platform: str
    source: str
    body: bytes
