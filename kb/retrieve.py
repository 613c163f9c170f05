"""Retrieval results: the similar past cases (and decisions) a query returns, best first.

Similarity is ``1 - cosine distance``. Several cases can share one vector (the same workflow on
the same platform under different schedulers): among equally similar cases the one with the
shortest makespan comes first, since that is the execution worth imitating.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kb.decisions import DecisionRecord
from kb.records import CaseRecord

_TIE = 1e-6
"""Similarities closer than this count as equal when ranking."""


@dataclass(frozen=True)
class RetrievedCase:
    """One retrieved past execution and how similar it is to the query."""

    case_id: str
    similarity: float
    scheduler: str
    makespan: float
    workflow: str
    platform: str
    source: str
    placements: Mapping[str, str]
    record: CaseRecord | None
    """The full record (None only if the sidecar lost it, which :meth:`repair` prevents)."""

    def with_record(self, record: CaseRecord | None) -> RetrievedCase:
        """This hit with its full record (and placements) attached."""
        placements = dict(record.placements) if record else {}
        return replace(self, record=record, placements=placements)

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


def _rank_key(similarity: float, makespan: float, case_id: str) -> tuple[float, float, str]:
    return (-round(similarity / _TIE) * _TIE, makespan, case_id)


def rank_cases(
    ids: Sequence[str],
    distances: Sequence[float],
    metadata: Sequence[Mapping[str, Any]],
    records: Mapping[str, CaseRecord],
) -> list[RetrievedCase]:
    """Turn raw nearest-neighbour hits into :class:`RetrievedCase` objects, best first."""
    results = []
    for case_id, distance, meta in zip(ids, distances, metadata, strict=True):
        record = records.get(case_id)
        results.append(
            RetrievedCase(
                case_id=case_id,
                similarity=1.0 - float(distance),
                scheduler=str(meta.get("scheduler", "")),
                makespan=float(meta.get("makespan", 0.0)),
                workflow=str(meta.get("workflow", "")),
                platform=str(meta.get("platform", "")),
                source=str(meta.get("source", "")),
                placements=dict(record.placements) if record else {},
                record=record,
            )
        )
    return sorted(results, key=lambda r: _rank_key(r.similarity, r.makespan, r.case_id))


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
