"""Case vectors sharded by platform family, on real Chroma in a temporary directory."""

from __future__ import annotations

from pathlib import Path

import chromadb
import numpy as np
import pytest

from kb.shards import CaseShards, platform_family
from sim.model import Node, Platform
from sim.platforms import ClusterSpec, generate_platform

CONFIG = {"hnsw": {"space": "cosine"}}


def _platform(*cores: int) -> Platform:
    return Platform("p", tuple(Node(f"n{i}", c) for i, c in enumerate(cores)))


def test_family_is_heterogeneity_and_node_count_rounded_up() -> None:
    assert platform_family(_platform(4, 4, 4)) == "hom4"
    assert platform_family(_platform(4, 8, 4)) == "het4"
    assert platform_family(_platform(*[8] * 12)) == "hom16"
    assert platform_family(_platform(8)) == "hom1"
    hetero = generate_platform(ClusterSpec(32, heterogeneous=True), seed=2)
    assert platform_family(hetero) == "het32"


@pytest.fixture
def shards(tmp_path: Path) -> CaseShards:
    client = chromadb.PersistentClient(str(tmp_path / "chroma"))
    return CaseShards(client, "cases-test-abc", CONFIG, {"embedder": "test"})


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_writes_go_to_their_family_and_queries_stay_in_it(shards: CaseShards) -> None:
    rng = np.random.default_rng(0)
    vectors = _unit(rng.normal(size=(40, 8)))
    families = ["het8" if i % 2 else "hom16" for i in range(40)]
    ids = [f"c{i}" for i in range(40)]
    shards.add(ids, vectors, [{"family": f} for f in families])
    assert shards.families == ["het8", "hom16"] and shards.count() == 40
    found, distances = shards.query(vectors[3], 5, "het8")
    assert found[0] == "c3" and distances == sorted(distances)
    assert all(int(i[1:]) % 2 == 1 for i in found)  # only het8 cases
    # A family the store has never seen searches every shard.
    everywhere, _ = shards.query(vectors[4], 5, "het64")
    assert everywhere[0] == "c4"
    assert {int(i[1:]) % 2 for i in shards.query(vectors[4], 30, "het64")[0]} == {0, 1}


def test_a_short_shard_is_topped_up_from_the_others(shards: CaseShards) -> None:
    vectors = _unit(np.eye(6, dtype=np.float32) + 0.1)
    shards.add(
        [f"c{i}" for i in range(6)],
        vectors,
        [{"family": "het8" if i < 2 else "hom16"} for i in range(6)],
    )
    found, distances = shards.query(vectors[0], 4, "het8")
    assert len(found) == 4 and found[0] == "c0" and distances == sorted(distances)


def test_update_delete_and_get_span_the_shards(tmp_path: Path, shards: CaseShards) -> None:
    vectors = _unit(np.random.default_rng(1).normal(size=(6, 8)))
    metas = [{"family": "het8" if i < 3 else "hom16", "w": i} for i in range(6)]
    shards.add([f"c{i}" for i in range(6)], vectors, metas)
    shards.update(["c1", "c4"], [{"family": "het8", "w": 10}, {"family": "hom16", "w": 40}])
    shards.delete(["c0", "c5"])
    got = shards.get(include=["metadatas"])
    weights = {i: m["w"] for i, m in zip(got["ids"], got["metadatas"], strict=True)}
    assert weights == {"c1": 10, "c2": 2, "c3": 3, "c4": 40}
    # A new handle finds the shards Chroma persisted.
    reopened = CaseShards(
        chromadb.PersistentClient(str(tmp_path / "chroma")), "cases-test-abc", CONFIG, {}
    )
    assert reopened.families == ["het8", "hom16"] and reopened.count() == 4
    reopened.delete_all()
    assert reopened.count() == 0 and reopened.families == []


def test_a_store_from_before_sharding_is_migrated_on_open(tmp_path: Path) -> None:
    from kb.store import KnowledgeBase
    from tests.kb.conftest import make_case

    cases = [make_case(seed) for seed in range(6)]
    kb = KnowledgeBase(tmp_path)
    kb.add_cases(cases)
    # Rewind to the old layout: one unsharded case collection, and a sync mark naming it.
    legacy = kb.collection_name("cases")
    vectors = kb.embedder.embed_cases([(c.workflow, c.platform) for c in cases])
    kb.cases.delete_all()
    old = kb._client.create_collection(legacy, embedding_function=None, configuration=CONFIG)
    old.add(ids=[c.case_id for c in cases], embeddings=vectors)
    kb.sidecar.mark_chroma_synced(legacy)
    kb.close()

    reopened = KnowledgeBase(tmp_path)
    assert legacy not in reopened.collection_names()
    assert reopened.cases.count() == 6 and reopened.cases.families
    hit = reopened.query(cases[2].workflow, cases[2].platform, k=1)[0]
    assert hit.case_id == cases[2].case_id
