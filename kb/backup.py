"""``kb backup DIR`` / ``kb restore DIR``: the store's records copied out and back in.

A backup is one file, ``DIR/cases.sqlite``: a sidecar (:mod:`kb.sidecar`) holding every case,
decision and failed real run with its full record. Vectors are not copied: a restore embeds
them again with the target store's embedder, so a backup also outlives an embedder change.

Consistent while the store is in use: an embedded store is copied with SQLite's online backup
(one snapshot); a served one is read record by record (each record whole; a case written
during the backup may be in it or not, never half). The file is written under a temporary name
and renamed when complete, so a backup killed part way leaves nothing that looks like one.
A restore adds what the target lacks (by id): run it again after a crash and it finishes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from kb.codec import case_from_bytes, decision_from_bytes
from kb.sidecar import Sidecar
from kb.store import SIDECAR_FILE, KnowledgeBase
from sim.errors import InputError

BACKUP_FILE = SIDECAR_FILE
CHUNK = 1000
"""Records read and written per step."""

KINDS = ("cases", "decisions", "failed_cases")


def backup(kb: KnowledgeBase, directory: Path) -> dict[str, int]:
    """Write every record of ``kb`` to ``directory/cases.sqlite``; returns counts by kind.

    Refuses a folder that already holds a backup (name a new one: a backup is never
    overwritten)."""
    target = directory / BACKUP_FILE
    if target.exists():
        raise InputError(
            str(directory), ["already holds a backup (cases.sqlite): name a new folder"]
        )
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f".{BACKUP_FILE}.partial"
    partial.unlink(missing_ok=True)
    if isinstance(kb.sidecar, Sidecar):
        kb.sidecar.snapshot(partial)
    else:
        _copy_records(kb, partial)
    copy = Sidecar(partial)
    try:
        counts = {kind: copy.count(kind) for kind in KINDS}
    finally:
        copy.close()
    for leftover in (Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    os.replace(partial, target)
    return counts


def _copy_records(kb: KnowledgeBase, path: Path) -> None:
    """A served store's records into a fresh sidecar at ``path``, a chunk at a time."""
    out = Sidecar(path)
    try:
        for kind in KINDS:
            ids = sorted(kb.sidecar.ids(kind))
            for start in range(0, len(ids), CHUNK):
                bodies = kb.sidecar.bodies(ids[start : start + CHUNK], kind)
                if kind == "decisions":
                    out.put_decisions([decision_from_bytes(b) for b in bodies.values()])
                elif kind == "cases":
                    out.put_cases([case_from_bytes(b) for b in bodies.values()],
                                  list(bodies.values()))  # fmt: skip
                else:
                    for body in bodies.values():
                        out.put_failed(case_from_bytes(body))
    finally:
        out.close()


def restore(
    kb: KnowledgeBase, directory: Path, progress: Callable[[int], None] | None = None
) -> dict[str, int]:
    """Add the records of the backup in ``directory`` that ``kb`` lacks, embedding the cases'
    vectors again; returns how many of each kind were added."""
    source = directory / BACKUP_FILE
    if not source.is_file():
        raise InputError(str(directory), ["holds no backup (cases.sqlite): name the folder"
                                          " `wass-chat kb backup` wrote"])  # fmt: skip
    held = Sidecar(source)
    added = dict.fromkeys(KINDS, 0)
    try:
        ids = sorted(held.ids("cases"))
        for start in range(0, len(ids), CHUNK):
            bodies = held.bodies(ids[start : start + CHUNK])
            cases = [case_from_bytes(b) for b in bodies.values()]
            added["cases"] += kb.add_cases(cases, bodies=list(bodies.values()))
            if progress:
                progress(len(cases))
        ids = sorted(held.ids("decisions"))
        for start in range(0, len(ids), CHUNK):
            bodies = held.bodies(ids[start : start + CHUNK], "decisions")
            decisions = [decision_from_bytes(b) for b in bodies.values()]
            added["decisions"] += kb.add_decisions(decisions)
        failed = sorted(held.ids("failed_cases") - kb.sidecar.ids("failed_cases"))
        for body in held.bodies(failed, "failed_cases").values():
            kb.sidecar.put_failed(case_from_bytes(body))
            added["failed_cases"] += 1
    finally:
        held.close()
    return added
