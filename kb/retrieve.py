"""Retrieval results: the similar past cases (and decisions) a query returns, best first.

Similarity is ``1 - cosine distance``. Several cases can share one vector (the same workflow on
the same platform under different schedulers, or run for real and simulated): among equally
similar cases a real run (``slurm:<run id>``) comes before a simulated one, since it is what the
cluster actually did, then the shortest makespan, the execution worth imitating.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kb.codec import case_from_bytes
from kb.decisions import DecisionRecord
from kb.records import CaseRecord, is_real
from kb.sidecar_rows import CaseHit

_TIE = 1e-6
"""Similarities closer than this count as equal when ranking."""


@dataclass(frozen=True)
class RetrievedCase:
    """One retrieved past execution and how similar it is to the query.

    The hit's columns come from the sidecar's index columns; the full record stays compressed
    in ``body`` until :attr:`record` (or :attr:`placements`) is first read, so callers that only
    need similarity, scheduler and makespan (the RAG teacher, the agent's case list) never pay
    for decoding a workflow graph.
    """

    case_id: str
    similarity: float
    scheduler: str
    makespan: float
    workflow: str
    platform: str
    source: str
    body: bytes | None = field(default=None, repr=False, compare=False)
    """The compressed record (None if the sidecar lost it, which ``repair`` prevents)."""

    @cached_property
    def record(self) -> CaseRecord | None:
        """The full record, decoded on first use."""
        return case_from_bytes(self.body) if self.body else None

    @property
    def real(self) -> bool:
        """Whether this case is a real run's (``slurm:<run id>``), not a simulation."""
        return is_real(self.source)

    @property
    def placements(self) -> Mapping[str, str]:
        """Task id -> node of the retrieved execution (decodes the record)."""
        record = self.record
        return dict(record.placements) if record else {}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (the full graph left out)."""
        out: dict[str, Any] = {
            "case_id": self.case_id,
            "similarity": round(self.similarity, 6),
            "scheduler": self.scheduler,
            "makespan": self.makespan,
            "workflow": self.workflow,
            "platform": self.platform,
            "source": self.source,
            "placements": dict(self.placements),
        }
        if self.record is not None:
            out["written_by"] = self.record.written_by
            out["tasks"] = len(self.record.workflow.tasks)
            out["metrics"] = {
                "makespan": self.record.metrics.makespan,
                "energy": self.record.metrics.energy,
                "cross_node_bytes": self.record.metrics.cross_node_bytes,
                "slr": self.record.metrics.slr,
            }
        return out


@dataclass(frozen=True)
class RetrievedDecision:
    """One retrieved past placement decision."""

    decision_id: str
    similarity: float
    record: DecisionRecord


def _rank_key(
    similarity: float, makespan: float, case_id: str, real: bool = False
) -> tuple[float, bool, float, str]:
    """Most similar first; among equals, real runs first, then the shortest makespan."""
    return (-round(similarity / _TIE) * _TIE, not real, makespan, case_id)


def rank_cases(
    ids: Sequence[str], distances: Sequence[float], rows: Mapping[str, CaseHit]
) -> list[RetrievedCase]:
    """Raw nearest-neighbour hits (with their sidecar rows) to :class:`RetrievedCase`, best
    first; hits the sidecar lacks are left out."""
    results = [
        RetrievedCase(
            case_id=case_id,
            similarity=1.0 - float(distance),
            scheduler=row.scheduler,
            makespan=row.makespan,
            workflow=row.workflow,
            platform=row.platform,
            source=row.source,
            body=row.body,
        )
        for case_id, distance in zip(ids, distances, strict=True)
        if (row := rows.get(case_id)) is not None
    ]
    return sorted(
        results, key=lambda r: _rank_key(r.similarity, r.makespan, r.case_id, is_real(r.source))
    )


def tie_cut(distances: Sequence[float], k: int) -> int:
    """How many of the best hits (sorted by distance) can reach the top ``k``: the first ``k``
    plus any that tie with the ``k``-th (a tie may still win on makespan)."""
    if len(distances) <= k:
        return len(distances)
    limit = float(distances[k - 1]) + _TIE
    cut = k
    while cut < len(distances) and distances[cut] <= limit:
        cut += 1
    return cut


def rank_decisions(
    ids: Sequence[str], distances: Sequence[float], records: Mapping[str, DecisionRecord]
) -> list[RetrievedDecision]:
    """Raw hits to :class:`RetrievedDecision` objects, best first (shortest response on ties)."""
    results = [
        RetrievedDecision(i, 1.0 - float(d), records[i])
        for i, d in zip(ids, distances, strict=True)
        if i in records
    ]
    return sorted(
        results,
        key=lambda r: _rank_key(r.similarity, r.record.outcome.response_time, r.decision_id),
    )
