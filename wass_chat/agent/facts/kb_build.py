"""Installing the demo knowledge base on first use: all or nothing, in milliseconds.

The first question that needs past cases on a fresh data home waits for the knowledge base.
The package ships it ready (``kb/demo-kb.tar.gz``, see :mod:`kb.demo`), so installing it is
unpacking an archive into a hidden sibling directory, renamed into place only once complete:

* a crash or a killed app leaves at most a hidden directory, removed by the next install;
* two apps on one data home race harmlessly: the first rename wins, the loser's copy is dropped;
* the answer's :class:`Work` token is checked before the work starts, so a cancelled answer
  installs nothing.

Loading the portable asset instead (:func:`kb.demo.ensure_demo_kb`) took about 3 s of Chroma
imports and inserts, more than half the first answer (issue 20 asks for at most 5 s).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tarfile
import uuid
import zlib
from pathlib import Path

from kb.store import SIDECAR_FILE
from sim.errors import ServiceUnavailable
from wass_chat.agent.cancellation import Work


def stored_cases(kb_dir: Path) -> int:
    """Cases in the knowledge base at ``kb_dir`` (0 when there is none), read-only."""
    path = kb_dir / SIDECAR_FILE  # its case count says whether the store is empty, no Chroma
    if not path.is_file():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            (count,) = db.execute("SELECT COUNT(*) FROM cases").fetchone()
    except sqlite3.Error:
        return 0
    return int(count)


def build_demo_kb(kb_dir: Path, work: Work) -> None:
    """Install the shipped demo knowledge base at ``kb_dir`` (which holds no cases), or raise
    (:class:`WorkCancelled`, :class:`ServiceUnavailable`) having left ``kb_dir`` untouched."""
    from kb.demo import install_demo_store  # here: kb.demo pulls in the seeder (~0.1 s)

    work.check()
    kb_dir.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_builds(kb_dir)
    building = kb_dir.with_name(f".{kb_dir.name}-building-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    work.report("installing the demo knowledge base (first use)")
    try:
        install_demo_store(building)
        _install(building, kb_dir)
    except (OSError, EOFError, zlib.error, tarfile.TarError) as exc:
        raise ServiceUnavailable(f"could not install the demo knowledge base: {exc}") from exc
    finally:
        shutil.rmtree(building, ignore_errors=True)


def _install(built: Path, kb_dir: Path) -> None:
    """Move a finished build to ``kb_dir``; an empty store there is replaced, a filled one (an
    app next door built it first) is kept."""
    if kb_dir.exists():
        if stored_cases(kb_dir) > 0:
            return
        empty = kb_dir.with_name(f".{kb_dir.name}-empty-{uuid.uuid4().hex[:6]}")
        kb_dir.rename(empty)
        built.rename(kb_dir)
        shutil.rmtree(empty, ignore_errors=True)
        return
    built.rename(kb_dir)


def _remove_abandoned_builds(kb_dir: Path) -> None:
    """Delete the hidden directories of builds whose process is gone (crashed or killed)."""
    for path in kb_dir.parent.glob(f".{kb_dir.name}-building-*"):
        pid = path.name.removeprefix(f".{kb_dir.name}-building-").split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
