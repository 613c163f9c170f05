"""Case and decision records to compressed JSON and back, for the sidecar store, and the
metadata Chroma keeps next to their vectors.

The workflow graph is stored as a WfFormat document (``sim.wfformat``), so a stored case can be
exported and re-read by any WfFormat tool; the platform as ``sim.platforms`` writes it.
Bodies are zlib-compressed JSON: a 100-task case takes about 3 KB.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import asdict
from typing import Any

from kb.decisions import DecisionOutcome, DecisionRecord, DecisionState
from kb.records import CaseMetrics, CaseRecord, RealExecution
from kb.shards import platform_family
from sim.model import Workflow
from sim.occupancy import Hold, Occupancy
from sim.platforms import platform_from_dict, platform_to_dict
from sim.wfformat import workflow_from_dict, workflow_to_dict

FORMAT_VERSION = 1


def _pack(document: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 6)


def _unpack(body: bytes) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(zlib.decompress(body))
    return document


def case_to_bytes(case: CaseRecord, workflow_document: dict[str, Any] | None = None) -> bytes:
    """The compressed JSON body of ``case``.

    ``workflow_document`` (``workflow_to_dict(case.workflow)``) saves converting the same
    workflow again when several cases share it.
    """
    return _pack(
        {
            "version": FORMAT_VERSION,
            "case_id": case.case_id,
            "workflow": workflow_document or workflow_to_dict(case.workflow),
            "platform": platform_to_dict(case.platform),
            "scheduler": case.scheduler,
            "placements": dict(case.placements),
            "order": {node: list(tasks) for node, tasks in case.order.items()},
            "metrics": asdict(case.metrics),
            "source": case.source,
            "recorded_at": case.recorded_at,
            "workflow_key": case.workflow_key,
            "timeline": {t: list(times) for t, times in case.timeline.items()},
            "weight": case.weight,
            **({"written_by": case.written_by} if case.written_by else {}),
            **({"real": _real_to_dict(case.real)} if case.real is not None else {}),
        }
    )


def _real_to_dict(real: RealExecution) -> dict[str, Any]:
    doc = asdict(real)
    doc["predicted"] = {t: list(times) for t, times in real.predicted.items()}
    doc["occupancy"] = real.occupancy.to_dict() if real.occupancy is not None else None
    return doc


def _real_from_dict(doc: dict[str, Any]) -> RealExecution:
    occupancy = doc.get("occupancy")
    return RealExecution(
        **{
            **doc,
            "predicted": {t: (v[0], v[1]) for t, v in doc.get("predicted", {}).items()},
            "occupancy": Occupancy(tuple(Hold(**h) for h in occupancy["holds"]))
            if occupancy is not None
            else None,
        }
    )


def case_from_bytes(body: bytes, workflows: dict[str, Workflow] | None = None) -> CaseRecord:
    """The :class:`CaseRecord` stored as ``body``.

    ``workflows`` (workflow key -> workflow), when given, is filled and reused: cases of one
    seed job share their workflow, and parsing it once per job saves most of the decoding.
    """
    doc = _unpack(body)
    key = doc["workflow_key"] if workflows is not None else ""  # "": no key, no sharing
    workflow = workflows.get(key) if workflows is not None and key else None
    if workflow is None:
        workflow = workflow_from_dict(doc["workflow"], doc["case_id"])
        if workflows is not None and key:
            workflows[key] = workflow
    return CaseRecord(
        case_id=doc["case_id"],
        workflow=workflow,
        platform=platform_from_dict(doc["platform"], doc["case_id"]),
        scheduler=doc["scheduler"],
        placements=doc["placements"],
        order={node: tuple(tasks) for node, tasks in doc["order"].items()},
        metrics=CaseMetrics(**doc["metrics"]),
        source=doc["source"],
        recorded_at=doc["recorded_at"],
        workflow_key=doc["workflow_key"],
        timeline={t: (v[0], v[1], v[2]) for t, v in doc["timeline"].items()},
        weight=doc["weight"],
        real=_real_from_dict(doc["real"]) if doc.get("real") else None,
        written_by=doc.get("written_by", ""),
    )


def workflow_name_from_bytes(body: bytes) -> str:
    """The workflow name inside a case body, without building the record."""
    return str(_unpack(body)["workflow"].get("name", ""))


def decision_to_bytes(decision: DecisionRecord) -> bytes:
    return _pack({"version": FORMAT_VERSION, **asdict(decision)})


def decision_from_bytes(body: bytes) -> DecisionRecord:
    doc = _unpack(body)
    state = doc["state"]
    return DecisionRecord(
        decision_id=doc["decision_id"],
        case_id=doc["case_id"],
        scheduler=doc["scheduler"],
        state=DecisionState(
            state["workflow_hash"],
            state["platform"],
            state["task"],
            state["time"],
            tuple(state["features"]),
        ),
        action=doc["action"],
        outcome=DecisionOutcome(**doc["outcome"]),
        source=doc["source"],
    )


def case_metadata(case: CaseRecord) -> dict[str, str | int | float]:
    """What Chroma keeps next to a case vector: enough to list a hit without the sidecar."""
    return {
        "scheduler": case.scheduler,
        "makespan": float(case.metrics.makespan),
        "platform": case.platform.name,
        "workflow": case.workflow.name,
        "workflow_hash": case.workflow_hash,
        "tasks": len(case.workflow.tasks),
        "source": case.source,
        "weight": case.weight,
        "family": platform_family(case.platform),
    }


def decision_metadata(decision: DecisionRecord) -> dict[str, str | int | float]:
    """What Chroma keeps next to a decision vector."""
    d = decision
    return {"scheduler": d.scheduler, "action": d.action, "case_id": d.case_id}
