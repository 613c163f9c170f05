"""The sidecar store: full case and decision bodies in SQLite, keyed by id.

Chroma holds only what retrieval needs (vector, scheduler, makespan, a few labels); the complete
record lives here, compressed, together with the columns curation groups by. The sidecar is the
source of truth for which cases exist: it is written before Chroma, in one transaction per
batch (WAL journal), so a process killed at any instant leaves either the whole batch or none of
it here, and at worst a batch missing from Chroma, which :class:`~kb.store.KnowledgeBase` repairs
when it reopens. The cases of real runs that did not complete are kept in a table of their own
(``failed_cases``: no vector, so never retrieved; :mod:`kb.real_runs`).

One sidecar may serve several threads (the chat runs each tool in a worker thread): its
connection is not tied to the thread that opened it, and every call holds the sidecar's lock, so
no two threads use the connection, or interleave transactions, at once.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from kb.codec import case_to_bytes, decision_to_bytes, workflow_name_from_bytes
from kb.decisions import DecisionRecord
from kb.records import CaseRecord
from kb.sidecar_rows import (
    CASE_COLUMNS,
    REAL_RANGE,
    TABLES,
    ActiveEmbedder,
    CaseHit,
    CaseRow,
    case_row,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cases (
    id TEXT PRIMARY KEY,
    workflow_hash TEXT NOT NULL,
    workflow_key TEXT NOT NULL,
    platform TEXT NOT NULL,
    platform_hash TEXT NOT NULL,
    scheduler TEXT NOT NULL,
    makespan REAL NOT NULL,
    placement_hash TEXT NOT NULL,
    nodes_used TEXT NOT NULL,
    weight INTEGER NOT NULL,
    source TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    body BLOB NOT NULL,
    workflow TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS cases_by_problem ON cases (workflow_hash, platform_hash);
CREATE INDEX IF NOT EXISTS cases_by_platform ON cases (platform_hash, recorded_at);
CREATE TABLE IF NOT EXISTS decisions (
    id TEXT PRIMARY KEY,
    case_id TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_by_case ON decisions (case_id);
CREATE TABLE IF NOT EXISTS chroma_sync (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pending INTEGER NOT NULL,
    collection TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cases_by_source ON cases (source, recorded_at);
CREATE TABLE IF NOT EXISTS failed_cases (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS store_metadata (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
_MARK_PENDING = "INSERT OR REPLACE INTO chroma_sync VALUES (1, 1, '')"
_INSERT_CASE = (
    f"INSERT OR REPLACE INTO cases ({','.join(CASE_COLUMNS)})"
    f" VALUES ({','.join('?' * len(CASE_COLUMNS))})"
)


P = ParamSpec("P")
R = TypeVar("R")


def _serialised(
    method: Callable[Concatenate[Sidecar, P], R],
) -> Callable[Concatenate[Sidecar, P], R]:
    """Run ``method`` holding the sidecar's lock (one thread at a time on the connection)."""

    @functools.wraps(method)
    def locked(self: Sidecar, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


def _in_chunks(ids: Sequence[str], size: int = 500) -> Iterator[tuple[str, list[str]]]:
    """``ids`` in chunks small enough for one SQL ``IN (...)``, with their ``?`` placeholders."""
    for i in range(0, len(ids), size):
        chunk = list(ids[i : i + size])
        yield ",".join("?" * len(chunk)), chunk


class Sidecar:
    """SQLite file of compressed case and decision bodies."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._add_workflow_column()

    def _add_workflow_column(self) -> None:
        """Stores written before the ``workflow`` (name) column existed gain it, filled once
        from the bodies, so retrieval never has to decode a record to name its workflow."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(cases)")}
        if "workflow" in columns:
            return
        with self._db:
            self._db.execute("ALTER TABLE cases ADD COLUMN workflow TEXT NOT NULL DEFAULT ''")
            rows = self._db.execute("SELECT id, body FROM cases").fetchall()
            self._db.executemany(
                "UPDATE cases SET workflow = ? WHERE id = ?",
                [(workflow_name_from_bytes(body), case_id) for case_id, body in rows],
            )

    @_serialised
    def close(self) -> None:
        self._db.close()

    @_serialised
    def snapshot(self, path: Path) -> None:
        """Copy the whole sidecar to ``path`` as one consistent snapshot (SQLite's online
        backup: writers of other processes may go on meanwhile)."""
        target = sqlite3.connect(path)
        try:
            self._db.backup(target)
        finally:
            target.close()

    # --- writes (one transaction per call) ------------------------------------------------
    def put_cases(self, cases: Sequence[CaseRecord], bodies: Sequence[bytes] | None = None) -> None:
        """Insert or replace ``cases`` (bodies encoded here unless given) atomically."""
        encoded = bodies if bodies is not None else [case_to_bytes(c) for c in cases]
        self.insert_case_rows([case_row(c, b) for c, b in zip(cases, encoded, strict=True)])

    @_serialised
    def insert_case_rows(self, rows: Sequence[tuple[object, ...]]) -> None:
        """Insert or replace raw rows (values in :data:`CASE_COLUMNS` order) in one transaction.

        :meth:`put_cases` is the way to store records; the benchmark uses this to fill a large
        store with synthetic rows.
        """
        with self._db:
            self._db.execute(_MARK_PENDING)
            self._db.executemany(_INSERT_CASE, rows)

    def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None:
        self.insert_decision_rows(
            [(d.decision_id, d.case_id, decision_to_bytes(d)) for d in decisions]
        )

    @_serialised
    def insert_decision_rows(self, rows: Sequence[tuple[str, str, bytes]]) -> None:
        """Insert or replace ``(id, case_id, encoded body)`` rows in one transaction."""
        with self._db:
            self._db.execute(_MARK_PENDING)
            self._db.executemany("INSERT OR REPLACE INTO decisions VALUES (?,?,?)", rows)

    @_serialised
    def put_case_with_decisions(
        self, case: CaseRecord, decisions: Sequence[DecisionRecord]
    ) -> None:
        """Insert ``case`` and its ``decisions`` in one transaction: a process killed at any
        instant leaves both or neither (what learning a real run needs)."""
        with self._db:
            self._db.execute(_MARK_PENDING)
            self._db.execute(_INSERT_CASE, case_row(case, case_to_bytes(case)))
            self._db.executemany(
                "INSERT OR REPLACE INTO decisions VALUES (?,?,?)",
                [(d.decision_id, d.case_id, decision_to_bytes(d)) for d in decisions],
            )

    @_serialised
    def put_failed(self, case: CaseRecord) -> None:
        """Keep the case of a real run that did not complete, apart from the cases (one
        transaction; no vector, so nothing retrieves it)."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO failed_cases VALUES (?,?,?,?)",
                (case.case_id, case.source, case.recorded_at, case_to_bytes(case)),
            )

    @_serialised
    def delete_cases(self, ids: Sequence[str]) -> None:
        """Delete cases and their decisions."""
        with self._db:
            self._db.execute(_MARK_PENDING)
            for marks, chunk in _in_chunks(ids):
                self._db.execute(f"DELETE FROM decisions WHERE case_id IN ({marks})", chunk)
                self._db.execute(f"DELETE FROM cases WHERE id IN ({marks})", chunk)

    # --- agreement with Chroma -------------------------------------------------------------
    @_serialised
    def chroma_in_sync(self, collection: str) -> bool:
        """True when every write recorded here has also reached Chroma's ``collection`` (the
        cases collection of the embedder in use; another embedder's collections are not synced).

        Each sidecar write marks the store *pending* in its own transaction, and the knowledge
        base clears the mark once Chroma has the same change; a process killed in between
        leaves the mark. Opening therefore costs one row read instead of counting Chroma's
        collections (which is O(n): 0.3 s at 100k, seconds at 1M). Stores written before the
        mark existed have no row and count as pending once.
        """
        query = "SELECT pending, collection FROM chroma_sync WHERE id = 1"
        row = self._db.execute(query).fetchone()
        return row is not None and row[0] == 0 and row[1] == collection

    @_serialised
    def mark_chroma_synced(self, collection: str) -> None:
        """Record that Chroma's ``collection`` (and its decisions) hold every record here."""
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO chroma_sync VALUES (1, 0, ?)", (collection,))

    # --- the active embedder ---------------------------------------------------------------
    @_serialised
    def active_embedder(self) -> ActiveEmbedder | None:
        """The embedder recorded by the last completed switch, or None (then v0: stores from
        before the record, and new ones, were filled by ``structural-v0``). Two-row read."""
        rows = dict(
            self._db.execute(
                "SELECT key, value FROM store_metadata"
                " WHERE key IN ('embedder', 'embedder_checksum')"
            ).fetchall()
        )
        if "embedder" not in rows:
            return None
        return ActiveEmbedder(rows["embedder"], rows.get("embedder_checksum", ""))

    @_serialised
    def switch_embedder(self, active: ActiveEmbedder, collection: str) -> None:
        """Record ``active`` as the store's embedder and its cases ``collection`` as in sync,
        in one transaction: called once the new collections hold every record, so a process
        killed earlier leaves the previous embedder in charge."""
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO store_metadata VALUES (?, ?)",
                [("embedder", active.name), ("embedder_checksum", active.checksum)],
            )
            self._db.execute("INSERT OR REPLACE INTO chroma_sync VALUES (1, 0, ?)", (collection,))

    @_serialised
    def count(self, table: str = "cases") -> int:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        (n,) = self._db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        return int(n)

    @_serialised
    def ids(self, table: str = "cases") -> set[str]:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        return {row[0] for row in self._db.execute(f"SELECT id FROM {table}")}

    @_serialised
    def existing(self, ids: Iterable[str], table: str = "cases") -> set[str]:
        """Which of ``ids`` are stored."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        found: set[str] = set()
        for marks, chunk in _in_chunks(list(ids)):
            rows = self._db.execute(f"SELECT id FROM {table} WHERE id IN ({marks})", chunk)
            found.update(r[0] for r in rows)
        return found

    @_serialised
    def bodies(self, ids: Sequence[str], table: str = "cases") -> dict[str, bytes]:
        """id -> compressed body for the stored ones among ``ids``."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        result: dict[str, bytes] = {}
        for marks, chunk in _in_chunks(ids):
            rows = self._db.execute(f"SELECT id, body FROM {table} WHERE id IN ({marks})", chunk)
            result.update((r[0], r[1]) for r in rows)
        return result

    @_serialised
    def hits(self, ids: Sequence[str]) -> dict[str, CaseHit]:
        """id -> :class:`CaseHit` for the stored cases among ``ids`` (one indexed lookup)."""
        found: dict[str, CaseHit] = {}
        for marks, chunk in _in_chunks(ids):
            rows = self._db.execute(
                "SELECT id, scheduler, makespan, workflow, platform, source, body FROM cases"
                f" WHERE id IN ({marks})",
                chunk,
            )
            found.update((r[0], CaseHit(r[1], r[2], r[3], r[4], r[5], r[6])) for r in rows)
        return found

    @_serialised
    def ids_on_platform(self, platform_hash: str, limit: int) -> list[str]:
        """Ids of the ``limit`` most recently recorded cases on the platform (one index scan)."""
        rows = self._db.execute(
            "SELECT id FROM cases WHERE platform_hash = ? ORDER BY recorded_at DESC, id LIMIT ?",
            (platform_hash, limit),
        )
        return [r[0] for r in rows]

    @_serialised
    def real_ids(self, table: str = "cases") -> list[str]:
        """Ids of the cases learned from real runs (``failed_cases``: those that did not
        complete), oldest first (an index range on the source)."""
        if table not in ("cases", "failed_cases"):
            raise ValueError(f"unknown table {table!r}")
        rows = self._db.execute(
            f"SELECT id FROM {table} WHERE source >= ? AND source < ? ORDER BY recorded_at, id",
            REAL_RANGE,
        )
        return [r[0] for r in rows]

    @_serialised
    def recurring_ids(self, limit: int) -> list[str]:
        """Ids of the ``limit`` most recently recorded cases whose workflow ran more than once
        on their platform (grouped on the ``cases_by_problem`` index)."""
        rows = self._db.execute(
            "SELECT id FROM cases WHERE (workflow_hash, platform_hash) IN"
            " (SELECT workflow_hash, platform_hash FROM cases"
            "  GROUP BY workflow_hash, platform_hash HAVING COUNT(*) > 1)"
            " ORDER BY recorded_at DESC, id LIMIT ?",
            (limit,),
        )
        return [r[0] for r in rows]

    @_serialised
    def case_rows(self) -> list[CaseRow]:
        """The curation columns of every case."""
        rows = self._db.execute(
            "SELECT id, workflow_hash, platform, platform_hash, scheduler, makespan,"
            " placement_hash, nodes_used, weight, source, workflow_key FROM cases"
        )
        return [
            CaseRow(
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], tuple(r[7].split(",")), r[8], r[9], r[10]
            )
            for r in rows
        ]

    @_serialised
    def decision_case_ids(self, case_ids: Sequence[str]) -> list[str]:
        """Ids of the decisions that belong to ``case_ids``."""
        found: list[str] = []
        for marks, chunk in _in_chunks(case_ids):
            rows = self._db.execute(f"SELECT id FROM decisions WHERE case_id IN ({marks})", chunk)
            found.extend(r[0] for r in rows)
        return found
