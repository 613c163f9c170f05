"""Shared kb test fixtures: small workflows built with sim.model, real Chroma on tmp dirs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kb.records import CaseMetrics, CaseRecord, make_case_id, platform_hash
from kb.store import KnowledgeBase
from sim.model import File, Node, Platform, Task, Workflow


def layered_workflow(seed: int, levels: int = 4, width: int = 5) -> Workflow:
    """A random layered DAG: each task reads one output of 1-2 tasks of the level above.
    Tasks are light enough that the cases of :func:`make_case` (100 s and more) stay above
    their critical-path bound, as every stored case must."""
    rng = np.random.default_rng(seed)
    tasks: list[Task] = []
    files: list[File] = []
    above: list[str] = []
    for level in range(levels):
        current = []
        for i in range(int(rng.integers(1, width + 1))):
            tid = f"t{level}_{i}"
            out = f"{tid}.out"
            files.append(File(out, int(rng.integers(1_000, 10**8))))
            inputs = (
                tuple(f"{p}.out" for p in rng.choice(above, size=min(len(above), 2), replace=False))
                if above
                else ()
            )
            tasks.append(Task(tid, float(rng.uniform(1e8, 1e10)), inputs=inputs, outputs=(out,)))
            current.append(tid)
        above = current
    return Workflow(f"layered-{seed}", tuple(tasks), tuple(files))


def small_platform(nodes: int = 4, name: str = "lab") -> Platform:
    return Platform(
        name,
        tuple(Node(f"n{i}", cores=4 + 4 * (i % 2), speed=1e9 * (1 + i % 3)) for i in range(nodes)),
    )


def make_case(seed: int, scheduler: str = "heft", platform: Platform | None = None) -> CaseRecord:
    """A case whose placements spread tasks round-robin over the nodes."""
    platform = platform or small_platform()
    wf = layered_workflow(seed)
    names = platform.node_names
    placements = {t.id: names[i % len(names)] for i, t in enumerate(wf.tasks)}
    order: dict[str, tuple[str, ...]] = {}
    for task, node in placements.items():
        order[node] = (*order.get(node, ()), task)
    timeline = {t.id: (float(i), float(i) + 0.5, float(i) + 2.0) for i, t in enumerate(wf.tasks)}
    return CaseRecord(
        case_id=make_case_id(f"layered;seed={seed}", platform_hash(platform), scheduler),
        workflow=wf,
        platform=platform,
        scheduler=scheduler,
        placements=placements,
        order=order,
        metrics=CaseMetrics(makespan=100.0 + seed + (7 if scheduler == "random" else 0)),
        workflow_key=f"layered;seed={seed}",
        timeline=timeline,
    )


@pytest.fixture
def kb(tmp_path: Path):
    base = KnowledgeBase(tmp_path / "kb")
    yield base
    base.close()
