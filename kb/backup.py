"""``kb backup DIR`` / ``kb restore DIR``: the store's records copied out and back in.

A backup is one file, ``DIR/cases.sqlite``: a sidecar (:mod:`kb.sidecar`) holding every case,
decision and failed real run with its full record. Vectors are not copied: a restore embeds
them again with the target store's embedder, so a backup also outlives an embedder change.

Consistent while the store is in use: an embedded store is copied with SQLite's online backup
(one snapshot); a served one is read record by record (each record whole; a case written
during the backup may be in it or not, never half). The file is written under a temporary name
and renamed when complete, so a backup killed part way leaves nothing that looks like one.
Beside it, ``DIR/manifest.json`` names the file's size, SHA-256 and record counts.

A restore checks what it restores before it writes anything: the file must have the size and
digest its manifest names (it is copied aside while hashed, and only that copy is read, so what
is checked is what is restored) and hold the counts it names; a truncated or corrupt backup, or
one without a manifest, is refused in one line (:class:`BrokenBackup`, exit 2) and the target
store is left as it was. It then adds what the target lacks (by id): run it again after a
crash and it finishes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kb.codec import case_from_bytes, decision_from_bytes
from kb.sidecar import Sidecar
from kb.store import SIDECAR_FILE, KnowledgeBase
from sim.atomic_files import publish, write_atomic
from sim.errors import InputError

BACKUP_FILE = SIDECAR_FILE
CHUNK = 1000
"""Records read and written per step."""

KINDS = ("cases", "decisions", "failed_cases")
MANIFEST_FILE = "manifest.json"
MANIFEST_VERSION = 1
HASH_BLOCK = 1 << 20


class BrokenBackup(InputError):
    """A backup that is not what ``kb backup`` wrote (truncated, corrupt, no manifest):
    nothing of it is restored."""

    kind = "backup"


def _hashed(path: Path, copy_to: Path | None = None) -> tuple[int, str]:
    """Size and SHA-256 of ``path``, read once (and written to ``copy_to`` as it is read)."""
    digest, size = hashlib.sha256(), 0
    with contextlib.ExitStack() as files:
        source = files.enter_context(open(path, "rb"))
        out = files.enter_context(open(copy_to, "wb")) if copy_to is not None else None
        while block := source.read(HASH_BLOCK):
            digest.update(block)
            size += len(block)
            if out is not None:
                out.write(block)
    return size, digest.hexdigest()


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
    size, digest = _hashed(partial)
    manifest = {
        "version": MANIFEST_VERSION,
        "file": BACKUP_FILE,
        "bytes": size,
        "sha256": digest,
        "counts": counts,
    }
    write_atomic(directory / MANIFEST_FILE, json.dumps(manifest, indent=1))
    publish(partial, target)
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
                    out.put_cases(
                        [case_from_bytes(b) for b in bodies.values()], list(bodies.values())
                    )
                else:
                    for body in bodies.values():
                        out.put_failed(case_from_bytes(body))
    finally:
        out.close()


def _manifest(directory: Path) -> dict[str, Any]:
    """The backup's manifest, once its file is there; raises :class:`InputError` for a folder
    without a backup and :class:`BrokenBackup` for a missing or unreadable manifest."""
    if not (directory / BACKUP_FILE).is_file():
        raise InputError(
            str(directory),
            ["holds no backup (cases.sqlite): name the folder `wass-chat kb backup` wrote"],
        )
    try:
        manifest = json.loads((directory / MANIFEST_FILE).read_text())
        int(manifest["bytes"]), str(manifest["sha256"]), dict(manifest["counts"])
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise BrokenBackup(
            str(directory),
            [
                f"its manifest ({MANIFEST_FILE}) is missing or unreadable ({type(exc).__name__}), "
                "so what it holds cannot be checked: nothing restored (back the store up again)"
            ],
        ) from exc
    return dict(manifest)


def check_backup(directory: Path, copy_to: Path | None = None) -> dict[str, int]:
    """The record counts of the backup in ``directory`` once its file has the size and
    SHA-256 its manifest names (read once; ``copy_to``: where to copy what was checked);
    raises :class:`BrokenBackup` otherwise."""
    manifest = _manifest(directory)
    size, digest = _hashed(directory / BACKUP_FILE, copy_to)
    if (size, digest) != (int(manifest["bytes"]), str(manifest["sha256"])):
        said = f"{size} bytes" if size != int(manifest["bytes"]) else "another SHA-256"
        raise BrokenBackup(
            str(directory),
            [
                f"{BACKUP_FILE} has {said}, its manifest {int(manifest['bytes'])} bytes of SHA-256 "
                f"{str(manifest['sha256'])[:12]}: truncated or corrupt, nothing restored"
            ],
        )
    return {kind: int(manifest["counts"].get(kind, 0)) for kind in KINDS}


def restore(
    kb: KnowledgeBase, directory: Path, progress: Callable[[int], None] | None = None
) -> dict[str, int]:
    """Add the records of the backup in ``directory`` that ``kb`` lacks, embedding the cases'
    vectors again, once the backup is checked (:func:`check_backup`, nothing written before);
    returns how many of each kind were added."""
    with tempfile.TemporaryDirectory(prefix="wass-restore-") as work:
        checked = Path(work) / BACKUP_FILE
        counts = check_backup(directory, checked)
        try:
            held = Sidecar(checked)
        except sqlite3.DatabaseError as exc:
            raise BrokenBackup(str(directory), [f"{BACKUP_FILE} is no sidecar ({exc})"]) from exc
        found = {kind: held.count(kind) for kind in KINDS}
        if found != counts:
            held.close()
            raise BrokenBackup(
                str(directory),
                [f"{BACKUP_FILE} holds {found}, its manifest says {counts}: nothing restored"],
            )
        return _restore_from(kb, held, progress)


def _restore_from(
    kb: KnowledgeBase, held: Sidecar, progress: Callable[[int], None] | None
) -> dict[str, int]:
    """Add ``held``'s records that ``kb`` lacks (and close ``held``)."""
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
