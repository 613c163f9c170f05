"""Case vectors sharded by platform family: one Chroma collection per family.

A query about running a workflow on a platform wants past executions on platforms like it, and
Chroma loads a collection's whole HNSW index (and its id map) on the first query after a
reopen: at a million cases that load is seconds. Keeping one collection per *platform family*
(homogeneous or heterogeneous, node count rounded up to a power of two) makes a query read one
family's index, and keeps metadata filters (``where=``, slow at scale) off the hot path.

:class:`CaseShards` presents the family collections of one embedder as one collection: writes
are routed by the ``family`` each record's metadata carries, deletes and counts span every
shard, and a query searches its family's shard, topping up from the other shards when that
one holds fewer than the ``n`` asked (a platform family the store has never seen).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sim.model import Platform

SEPARATOR = "."
"""Between the embedder's collection name and the family (Chroma allows ``[a-zA-Z0-9._-]``)."""


def platform_family(platform: Platform) -> str:
    """``hom<N>`` or ``het<N>``: node count rounded up to a power of two, and whether the nodes
    differ (speed, cores, memory or GPUs). E.g. 12 identical nodes -> ``hom16``."""
    nodes = platform.nodes
    kinds = {(n.speed, n.cores, n.memory, n.gpus) for n in nodes}
    size = 1 << max(len(nodes) - 1, 0).bit_length()
    return f"{'het' if len(kinds) > 1 else 'hom'}{size}"


class CaseShards:
    """The family collections of one embedder's cases, behind a collection-like interface."""

    def __init__(
        self, client: Any, base: str, configuration: dict[str, Any], metadata: dict[str, Any]
    ) -> None:
        self._client = client
        self.base = base
        """The embedder's case collection name; each shard is ``<base>.<family>``."""
        self.name = base + SEPARATOR + "families"
        """Names the set (in logs and the store's sync mark; no collection has this name)."""
        self.metadata = metadata
        self._configuration = configuration
        prefix = base + SEPARATOR
        self._shards: dict[str, Any] = {}
        for listed in client.list_collections():
            if listed.name.startswith(prefix):
                family = listed.name[len(prefix) :]
                self._shards[family] = listed

    @property
    def families(self) -> list[str]:
        return sorted(self._shards)

    def shard(self, family: str) -> Any:
        """The family's collection, created on first use."""
        if family not in self._shards:
            self._shards[family] = self._client.get_or_create_collection(
                self.base + SEPARATOR + family,
                embedding_function=None,
                configuration=self._configuration,
                metadata={**self.metadata, "family": family},
            )
        return self._shards[family]

    def _by_family(self, metadatas: Sequence[Mapping[str, Any]]) -> dict[str, list[int]]:
        groups: dict[str, list[int]] = {}
        for i, meta in enumerate(metadatas):
            groups.setdefault(str(meta["family"]), []).append(i)
        return groups

    def add(
        self, ids: Sequence[str], embeddings: np.ndarray, metadatas: Sequence[Mapping[str, Any]]
    ) -> None:
        for family, rows in self._by_family(metadatas).items():
            self.shard(family).add(
                ids=[ids[i] for i in rows],
                embeddings=np.asarray(embeddings)[rows],
                metadatas=[metadatas[i] for i in rows],
            )

    def update(self, ids: Sequence[str], metadatas: Sequence[Mapping[str, Any]]) -> None:
        for family, rows in self._by_family(metadatas).items():
            self.shard(family).update(
                ids=[ids[i] for i in rows], metadatas=[metadatas[i] for i in rows]
            )

    def delete(self, ids: Sequence[str]) -> None:
        for collection in self._shards.values():
            collection.delete(ids=list(ids))

    def count(self) -> int:
        return sum(self.counts().values())

    def counts(self) -> dict[str, int]:
        """Vectors per family shard (Chroma's count: O(n), for stats, not the hot path)."""
        return {family: int(c.count()) for family, c in sorted(self._shards.items())}

    def get(self, ids: Sequence[str] | None = None, include: Sequence[str] = ()) -> dict[str, Any]:
        """Chroma's ``get`` across the shards (``ids`` plus whatever ``include`` names)."""
        merged: dict[str, Any] = {"ids": []}
        for key in include:
            merged[key] = []
        for collection in self._shards.values():
            got = collection.get(ids=list(ids) if ids is not None else None, include=list(include))
            merged["ids"] += list(got["ids"])
            for key in include:
                merged[key] += list(got[key])
        return merged

    def modify(self, configuration: dict[str, Any]) -> None:
        for collection in self._shards.values():
            collection.modify(configuration=configuration)

    def delete_all(self) -> None:
        """Drop every shard (switching embedders)."""
        for family in list(self._shards):
            self._client.delete_collection(self.base + SEPARATOR + family)
        self._shards.clear()

    def query(
        self, vector: np.ndarray, n: int, family: str | None
    ) -> tuple[list[str], list[float]]:
        """Ids and distances of the ``n`` nearest vectors, nearest first: from ``family``'s
        shard, or from every shard (merged) when ``family`` is None or its shard is short."""
        query = np.atleast_2d(vector).astype(np.float32, copy=False)
        first = self._shards.get(family) if family is not None else None
        hits: list[tuple[float, str]] = []
        if first is not None:
            hits = _search(first, query, n)
        if len(hits) < n:
            for collection in self._shards.values():
                if collection is not first:
                    hits += _search(collection, query, n)
            hits.sort()
            hits = hits[:n]
        return [i for _, i in hits], [d for d, _ in hits]


def _search(collection: Any, query: np.ndarray, n: int) -> list[tuple[float, str]]:
    found = collection.query(query_embeddings=query, n_results=n, include=["distances"])
    return list(zip(found["distances"][0], found["ids"][0], strict=True))
