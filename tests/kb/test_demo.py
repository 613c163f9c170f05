"""The demo knowledge base ships ready-made: the asset must be exactly the demo plan's cases.

Regenerate it with ``scripts/make-demo-kb`` when a test here says it is stale.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kb.demo
from kb.codec import case_from_bytes
from kb.demo import (
    DEMO_SEED_CONFIG,
    demo_jobs,
    ensure_demo_kb,
    install_demo_store,
    read_demo_asset,
    stored_case_ids,
)
from kb.embedding import StructuralEmbedder
from kb.seed import SeedJob, job_case_ids, run_job
from kb.store import KnowledgeBase

FAST = ("heft", "wass", "slurm", "random")


@pytest.fixture(scope="module")
def shipped() -> dict[str, tuple[bytes, np.ndarray]]:
    bodies, embeddings = read_demo_asset()
    return {case_from_bytes(b).case_id: (b, e) for b, e in zip(bodies, embeddings, strict=True)}


def test_the_asset_holds_every_case_of_the_demo_plan_once(
    shipped: dict[str, tuple[bytes, np.ndarray]],
) -> None:
    planned = [case_id for job in demo_jobs() for case_id in job_case_ids(job)]
    assert len(planned) == len(set(planned)) == len(shipped) >= 200
    assert set(planned) == set(shipped), "stale: run scripts/make-demo-kb"


def test_the_asset_embeddings_are_the_structural_embedders(
    shipped: dict[str, tuple[bytes, np.ndarray]],
) -> None:
    cases = [case_from_bytes(body) for body, _ in shipped.values()]
    fresh = StructuralEmbedder().embed_cases([(c.workflow, c.platform) for c in cases])
    np.testing.assert_array_equal(fresh, np.stack([e for _, e in shipped.values()]))


def test_fast_schedulers_still_produce_the_shipped_cases(
    shipped: dict[str, tuple[bytes, np.ndarray]],
) -> None:
    jobs = [job for job in demo_jobs() if job.spec.kind == "demo:fork-join-20"]
    jobs += [job for job in demo_jobs() if job.spec.kind in ("chain", "fork-join")][:2]
    for job in jobs:
        fast = SeedJob(job.spec, job.platform, tuple(s for s in job.schedulers if s in FAST))
        done = run_job(fast, DEMO_SEED_CONFIG.network_model, DEMO_SEED_CONFIG.decisions_per_case)
        for case in done.cases:
            stored = case_from_bytes(shipped[case.case_id][0])
            assert dict(stored.placements) == dict(case.placements), case.case_id
            assert stored.order == case.order and stored.metrics == case.metrics, case.case_id


def test_a_fresh_home_loads_the_asset_and_seeds_only_what_it_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies, embeddings = read_demo_asset()
    dropped = next(
        i
        for i, b in enumerate(bodies)
        if case_from_bytes(b).scheduler == "heft"
        and not case_from_bytes(b).workflow_key.startswith("demo:")
    )
    keep = [i for i in range(len(bodies)) if i != dropped]
    partial = tmp_path / "partial.npz"
    offsets = np.cumsum([0, *(len(bodies[i]) for i in keep)])
    np.savez(
        partial,
        bodies=np.frombuffer(b"".join(bodies[i] for i in keep), dtype=np.uint8),
        offsets=offsets,
        embeddings=embeddings[keep],
    )
    monkeypatch.setattr(kb.demo, "demo_asset_path", lambda: partial)

    report = ensure_demo_kb(tmp_path / "kb")
    planned = sum(len(job.schedulers) for job in demo_jobs())
    assert report.added == planned and report.skipped == 0
    store = KnowledgeBase(tmp_path / "kb")
    assert store.count() == planned
    assert case_from_bytes(bodies[dropped]).case_id in store.get_cases(
        [case_from_bytes(bodies[dropped]).case_id]
    )
    store.close()
    assert ensure_demo_kb(tmp_path / "kb").added == 0


def test_the_ready_store_holds_exactly_the_assets_cases_and_answers(
    tmp_path: Path, shipped: dict[str, tuple[bytes, np.ndarray]]
) -> None:
    assert stored_case_ids() == set(shipped), "stale: run scripts/make-demo-kb"
    install_demo_store(tmp_path / "kb")
    store = KnowledgeBase(tmp_path / "kb")
    try:
        assert store.count() == len(shipped)
        case_id, (body, _) = next(iter(shipped.items()))
        case = case_from_bytes(body)
        hits = store.query(case.workflow, case.platform, k=len(shipped))
        same = [h.case_id for h in hits if h.similarity == hits[0].similarity]
        assert case_id in same  # its own workflow and platform are the nearest there are
    finally:
        store.close()
