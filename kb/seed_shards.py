"""Seeding split into independent tasks, each writing its own shard file, merged once at the end.

Why: one machine seeds ~19 cases/s; a site's cluster runs many such tasks at once, and a Slurm
job array (submitted by :mod:`wass_chat.slurm.arrays`) is the engine that runs them. This
module is the part that runs on the nodes, and the merge; it knows nothing about Slurm. The
array directory, its plan file and the atomic publication of shards are
:mod:`sim.array_plan`'s, shared with the bench's and the evaluation's arrays.

Task K takes the K-th contiguous block of the deterministic seed plan (so each block holds
every recipe in turn) and writes ``shard-KKKKK.sqlite.partial``, one transaction per finished
chunk, then closes, fsyncs and renames it.

A shard carries each case's and decision's sidecar row, Chroma metadata and v0 embedding, so
merging into a v0 store inserts rows and vectors without decoding a record (a store with another
embedder decodes and re-embeds). The merge skips case ids already stored, and case ids are
fixed by the plan, so merging twice, or merging a re-run task's shard, adds nothing twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kb.codec import (
    case_from_bytes,
    case_metadata,
    decision_from_bytes,
    decision_metadata,
    decision_to_bytes,
)
from kb.embedding import StructuralEmbedder
from kb.seed import SeedConfig, SeededJob, SeedJob, plan_seed, seeded_chunks
from kb.sidecar_rows import CASE_COLUMNS, case_row
from kb.store import MAX_BATCH, KnowledgeBase
from sim.array_plan import ArrayPlan, clear_partial, read_plan, task_main
from sim.atomic_files import publish
from sim.errors import InputError

KIND = "seed"
_BODY = CASE_COLUMNS.index("body")
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE cases (
    id TEXT PRIMARY KEY, columns TEXT NOT NULL, body BLOB NOT NULL, metadata TEXT NOT NULL,
    embedding BLOB NOT NULL
);
CREATE TABLE decisions (
    id TEXT PRIMARY KEY, case_id TEXT NOT NULL, body BLOB NOT NULL, metadata TEXT NOT NULL,
    embedding BLOB NOT NULL
);
"""


def seed_plan(config: SeedConfig, tasks: int) -> ArrayPlan:
    """The seed of ``config`` split into ``tasks`` array tasks (the workers per task and the
    insert batch do not change the cases, so they are left out of the plan's digest)."""
    return ArrayPlan(KIND, asdict(config), tasks, "sqlite", ("jobs", "batch"))


def seed_config(plan: ArrayPlan) -> SeedConfig:
    fields: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in plan.spec.items()
    }
    return SeedConfig(**fields)


def task_jobs(plan: ArrayPlan, task: int, jobs: Sequence[SeedJob] | None = None) -> list[SeedJob]:
    """Task ``task``'s contiguous block of the seed plan."""
    return plan.block(task, jobs if jobs is not None else plan_seed(seed_config(plan)))


# --- one task ----------------------------------------------------------------------------------
class ShardWriter:
    """A task's ``.partial`` shard: one transaction per chunk, renamed when complete."""

    def __init__(self, final: Path, plan: ArrayPlan, task: int) -> None:
        self.final = final
        self.partial = clear_partial(final)  # what a killed earlier run of this task left
        self._db = sqlite3.connect(self.partial)
        self._db.executescript(_SCHEMA)
        self._embedder = embedder = StructuralEmbedder()
        meta = {
            "plan": plan.digest,
            "task": str(task),
            "pid": str(os.getpid()),
            "embedder": embedder.name,
            "checksum": embedder.checksum,
        }
        with self._db:
            self._db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())

    def add(self, finished: Sequence[SeededJob]) -> int:
        """Store finished jobs' cases and decisions in one transaction; returns cases added."""
        rows, decisions = [], []
        for job in finished:
            for case, body, vector in zip(job.cases, job.bodies, job.embeddings, strict=True):
                columns = list(case_row(case, body))
                del columns[_BODY]
                rows.append(
                    (
                        case.case_id,
                        json.dumps(columns),
                        body,
                        json.dumps(case_metadata(case)),
                        np.asarray(vector, dtype=np.float32).tobytes(),
                    )
                )
            vectors = self._embedder.embed_decisions([d.state for d in job.decisions])
            decisions += [
                (
                    d.decision_id,
                    d.case_id,
                    decision_to_bytes(d),
                    json.dumps(decision_metadata(d)),
                    np.asarray(v, dtype=np.float32).tobytes(),
                )
                for d, v in zip(job.decisions, vectors, strict=True)
            ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO cases VALUES (?,?,?,?,?)", rows)
            self._db.executemany("INSERT OR REPLACE INTO decisions VALUES (?,?,?,?,?)", decisions)
        return len(rows)

    def finish(self) -> Path:
        """Close, flush to disk and move into place: only now can a merge see the shard."""
        self._db.close()
        return publish(self.partial, self.final)


def run_task(directory: Path, task: int) -> Path:
    """Run array task ``task`` of the plan in ``directory`` into its shard; returns its path.

    A task whose shard already exists does nothing (a re-submitted finished task)."""
    plan = read_plan(directory, KIND)
    final = plan.shard(directory, task)
    if final.exists():
        return final
    writer = ShardWriter(final, plan, task)
    for finished in seeded_chunks(seed_config(plan), task_jobs(plan, task)):
        writer.add(finished)
    return writer.finish()


# --- the merge ---------------------------------------------------------------------------------
@dataclass
class MergeReport:
    """What a merge found and added."""

    tasks: int
    shards: int = 0
    cases_in_shards: int = 0
    added: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """This process's CPU time (the merge runs in one process)."""
    missing_tasks: list[int] = field(default_factory=list)
    """Tasks without a finished shard (failed, killed, or still running)."""


def merge_shards(
    kb: KnowledgeBase, directory: Path, progress: Callable[[int], None] | None = None
) -> MergeReport:
    """Add every finished shard of ``directory`` to ``kb``, skipping cases already stored."""
    plan = read_plan(directory, KIND)
    report = MergeReport(tasks=plan.tasks)
    started, cpu = time.perf_counter(), time.process_time()
    for task in range(plan.tasks):
        path = plan.shard(directory, task)
        if not path.exists():
            report.missing_tasks.append(task)
            continue
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("plan") != plan.digest:
                raise InputError(str(path), ["belongs to another seed plan"])
            fast = (meta["embedder"], meta["checksum"]) == (kb.embedder.name, kb.embedder.checksum)
            query = "SELECT id, columns, body, metadata, embedding FROM cases ORDER BY id"
            cursor = db.execute(query)
            while batch := cursor.fetchmany(MAX_BATCH):
                report.cases_in_shards += len(batch)
                report.added += _merge_batch(kb, db, batch, fast)
                if progress:
                    progress(len(batch))
        finally:
            db.close()
        report.shards += 1
    report.seconds = time.perf_counter() - started
    report.cpu_seconds = time.process_time() - cpu
    return report


def _merge_batch(
    kb: KnowledgeBase, shard: sqlite3.Connection, batch: list[tuple], fast: bool
) -> int:
    """One batch of shard rows into ``kb``; returns cases added. Sidecar first, then Chroma,
    then the sync mark, as :meth:`KnowledgeBase.add_cases` writes."""
    ids = [r[0] for r in batch]
    known = kb.sidecar.existing(ids)
    fresh = [r for r in batch if r[0] not in known]
    if fresh and fast:
        rows = []
        for _, columns, body, _, _ in fresh:
            values = json.loads(columns)
            values.insert(_BODY, body)
            rows.append(tuple(values))
        kb.sidecar.insert_case_rows(rows)
        kb.cases.add(
            ids=[r[0] for r in fresh],
            embeddings=np.stack([np.frombuffer(r[4], dtype=np.float32) for r in fresh]),
            metadatas=[json.loads(r[3]) for r in fresh],
        )
    elif fresh:
        kb.add_cases([case_from_bytes(r[2]) for r in fresh], bodies=[r[2] for r in fresh])
    marks = ",".join("?" * len(ids))
    query = (
        f"SELECT id, case_id, body, metadata, embedding FROM decisions WHERE case_id IN ({marks})"
    )
    decisions = shard.execute(query, ids).fetchall()
    if fast:
        stored = kb.sidecar.existing((d[0] for d in decisions), "decisions")
        new = [d for d in decisions if d[0] not in stored]
        if new:
            kb.sidecar.insert_decision_rows([(d[0], d[1], d[2]) for d in new])
            kb.decisions.add(
                ids=[d[0] for d in new],
                embeddings=np.stack([np.frombuffer(d[4], dtype=np.float32) for d in new]),
                metadatas=[json.loads(d[3]) for d in new],
            )
    else:
        kb.add_decisions([decision_from_bytes(d[2]) for d in decisions])
    kb.sidecar.mark_chroma_synced(kb.cases.name)
    return len(fresh)


def main(argv: Sequence[str] | None = None) -> int:
    """One seed array task: ``python -m kb.seed_shards DIR [--task K]``."""
    return task_main("python -m kb.seed_shards", run_task, argv)


if __name__ == "__main__":
    raise SystemExit(main())
