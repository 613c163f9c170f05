"""Curation: keep the knowledge base small, current and worth imitating.

Three rules, planned first (so ``kb prune --dry-run`` can show them) and then applied:

* **Near-duplicates are merged**: cases of the same workflow, platform and scheduler whose
  makespans lie within ``merge_tolerance`` of each other say the same thing; the earliest one is
  kept and its ``weight`` counts the others.
* **Dominated cases are pruned**: for one workflow on one platform, a case whose makespan is more
  than ``dominated_factor`` times the best one teaches nothing worth retrieving.
* **Outdated cases are pruned**: a case placed tasks on nodes that a platform of the same name no
  longer has (given the platforms as they are now).

Cases of real runs (``slurm:<run id>``) are measurements, not plans to imitate: they are never
merged or pruned as dominated (only as outdated), and they do not set the best makespan a
simulated case is judged against.

Everything works from the sidecar's columns: no record is decoded unless it is merged.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from kb.records import is_real
from kb.sidecar_rows import CaseRow
from kb.store import KnowledgeBase
from sim.model import Platform


@dataclass(frozen=True, slots=True)
class CurationConfig:
    """Thresholds of the curation rules."""

    merge_tolerance: float = 0.01
    """Relative makespan difference under which same-problem, same-scheduler cases merge."""
    dominated_factor: float = 2.0
    """A case slower than this many times the best of its workflow and platform is pruned."""


@dataclass(frozen=True)
class CurationPlan:
    """What curation would change."""

    merges: dict[str, list[str]] = field(default_factory=dict)
    """Kept case id -> ids merged into it (deleted)."""
    dominated: list[str] = field(default_factory=list)
    outdated: list[str] = field(default_factory=list)

    @property
    def removed(self) -> list[str]:
        merged = [i for ids in self.merges.values() for i in ids]
        return sorted(set(merged) | set(self.dominated) | set(self.outdated))

    def to_dict(self) -> dict[str, Any]:
        return {
            "merged_into": {k: v for k, v in sorted(self.merges.items())},
            "dominated": sorted(self.dominated),
            "outdated": sorted(self.outdated),
            "removed": len(self.removed),
        }


def _outdated(rows: Iterable[CaseRow], platforms: Mapping[str, Platform]) -> list[str]:
    current = {name: set(p.node_names) for name, p in platforms.items()}
    return [
        r.id for r in rows if r.platform in current and not set(r.nodes_used) <= current[r.platform]
    ]


def plan_curation(
    rows: list[CaseRow],
    config: CurationConfig | None = None,
    platforms: Mapping[str, Platform] | None = None,
) -> CurationPlan:
    """The merges and prunings the rules call for on ``rows`` (the sidecar's case columns)."""
    config = config or CurationConfig()
    outdated = _outdated(rows, platforms or {})
    gone = set(outdated)
    by_problem: dict[tuple[str, str], list[CaseRow]] = defaultdict(list)
    for r in rows:
        if r.id not in gone and not is_real(r.source):
            by_problem[(r.workflow_hash, r.platform_hash)].append(r)
    dominated: list[str] = []
    merges: dict[str, list[str]] = {}
    for group in by_problem.values():
        best = min(r.makespan for r in group)
        survivors = []
        for r in group:
            if best > 0 and r.makespan > config.dominated_factor * best:
                dominated.append(r.id)
            else:
                survivors.append(r)
        by_scheduler: dict[str, list[CaseRow]] = defaultdict(list)
        for r in survivors:
            by_scheduler[r.scheduler].append(r)
        for same in by_scheduler.values():
            same.sort(key=lambda r: (r.makespan, r.id))
            keep = same[0]
            for r in same[1:]:
                if abs(r.makespan - keep.makespan) <= config.merge_tolerance * keep.makespan:
                    merges.setdefault(keep.id, []).append(r.id)
                else:
                    keep = r
    return CurationPlan(merges, dominated, outdated)


def apply_curation(kb: KnowledgeBase, plan: CurationPlan) -> int:
    """Carry out ``plan`` on ``kb``; returns how many cases were removed."""
    involved = set(plan.merges) | {i for ids in plan.merges.values() for i in ids}
    weights = {r.id: r.weight for r in kb.sidecar.case_rows() if r.id in involved}
    kept = kb.get_cases(list(plan.merges))
    for keep_id, merged in plan.merges.items():
        total = weights.get(keep_id, 1) + sum(weights.get(i, 1) for i in merged)
        kb.update_case(replace(kept[keep_id], weight=total))
    removed = plan.removed
    kb.delete_cases(removed)
    return len(removed)


def directory_bytes(path: Path) -> int:
    """Total size of the files under ``path``."""
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def kb_stats(kb: KnowledgeBase) -> dict[str, Any]:
    """What the knowledge base holds: counts by scheduler, platform and source; makespans."""
    rows = kb.sidecar.case_rows()
    makespans = np.array([r.makespan for r in rows]) if rows else np.zeros(0)
    shards = kb.cases.counts()
    return {
        "directory": str(kb.directory),
        "cases": len(rows),
        "decisions": kb.sidecar.count("decisions"),
        "vectors": {"cases": sum(shards.values()), "decisions": kb.decisions.count()},
        "shards": shards,
        "embedder": {"name": kb.embedder.name, "checksum": kb.embedder.checksum},
        "collections": kb.collection_names(),
        "workflows": len({r.workflow_hash for r in rows}),
        "by_scheduler": dict(Counter(r.scheduler for r in rows).most_common()),
        "by_platform": dict(Counter(r.platform for r in rows).most_common()),
        "by_kind": dict(Counter(r.kind for r in rows).most_common()),
        "by_source": dict(Counter(r.source.split(":")[0] for r in rows).most_common()),
        "failed_runs": kb.sidecar.count("failed_cases"),
        "merged_weight": int(sum(r.weight for r in rows)),
        "makespan": {
            "min": float(makespans.min()) if rows else None,
            "median": float(np.median(makespans)) if rows else None,
            "max": float(makespans.max()) if rows else None,
        },
        "disk_bytes": directory_bytes(kb.directory),
    }
