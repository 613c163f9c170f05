"""The knowledge base: Chroma vectors for retrieval, a SQLite sidecar for the full records.

Layout under the kb directory: ``chroma/`` (Chroma's persistent client) and ``cases.sqlite``
(the sidecar, see :mod:`kb.sidecar`); a :class:`~kb.chroma_client.ChromaTarget` with
``mode="http"`` keeps both on a Chroma server instead (:mod:`kb.served_sidecar`).
Chroma holds the cases and the decisions *per embedder*; each collection's metadata names the
embedder and its checksum, so vectors from two embedders are never mixed. Cases are further
split into one collection per platform family (:mod:`kb.shards`), so a query loads only the
index of its own family.
Switching embedders re-embeds every stored record into the new embedder's collections; the
sidecar records which embedder is active once they are complete, and a later open without an
explicit embedder uses that one (stores without the record were filled by v0).

Writes go sidecar first (marking the store *pending*), then Chroma, in batches of at most
:data:`MAX_BATCH`; the mark is cleared when Chroma has caught up. A crash in between leaves the
mark, and the next open reconciles Chroma with the sidecar; a clean store opens without touching
Chroma's (O(n)) counts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kb.chroma_client import ChromaTarget, HnswSettings, chroma_client
from kb.codec import (
    case_from_bytes,
    case_metadata,
    case_to_bytes,
    decision_from_bytes,
    decision_metadata,
)
from kb.decisions import DecisionRecord, DecisionState
from kb.embedders import embedder_by_name, registry_name
from kb.embedding import Embedder, StructuralEmbedder
from kb.provenance import (
    JobAccounting,
    check_plausible,
    confirm_real_run,
    signed,
    source_kind,
    stamp_confirmed,
    writer,
)
from kb.records import CaseRecord, platform_hash
from kb.retrieve import RetrievedCase, RetrievedDecision, rank_cases, rank_decisions, tie_cut
from kb.served_sidecar import ServedSidecar
from kb.shards import CaseShards, platform_family
from kb.sidecar import Sidecar
from kb.sidecar_rows import ActiveEmbedder
from sim.errors import InputError
from sim.model import Platform, Workflow

log = logging.getLogger(__name__)

SIDECAR_FILE = "cases.sqlite"
"""The sidecar's file in a knowledge-base directory (a served store keeps none)."""
MAX_BATCH = 5000
"""Records per Chroma ``add`` (Chroma refuses more than ~5461)."""
REPAIR_LIMIT = 20_000
"""Missing vectors repaired silently on open; more than this asks for ``kb reembed``."""

TIE_OVERFETCH = 4
"""Queries fetch this many times ``k`` so equally similar cases (one workflow under several
schedulers) can be ranked by makespan before cutting to ``k``."""

Progress = Callable[[int], None]
"""Called with the number of records just processed."""


CHROMA_INDEX = Path("chroma") / "chroma.sqlite3"
"""Chroma's own database in an embedded store's directory (absent: the vectors are gone)."""


class StoreMissing(InputError):
    """The knowledge base is gone or emptied: an answer from it would be an empty one, which
    reads as "no similar past runs" when the truth is "no store"."""


def require_index(directory: Path) -> None:
    """Refuse an embedded store whose sidecar holds cases but whose Chroma index is gone
    (a deleted ``chroma/`` folder): opening it would create an empty index and every
    retrieval would silently return nothing."""
    sidecar = directory / SIDECAR_FILE
    if not sidecar.is_file() or (directory / CHROMA_INDEX).is_file():
        return
    held = Sidecar(sidecar)
    try:
        cases = held.count("cases")
    finally:
        held.close()
    if cases:
        raise StoreMissing(
            str(directory),
            [
                f"its Chroma index {CHROMA_INDEX.parent}/ is missing while the sidecar holds"
                f" {cases} cases: restore it from a backup or rebuild it with"
                " `wass-chat kb reembed --embedder structural-v0`"
            ],
        )


class KnowledgeBase:
    """Past executions, searchable by similarity. Open with a directory or a
    :class:`~kb.chroma_client.ChromaTarget` (a Chroma server).

    ``embedder=None`` opens with the embedder the store records as active (see :meth:`reembed`);
    an explicit one reads and fills that embedder's collections without changing the record.
    """

    def __init__(
        self,
        location: Path | str | ChromaTarget,
        embedder: Embedder | None = None,
        hnsw: HnswSettings | None = None,
        repair: bool = True,
        sources: Collection[str] | None = None,
        accounting: JobAccounting | None = None,
    ) -> None:
        self.accounting = accounting
        """Slurm's accounting, which confirms every ``slurm:`` case before it is written
        (:func:`~kb.provenance.confirm_real_run`); None: such cases are refused."""
        self.hnsw = hnsw or HnswSettings()
        self.sources = frozenset(sources) if sources else None
        """Source kinds (:func:`~kb.provenance.source_kind`) retrieval may return; None: all."""
        if isinstance(location, ChromaTarget):
            if location.mode == "embedded":
                require_index(location.directory)
        else:
            require_index(Path(location))
        self._client, directory = chroma_client(
            Path(location) if isinstance(location, str) else location
        )
        self.directory = directory
        served = isinstance(location, ChromaTarget) and location.mode == "http"
        self.sidecar: Sidecar | ServedSidecar = (
            ServedSidecar(self._client) if served else Sidecar(directory / SIDECAR_FILE)
        )
        try:
            self.embedder: Embedder = embedder or self._recorded_embedder()
        except InputError:
            self.sidecar.close()
            raise
        self.cases = self._case_shards()
        self.decisions = self._collection("decisions")
        self.missing_vectors = 0
        if repair:
            self.missing_vectors = self.repair()

    def _recorded_embedder(self) -> Embedder:
        """The active embedder the sidecar records (v0 when none is), rebuilt and checked
        against the recorded checksum, or an InputError saying how to re-embed."""
        active = self.sidecar.active_embedder()
        if active is None:
            return StructuralEmbedder()
        fix = "run `wass-chat kb reembed --embedder structural-v0` (or another embedder)"
        try:
            embedder = embedder_by_name(active.name)
        except InputError as exc:
            problem = f"its vectors come from {active.name}, which cannot be rebuilt ({exc})"
            raise InputError(str(self.directory), [f"{problem}; {fix}"]) from exc
        if embedder.checksum != active.checksum:
            problem = (
                f"its vectors come from {active.name} with checksum {active.checksum}, but that"
                f" embedder's checksum is now {embedder.checksum} (its checkpoint changed)"
            )
            raise InputError(str(self.directory), [f"{problem}; {fix}"])
        return embedder

    # --- collections ----------------------------------------------------------------------
    def collection_name(self, kind: str, embedder: Embedder | None = None) -> str:
        e = embedder or self.embedder
        return f"{kind}-{e.name}-{e.checksum}"

    def _collection(self, kind: str, embedder: Embedder | None = None) -> Any:
        e = embedder or self.embedder
        return self._client.get_or_create_collection(
            self.collection_name(kind, e),
            embedding_function=None,
            configuration=self.hnsw.configuration(),
            metadata={"kind": kind, "embedder": e.name, "checksum": e.checksum},
        )

    def _case_shards(self, embedder: Embedder | None = None) -> CaseShards:
        e = embedder or self.embedder
        return CaseShards(
            self._client,
            self.collection_name("cases", e),
            self.hnsw.configuration(),
            {"kind": "cases", "embedder": e.name, "checksum": e.checksum},
        )

    def _drop_unsharded_cases(self) -> None:
        """Delete the single case collection stores kept before cases were sharded by
        platform family (its vectors now live in the shards)."""
        legacy = self.collection_name("cases")
        if legacy in self.collection_names():
            self._client.delete_collection(legacy)

    def collection_names(self) -> list[str]:
        return sorted(c.name for c in self._client.list_collections())

    def count(self) -> int:
        """Stored cases (the sidecar's count: the source of truth)."""
        return self.sidecar.count("cases")

    def require_cases(self) -> None:
        """Raise :class:`StoreMissing` when the store holds no case (a missing or emptied
        store, or a server whose data folder was wiped)."""
        if self.count() == 0:
            where = self.directory if self.sidecar_path() else "the Chroma server"
            raise StoreMissing(
                str(where),
                [
                    "the knowledge base holds no cases (missing, emptied, or not the store you"
                    " meant): seed it (`wass-chat kb seed`) or restore it from a backup"
                ],
            )

    def sidecar_path(self) -> Path | None:
        """The embedded sidecar's file (None for a served store)."""
        return self.sidecar.path if isinstance(self.sidecar, Sidecar) else None

    def close(self) -> None:
        self.sidecar.close()

    # --- writes ---------------------------------------------------------------------------
    def add_cases(
        self,
        cases: Sequence[CaseRecord],
        embeddings: np.ndarray | None = None,
        decisions: Sequence[DecisionRecord] = (),
        progress: Progress | None = None,
        bodies: Sequence[bytes] | None = None,
    ) -> int:
        """Store ``cases`` not already stored (by id), and ``decisions``; returns cases added.

        ``embeddings`` (one row per case, from this base's embedder) and ``bodies`` (their
        encoded records) skip that work here, which lets seeding workers do it in parallel.
        Embeddings of another width (seeding workers embed with v0) are recomputed here.

        Every case is signed with its writer (``user@host``); a case whose makespan beats its
        critical-path bound is refused (:class:`~kb.provenance.ImplausibleCase`), as is a
        real run's case Slurm's accounting does not confirm
        (:class:`~kb.provenance.UnconfirmedRun`), before anything is written. Pre-encoded
        ``bodies`` come from this process's own seeding workers running the simulator: they are
        stored as encoded, unchecked (checking a million seeded cases would add minutes).
        """
        if bodies is None:
            by = writer()
            cases = [signed(c, by) for c in cases]
            for c in cases:
                check_plausible(c)
                confirm_real_run(c, self.accounting)
            cases = [stamp_confirmed(c) for c in cases]
        if embeddings is not None and embeddings.shape[1] != self.embedder.dim:
            log.info("recomputing %d embeddings with %s", len(embeddings), self.embedder.name)
            embeddings = None
        known = self.sidecar.existing(c.case_id for c in cases)
        keep = [i for i, c in enumerate(cases) if c.case_id not in known]
        unique = list({cases[i].case_id: i for i in keep}.values())
        for start in range(0, len(unique), MAX_BATCH):
            idx = unique[start : start + MAX_BATCH]
            batch = [cases[i] for i in idx]
            vectors = (
                embeddings[idx]
                if embeddings is not None
                else self.embedder.embed_cases([(c.workflow, c.platform) for c in batch])
            )
            self.sidecar.put_cases(batch, [bodies[i] for i in idx] if bodies else None)
            self._add_case_vectors(batch, vectors)
            if progress:
                progress(len(batch))
        case_ids = {c.case_id for c in cases}
        if decisions:
            self.add_decisions([d for d in decisions if d.case_id in case_ids])
        if unique:
            self.sidecar.mark_chroma_synced(self.cases.name)
        return len(unique)

    def _add_case_vectors(self, cases: Sequence[CaseRecord], vectors: np.ndarray) -> None:
        self.cases.add(
            ids=[c.case_id for c in cases],
            embeddings=np.asarray(vectors, dtype=np.float32),
            metadatas=[case_metadata(c) for c in cases],
        )

    def add_decisions(self, decisions: Sequence[DecisionRecord]) -> int:
        known = self.sidecar.existing((d.decision_id for d in decisions), "decisions")
        fresh = list({d.decision_id: d for d in decisions if d.decision_id not in known}.values())
        for start in range(0, len(fresh), MAX_BATCH):
            batch = fresh[start : start + MAX_BATCH]
            self.sidecar.put_decisions(batch)
            self._add_decision_vectors(batch)
        if fresh:
            self.sidecar.mark_chroma_synced(self.cases.name)
        return len(fresh)

    def _add_decision_vectors(self, decisions: Sequence[DecisionRecord]) -> None:
        self.decisions.add(
            ids=[d.decision_id for d in decisions],
            embeddings=self.embedder.embed_decisions([d.state for d in decisions]),
            metadatas=[decision_metadata(d) for d in decisions],
        )

    def add_real_case(self, case: CaseRecord, decisions: Sequence[DecisionRecord] = ()) -> bool:
        """Store the case of a real run (:mod:`kb.real_runs`); False when it is already there.

        A run that completed becomes a case like any other: the record and its decisions in one
        sidecar transaction, then their vectors (a process killed before that commit leaves the
        store as it was; after it, the next open adds the missing vectors). One that did not
        complete is kept apart (``failed_cases``: no vector, never retrieved or used as an
        estimate). The id is the run's, so learning a run twice stores it once. Slurm's
        accounting must confirm it first (:func:`~kb.provenance.confirm_real_run`).
        """
        if case.real is None:
            raise ValueError(f"case {case.case_id} is not a real run's")
        case = signed(case, writer())
        confirm_real_run(case, self.accounting)
        case = stamp_confirmed(case)
        if case.real is None or not case.real.completed:
            if self.sidecar.existing([case.case_id], "failed_cases"):
                return False
            self.sidecar.put_failed(case)
            return True
        if self.sidecar.existing([case.case_id]):
            self.add_decisions(decisions)  # a served store killed between its two writes
            return False
        self.sidecar.put_case_with_decisions(case, decisions)
        self._add_case_vectors([case], self.embedder.embed_cases([(case.workflow, case.platform)]))
        if decisions:
            self._add_decision_vectors(decisions)
        self.sidecar.mark_chroma_synced(self.cases.name)
        return True

    def update_case(self, case: CaseRecord) -> None:
        """Rewrite a stored case's record and metadata (e.g. its weight after a merge)."""
        check_plausible(case)
        confirm_real_run(case, self.accounting)
        case = stamp_confirmed(case)
        self.sidecar.put_cases([case], [case_to_bytes(case)])
        self.cases.update(ids=[case.case_id], metadatas=[case_metadata(case)])
        self.sidecar.mark_chroma_synced(self.cases.name)

    def delete_cases(self, ids: Sequence[str]) -> None:
        """Remove cases and their decisions from both stores (sidecar first, like writes)."""
        decision_ids = self.sidecar.decision_case_ids(ids)
        self.sidecar.delete_cases(ids)
        for start in range(0, len(ids), MAX_BATCH):
            self.cases.delete(ids=list(ids[start : start + MAX_BATCH]))
        for start in range(0, len(decision_ids), MAX_BATCH):
            self.decisions.delete(ids=decision_ids[start : start + MAX_BATCH])
        self.sidecar.mark_chroma_synced(self.cases.name)

    # --- reads ----------------------------------------------------------------------------
    def get_cases(self, ids: Sequence[str]) -> dict[str, CaseRecord]:
        """Full records of the stored cases among ``ids``."""
        return {i: case_from_bytes(b) for i, b in self.sidecar.bodies(ids).items()}

    def cases_in_order(self, ids: Sequence[str]) -> list[CaseRecord]:
        """:meth:`get_cases` as a list in the order of ``ids`` (those no longer stored left out)."""
        return [c for c in map(self.get_cases(ids).get, ids) if c is not None]

    def cases_on(self, platform: Platform, limit: int = 32) -> list[CaseRecord]:
        """The ``limit`` most recently recorded cases run on ``platform`` itself (its content
        hash): a cluster's own history, found by lookup rather than similarity."""
        return self.cases_in_order(self.sidecar.ids_on_platform(platform_hash(platform), limit))

    def recurring_cases(self, limit: int = 256) -> list[CaseRecord]:
        """The ``limit`` most recently recorded cases of workflows that ran more than once on
        the same platform (recurring ones, on any platform): the runs that measure nodes."""
        return self.cases_in_order(self.sidecar.recurring_ids(limit))

    def nearest(
        self, vector: np.ndarray, k: int, kind: str = "cases", family: str | None = None
    ) -> tuple[list[str], list[float]]:
        """Ids and cosine distances of the ``k`` nearest stored vectors, nearest first.

        Cases are searched in ``family``'s shard (all shards when None or when it holds too
        few). Only distances are asked of Chroma: its metadata fetch costs more than the HNSW
        search itself, and the sidecar answers the few rows a result needs by primary key.
        """
        if k <= 0:
            return [], []
        if kind == "cases":
            return self.cases.query(vector, k, family)
        hits = self.decisions.query(
            query_embeddings=np.atleast_2d(vector).astype(np.float32, copy=False),
            n_results=k,
            include=["distances"],
        )
        return hits["ids"][0], hits["distances"][0]

    def nearest_cases(
        self, vector: np.ndarray, k: int, family: str | None = None
    ) -> list[RetrievedCase]:
        """The ``k`` stored cases nearest ``vector`` (in ``family``), best first (ties by
        makespan).

        Fetches ``k * TIE_OVERFETCH`` neighbours, but reads sidecar rows only for the ``k`` best
        and those tied with the ``k``-th; records stay compressed until a caller reads them.
        """
        ids, distances = self.nearest(vector, k * TIE_OVERFETCH, family=family)
        if self.sources is None:
            cut = tie_cut(distances, k)
            rows = self.sidecar.hits(ids[:cut])
            return rank_cases(ids[:cut], distances[:cut], rows)[:k]
        rows = self.sidecar.hits(ids)  # limited to trusted sources: filter, then cut
        kept = [
            (i, d)
            for i, d in zip(ids, distances, strict=True)
            if i in rows and source_kind(rows[i].source) in self.sources
        ]
        cut = tie_cut([d for _, d in kept], k)
        return rank_cases([i for i, _ in kept[:cut]], [d for _, d in kept[:cut]], rows)[:k]

    def query(self, workflow: Workflow, platform: Platform, k: int = 5) -> list[RetrievedCase]:
        """The ``k`` stored cases most similar to running ``workflow`` on ``platform`` (on
        platforms of its family when the store has enough of them).

        A store with no case at all raises :class:`StoreMissing`: "nothing similar" from a
        missing, emptied or wrongly named store would be a confident wrong answer."""
        self.require_cases()
        vector = self.embedder.embed_cases([(workflow, platform)])[0]
        return self.nearest_cases(vector, k, platform_family(platform))

    def query_decision(self, state: DecisionState, k: int = 5) -> list[RetrievedDecision]:
        """The ``k`` stored decisions whose state is most similar to ``state``."""
        vector = self.embedder.embed_decisions([state])[0]
        ids, distances = self.nearest(vector, k * TIE_OVERFETCH, kind="decisions")
        bodies = self.sidecar.bodies(ids, "decisions")
        records = {i: decision_from_bytes(b) for i, b in bodies.items()}
        return rank_decisions(ids, distances, records)[:k]

    # --- consistency and embedder changes -------------------------------------------------
    def repair(self) -> int:
        """Reconcile Chroma with the sidecar after a crash; returns how many vectors still lack.

        A store whose last write completed (:meth:`Sidecar.chroma_in_sync`) is left alone: one
        row read. Otherwise Chroma's ids are compared with the sidecar's, extra vectors dropped
        and missing ones embedded, for up to :data:`REPAIR_LIMIT` differences; beyond that (a
        new embedder) it only reports, and ``reembed`` does the work with a progress bar. A
        store from before cases were sharded by platform family is migrated the same way.
        """
        if self.sidecar.chroma_in_sync(self.cases.name):
            return 0
        lacking = 0
        for kind in ("cases", "decisions"):
            collection = self.cases if kind == "cases" else self.decisions
            missing = self.sidecar.count(kind) - collection.count()
            if missing > REPAIR_LIMIT:
                lacking += missing
                continue
            if missing > 1000:  # minutes of work: say so (stderr), it happens once
                log.warning(
                    "the %s index lacks %d vectors (a store from before platform-family shards,"
                    " or an interrupted write): embedding them once",
                    kind,
                    missing,
                )
            self._fill(kind, collection)
        if lacking == 0:
            self._drop_unsharded_cases()
            self.sidecar.mark_chroma_synced(self.cases.name)
        return lacking

    def _fill(self, kind: str, collection: Any, progress: Progress | None = None) -> None:
        """Embed every sidecar record of ``kind`` absent from ``collection``."""
        present = set(collection.get(include=[])["ids"]) if collection.count() else set()
        stored = self.sidecar.ids(kind)
        extra = sorted(present - stored)
        for start in range(0, len(extra), MAX_BATCH):
            collection.delete(ids=extra[start : start + MAX_BATCH])
        absent = sorted(stored - present)
        log.info("adding %d %s vectors to %s", len(absent), kind, collection.name)
        for start in range(0, len(absent), MAX_BATCH):
            ids = absent[start : start + MAX_BATCH]
            bodies = self.sidecar.bodies(ids, kind)
            if kind == "cases":
                cases = [case_from_bytes(bodies[i]) for i in ids]
                vectors = self.embedder.embed_cases([(c.workflow, c.platform) for c in cases])
                self._add_case_vectors(cases, vectors)
            else:
                self._add_decision_vectors([decision_from_bytes(bodies[i]) for i in ids])
            if progress:
                progress(len(ids))

    def reembed(
        self, embedder: Embedder, progress: Progress | None = None, drop_old: bool = True
    ) -> None:
        """Switch to ``embedder``: fill its collections from the sidecar, then record it as the
        store's embedder and (``drop_old``) delete every other embedder's collections (by
        their metadata, so vectors of an embedder whose checkpoint is gone go too).

        The record is written only once the new collections are complete, so a process killed
        part way leaves a store that still opens with its previous embedder and loses nothing;
        running the same re-embed again embeds only what the new collections still lack.
        """
        self.embedder = embedder
        self.cases = self._case_shards()
        self.decisions = self._collection("decisions")
        self._fill("cases", self.cases, progress)
        self._fill("decisions", self.decisions, progress)
        self._drop_unsharded_cases()
        active = ActiveEmbedder(registry_name(embedder), embedder.checksum)
        self.sidecar.switch_embedder(active, self.cases.name)
        if drop_old:
            current = {"embedder": embedder.name, "checksum": embedder.checksum}
            for collection in self._client.list_collections():
                meta = collection.metadata or {}
                if meta.get("kind") in ("cases", "decisions") and any(
                    meta.get(key) != value for key, value in current.items()
                ):
                    self._client.delete_collection(collection.name)
