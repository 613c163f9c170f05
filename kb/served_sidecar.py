"""The sidecar of a served knowledge base: everything ``cases.sqlite`` holds, kept on the Chroma
server itself, so every client of one ``chroma run`` shares one store.

Why: with the sidecar on a local disk, two sysadmins on two login nodes (two ``WASS_HOME``\\s)
saw the same vectors but not the same records. A served store keeps the sidecar's three tables
as three Chroma collections on the same server, which any client reaches over HTTP:

* ``wass-sidecar-cases``: id = case id, metadata = the columns of
  :data:`kb.sidecar_rows.CASE_COLUMNS` (what curation and a hit read), the compressed record under
  ``body`` in base64;
* ``wass-sidecar-decisions``: metadata ``case_id`` and ``body`` (the compressed decision);
* ``wass-sidecar-store``: the store's metadata rows (active embedder, the Chroma sync mark),
  under ``value``;
* ``wass-sidecar-failed_cases``: the cases of real runs that did not complete (metadata
  ``source``, ``recorded_at``, ``body``), kept apart as on disk.

Bodies go in metadata, not in Chroma's documents: the server full-text indexes documents, which
made an upsert of 200 records of 10 kB take 7-8 s; as metadata, 0.1-0.6 s (measured here).

Each record also carries a 2-number vector derived from its id: Chroma stores nothing without
one, and a spread of distinct points keeps its index well-formed; nothing searches them.
:class:`ServedSidecar` offers :class:`~kb.sidecar.Sidecar`'s methods with the same meaning, so
:class:`~kb.store.KnowledgeBase` writes sidecar first, then vectors, and repairs on open, as it
does on disk. Writes are upserts keyed by id: two clients adding the same case at once store it
once.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from kb.codec import case_to_bytes, decision_to_bytes
from kb.decisions import DecisionRecord
from kb.records import CaseRecord, is_real
from kb.sidecar_rows import CASE_COLUMNS, TABLES, ActiveEmbedder, CaseHit, CaseRow, case_row

PREFIX = "wass-sidecar-"
PAGE = 5000
"""Records per Chroma call (Chroma refuses more than ~5461 per add)."""
_SYNC = "chroma_sync"


def _placeholder(ids: Sequence[str]) -> np.ndarray:
    """A point on the unit circle per id (Chroma needs a vector; these are never searched)."""
    angles = [int(hashlib.sha1(i.encode()).hexdigest()[:8], 16) / 2**32 * 2 * math.pi for i in ids]
    return np.array([[math.cos(a), math.sin(a)] for a in angles], dtype=np.float32)


def _encode(body: bytes) -> str:
    return base64.b64encode(body).decode("ascii")


def _decode(document: str) -> bytes:
    return base64.b64decode(document)


def _pages(ids: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), PAGE):
        yield list(ids[start : start + PAGE])


class ServedSidecar:
    """The sidecar's tables as collections on a Chroma server (see the module docstring)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._tables = {
            table: client.get_or_create_collection(
                PREFIX + table, embedding_function=None, metadata={"kind": "sidecar"}
            )
            for table in (*TABLES, "store")
        }

    def close(self) -> None:
        """Nothing to release (the HTTP client belongs to the knowledge base)."""

    def _table(self, table: str) -> Any:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        return self._tables[table]

    def _mark_pending(self) -> None:
        self._put_store({_SYNC: json.dumps({"pending": 1, "collection": ""})})

    def _put_store(self, values: dict[str, str]) -> None:
        keys = list(values)
        self._tables["store"].upsert(
            ids=keys, metadatas=[{"value": values[k]} for k in keys], embeddings=_placeholder(keys)
        )

    def _store(self, keys: Sequence[str]) -> dict[str, str]:
        got = self._tables["store"].get(ids=list(keys), include=["metadatas"])
        return {i: m["value"] for i, m in zip(got["ids"], got["metadatas"], strict=True)}

    # --- writes ---------------------------------------------------------------------------
    def put_cases(self, cases: Sequence[CaseRecord], bodies: Sequence[bytes] | None = None) -> None:
        """Insert or replace ``cases`` (bodies encoded here unless given)."""
        encoded = bodies if bodies is not None else [case_to_bytes(c) for c in cases]
        self.insert_case_rows([case_row(c, b) for c, b in zip(cases, encoded, strict=True)])

    def insert_case_rows(self, rows: Sequence[tuple[object, ...]]) -> None:
        """Insert or replace raw rows (values in :data:`CASE_COLUMNS` order)."""
        self._mark_pending()
        for start in range(0, len(rows), PAGE):
            batch = rows[start : start + PAGE]
            ids = [str(r[0]) for r in batch]
            self._tables["cases"].upsert(
                ids=ids,
                metadatas=[
                    {
                        c: _encode(v) if c == "body" else v  # type: ignore[arg-type]
                        for c, v in zip(CASE_COLUMNS, r, strict=True)
                        if c != "id"
                    }
                    for r in batch
                ],
                embeddings=_placeholder(ids),
            )

    def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None:
        self.insert_decision_rows(
            [(d.decision_id, d.case_id, decision_to_bytes(d)) for d in decisions]
        )

    def insert_decision_rows(self, rows: Sequence[tuple[str, str, bytes]]) -> None:
        """Insert or replace ``(id, case_id, encoded body)`` rows."""
        self._mark_pending()
        for start in range(0, len(rows), PAGE):
            batch = rows[start : start + PAGE]
            ids = [r[0] for r in batch]
            self._tables["decisions"].upsert(
                ids=ids,
                metadatas=[{"case_id": r[1], "body": _encode(r[2])} for r in batch],
                embeddings=_placeholder(ids),
            )

    def put_case_with_decisions(
        self, case: CaseRecord, decisions: Sequence[DecisionRecord]
    ) -> None:
        """The case, then its decisions (a server has no transaction across collections: a
        client killed in between leaves the case without some decisions, which learning the
        run again adds; the store stays marked pending until then)."""
        self.put_cases([case])
        self.put_decisions(decisions)

    def put_failed(self, case: CaseRecord) -> None:
        """Keep a real run that did not complete apart from the cases (one upsert)."""
        body = _encode(case_to_bytes(case))
        meta = {"source": case.source, "recorded_at": case.recorded_at, "body": body}
        self._tables["failed_cases"].upsert(
            ids=[case.case_id], metadatas=[meta], embeddings=_placeholder([case.case_id])
        )

    def delete_cases(self, ids: Sequence[str]) -> None:
        """Delete cases and their decisions."""
        self._mark_pending()
        for page in _pages(ids):
            self._tables["decisions"].delete(where={"case_id": {"$in": page}})
            self._tables["cases"].delete(ids=page)

    # --- agreement with the vector collections ---------------------------------------------
    def chroma_in_sync(self, collection: str) -> bool:
        """As :meth:`kb.sidecar.Sidecar.chroma_in_sync`: the last write reached ``collection``."""
        mark = self._store([_SYNC]).get(_SYNC)
        if mark is None:
            return False
        state = json.loads(mark)
        return state["pending"] == 0 and state["collection"] == collection

    def mark_chroma_synced(self, collection: str) -> None:
        self._put_store({_SYNC: json.dumps({"pending": 0, "collection": collection})})

    # --- the active embedder ---------------------------------------------------------------
    def active_embedder(self) -> ActiveEmbedder | None:
        rows = self._store(["embedder", "embedder_checksum"])
        if "embedder" not in rows:
            return None
        return ActiveEmbedder(rows["embedder"], rows.get("embedder_checksum", ""))

    def switch_embedder(self, active: ActiveEmbedder, collection: str) -> None:
        """Record ``active`` and mark ``collection`` in sync (one upsert, as one transaction)."""
        self._put_store(
            {
                "embedder": active.name,
                "embedder_checksum": active.checksum,
                _SYNC: json.dumps({"pending": 0, "collection": collection}),
            }
        )

    # --- reads ----------------------------------------------------------------------------
    def count(self, table: str = "cases") -> int:
        return int(self._table(table).count())

    def _scan(self, table: str, include: list[str]) -> Iterator[dict[str, Any]]:
        """Every record of ``table``, a page at a time."""
        collection, offset = self._table(table), 0
        while True:
            got = collection.get(limit=PAGE, offset=offset, include=include)
            if not got["ids"]:
                return
            yield got
            offset += len(got["ids"])

    def ids(self, table: str = "cases") -> set[str]:
        return {i for page in self._scan(table, []) for i in page["ids"]}

    def existing(self, ids: Iterable[str], table: str = "cases") -> set[str]:
        """Which of ``ids`` are stored."""
        found: set[str] = set()
        for page in _pages(list(ids)):
            found.update(self._table(table).get(ids=page, include=[])["ids"])
        return found

    def bodies(self, ids: Sequence[str], table: str = "cases") -> dict[str, bytes]:
        """id -> compressed body for the stored ones among ``ids``."""
        result: dict[str, bytes] = {}
        for page in _pages(ids):
            got = self._table(table).get(ids=page, include=["metadatas"])
            pairs = zip(got["ids"], got["metadatas"], strict=True)
            result.update((i, _decode(m["body"])) for i, m in pairs)
        return result

    def hits(self, ids: Sequence[str]) -> dict[str, CaseHit]:
        """id -> :class:`~kb.sidecar_rows.CaseHit` for the stored cases among ``ids``."""
        found: dict[str, CaseHit] = {}
        for page in _pages(ids):
            got = self._tables["cases"].get(ids=page, include=["metadatas"])
            for i, m in zip(got["ids"], got["metadatas"], strict=True):
                found[i] = CaseHit(
                    m["scheduler"],
                    float(m["makespan"]),
                    m["workflow"],
                    m["platform"],
                    m["source"],
                    _decode(m["body"]),
                )
        return found

    def ids_on_platform(self, platform_hash: str, limit: int) -> list[str]:
        """Ids of up to ``limit`` cases on the platform, in id order (a scan of the curation
        rows, which hold no recording time here, so unlike the disk store's not by recency)."""
        return sorted(r.id for r in self.case_rows() if r.platform_hash == platform_hash)[:limit]

    def real_ids(self, table: str = "cases") -> list[str]:
        """Ids of the cases of real runs (``failed_cases``: those that did not complete), by
        recording time (a scan of the metadata: a served store keeps no index on the source)."""
        if table not in ("cases", "failed_cases"):
            raise ValueError(f"unknown table {table!r}")
        found = [
            (m["recorded_at"], i)
            for page in self._scan(table, ["metadatas"])
            for i, m in zip(page["ids"], page["metadatas"], strict=True)
            if is_real(m["source"])
        ]
        return [i for _, i in sorted(found)]

    def recurring_ids(self, limit: int) -> list[str]:
        """Ids of up to ``limit`` cases whose workflow ran more than once on their platform,
        in id order (no recording time here, as in :meth:`ids_on_platform`)."""
        rows = self.case_rows()
        runs = Counter((r.workflow_hash, r.platform_hash) for r in rows)
        return sorted(r.id for r in rows if runs[r.workflow_hash, r.platform_hash] > 1)[:limit]

    def case_rows(self) -> list[CaseRow]:
        """The curation columns of every case (the scan carries the bodies too: Chroma returns
        whole metadata)."""
        rows = []
        for page in self._scan("cases", ["metadatas"]):
            for i, m in zip(page["ids"], page["metadatas"], strict=True):
                rows.append(
                    CaseRow(
                        i,
                        m["workflow_hash"],
                        m["platform"],
                        m["platform_hash"],
                        m["scheduler"],
                        float(m["makespan"]),
                        m["placement_hash"],
                        tuple(m["nodes_used"].split(",")),
                        int(m["weight"]),
                        m["source"],
                        m["workflow_key"],
                    )
                )
        return rows

    def decision_case_ids(self, case_ids: Sequence[str]) -> list[str]:
        """Ids of the decisions that belong to ``case_ids``."""
        found: list[str] = []
        for page in _pages(case_ids):
            got = self._tables["decisions"].get(where={"case_id": {"$in": page}}, include=[])
            found.extend(got["ids"])
        return found
