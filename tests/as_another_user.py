"""This interpreter, its libraries and this tree made runnable by another Unix user for a block.

A server "run as the user" (``runuser -u alice -- python -m wass_chat.cli mcp``) needs alice to
reach the interpreter: here, and in CI running as root on a clone under ``/root``, some of its
folders (``/root`` is 0700) let no one else through. :func:`runnable_by` adds the search bit
(``o+x``: enter, not list) to just the folders on the way that lack it, checks that the user can
now import wass-chat, and puts every mode back afterwards. The change is machine-wide while it
lasts, so it is taken under a lock the test processes share: two workers never undo each other's.
"""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCK = Path("/tmp/wass-tests-runnable-by.lock")


def _needed() -> set[Path]:
    """The folders another user passes through to run this interpreter on this tree."""
    ends = {Path(os.path.realpath(sys.executable)), Path(sys.base_prefix), Path(sys.prefix), ROOT}
    if "SLURM_CONF" in os.environ:
        ends.add(Path(os.environ["SLURM_CONF"]))
    folders: set[Path] = set()
    for end in ends:
        resolved = end.resolve()
        folders.update(p for p in (resolved, *resolved.parents) if p.is_dir())
    return folders


@contextmanager
def runnable_by(user: str, env: dict[str, str]) -> Iterator[None]:
    """``user`` can run ``sys.executable -m wass_chat.cli`` with ``env`` inside the block; fails
    (never skips) with the user's own error when it still cannot."""
    LOCK.touch(mode=0o666, exist_ok=True)
    with LOCK.open() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        changed: dict[Path, int] = {}
        try:
            for folder in sorted(_needed()):
                mode = stat.S_IMODE(folder.stat().st_mode)
                if not mode & stat.S_IXOTH:
                    changed[folder] = mode
                    folder.chmod(mode | stat.S_IXOTH)
            pairs = [f"{k}={v}" for k, v in env.items()]
            check = [
                "runuser",
                "-u",
                user,
                "--",
                "env",
                *pairs,
                sys.executable,
                "-c",
                "import wass_chat.cli",
            ]
            done = subprocess.run(check, capture_output=True, text=True, cwd="/tmp", check=False)
            if done.returncode != 0:
                pytest.fail(f"{user} cannot run {sys.executable}: {done.stderr.strip()[-600:]}")
            yield
        finally:
            for folder, mode in changed.items():
                folder.chmod(mode)
