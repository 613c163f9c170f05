"""The bench's JSON document: provenance (versions, seeds, hashes), records and summaries."""

from __future__ import annotations

import platform as python_platform
from dataclasses import asdict
from importlib import metadata
from typing import Any

import numpy as np

from policy.bench.optimality import GapRecord, mean_gaps
from policy.bench.runner import InstanceOutcome, RunSpec


def versions() -> dict[str, str]:
    """Versions of what produced the numbers: this package, Python, NumPy, peers if present."""
    found = {"python": python_platform.python_version(), "numpy": np.__version__}
    for dist in ("wass-chat", "wfcommons", "anrg-saga", "ortools"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return found


def bench_document(
    settings: dict[str, Any],
    spec: RunSpec,
    outcomes: list[InstanceOutcome],
    summary: dict[str, Any],
    gaps: list[GapRecord] | None = None,
) -> dict[str, Any]:
    """Everything needed to reproduce and audit a bench run, as JSON-ready data."""
    document: dict[str, Any] = {
        "versions": versions(),
        "settings": settings,
        "run": asdict(spec),
        "instances": [
            {
                "id": o.instance,
                "workflow_sha256": o.workflow_sha256,
                "platform_sha256": o.platform_sha256,
            }
            | ({"load": [asdict(h) for h in o.load]} if o.load else {})
            for o in outcomes
        ],
        "records": [asdict(r) for o in outcomes for r in o.records],
        "summary": summary,
    }
    if gaps is not None:
        document["optimality"] = {
            "instances": len(gaps),
            "proven_optimal": sum(g.proven_optimal for g in gaps),
            "mean_gap": mean_gaps(gaps),
            "records": [asdict(g) for g in gaps],
        }
    return document
