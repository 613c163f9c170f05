"""Building the demo knowledge base on first use: in a child process, cancellable, all or nothing.

The first question that needs past cases on a fresh data home waits for
:func:`kb.demo.ensure_demo_kb`. It runs here in a child process writing into a hidden sibling
directory, which is renamed into place only once complete, so:

* cancelling the answer kills the child at once (a thread cannot be stopped; a process can) and
  deletes its directory: the CPU is free again and the knowledge base is as it was;
* a crash or a killed app leaves at most a hidden directory, removed by the next build;
* the waiting thread reports progress (the elapsed time: the build writes its cases in one batch,
  so there is no count to show before it ends).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

from sim.errors import ServiceUnavailable
from wass_chat.agent.cancellation import Work, WorkCancelled

SIDECAR = "cases.sqlite"
"""The knowledge base's SQLite sidecar (:mod:`kb.sidecar`): its case count says whether it is
empty without opening Chroma."""
_BUILD = (
    "import sys; from pathlib import Path; from kb.demo import ensure_demo_kb; "
    "ensure_demo_kb(Path(sys.argv[1]))"
)
POLL_S = 0.2
REPORT_EVERY_S = 1.0


def stored_cases(kb_dir: Path) -> int:
    """Cases in the knowledge base at ``kb_dir`` (0 when there is none), read-only."""
    path = kb_dir / SIDECAR
    if not path.is_file():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            (count,) = db.execute("SELECT COUNT(*) FROM cases").fetchone()
    except sqlite3.Error:
        return 0
    return int(count)


def build_demo_kb(kb_dir: Path, work: Work) -> None:
    """Build the demo knowledge base into ``kb_dir`` (which holds no cases), or raise
    :class:`WorkCancelled` having left ``kb_dir`` untouched."""
    kb_dir.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_builds(kb_dir)
    building = kb_dir.with_name(f".{kb_dir.name}-building-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    log = building.with_suffix(".log")
    try:
        with log.open("wb") as errors:
            child = subprocess.Popen(
                [sys.executable, "-c", _BUILD, str(building)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
            )
            _wait(child, work)
        if child.returncode != 0:
            lines = log.read_text(errors="replace").strip().splitlines()
            last = lines[-1] if lines else f"exit status {child.returncode}"
            raise ServiceUnavailable(f"could not build the demo knowledge base: {last}")
        _install(building, kb_dir)
    finally:
        shutil.rmtree(building, ignore_errors=True)
        log.unlink(missing_ok=True)


def _wait(child: subprocess.Popen[bytes], work: Work) -> None:
    """Wait for ``child``, reporting progress; kill it when the work is cancelled."""
    started = last_report = time.monotonic()
    work.report("building the demo knowledge base (first use)")
    while child.poll() is None:
        if work.cancelled.wait(POLL_S):
            child.kill()
            child.wait()
            raise WorkCancelled("knowledge-base build cancelled")
        now = time.monotonic()
        if now - last_report >= REPORT_EVERY_S:
            last_report = now
            work.report(f"building the demo knowledge base (first use): {now - started:.0f} s")


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
