"""The v0 structural embedding: deterministic, unit length, sensitive to structure."""

from __future__ import annotations

import numpy as np

from kb.embedders import embedder_by_name
from kb.embedding import FEATURE_NAMES, StructuralEmbedder, raw_features
from kb.records import make_case_id, platform_hash, workflow_hash
from sim.errors import InputError
from tests.kb.conftest import layered_workflow, small_platform


def test_vectors_are_deterministic_unit_rows_of_the_declared_width() -> None:
    e = StructuralEmbedder()
    pairs = [(layered_workflow(s), small_platform()) for s in range(5)]
    first, again = e.embed_cases(pairs), e.embed_cases(pairs)
    assert first.shape == (5, e.dim) and first.dtype == np.float32
    assert np.array_equal(first, again)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
    assert len(raw_features(*pairs[0])) == len(FEATURE_NAMES)


def test_a_deeper_graph_is_further_away_than_a_reseeded_one() -> None:
    e = StructuralEmbedder()
    p = small_platform()
    base, sibling, deep = e.embed_cases(
        [(layered_workflow(1), p), (layered_workflow(2), p), (layered_workflow(1, levels=12), p)]
    )
    assert float(base @ sibling) > float(base @ deep)


def test_the_platform_moves_the_vector() -> None:
    e = StructuralEmbedder()
    wf = layered_workflow(4)
    small, large = e.embed_cases([(wf, small_platform(2)), (wf, small_platform(32))])
    assert float(small @ large) < 0.999


def test_checksum_names_the_space_and_unknown_embedders_are_refused() -> None:
    assert StructuralEmbedder().checksum == StructuralEmbedder().checksum
    assert embedder_by_name("structural-v0").dim == 64
    try:
        embedder_by_name("gnn-v9")
    except InputError as exc:
        assert "gnn-v9" in str(exc)
    else:
        raise AssertionError("unknown embedder accepted")


def test_ids_and_hashes_are_content_derived() -> None:
    a, b = layered_workflow(5), layered_workflow(5)
    assert workflow_hash(a) == workflow_hash(b) != workflow_hash(layered_workflow(6))
    p = platform_hash(small_platform())
    assert make_case_id("k", p, "heft") == make_case_id("k", p, "heft")
    assert make_case_id("k", p, "heft") != make_case_id("k", p, "random")
