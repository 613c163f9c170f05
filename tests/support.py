"""Shared test helpers.

``require`` is how a test states that it needs a real component (SimGrid, Slurm, Chromium...).
On a developer's machine without it the test skips, saying why; under ``CI=true`` (where
``.ci/run`` installs everything as root) a missing component fails the test instead, so CI can
never pass by skipping.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def require(available: bool, reason: str) -> None:
    """Skip (locally) or fail (in CI) the calling test when ``available`` is false."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"required in CI but unavailable: {reason}")
    pytest.skip(reason)


@contextmanager
def data_home(home: Path) -> Iterator[Path]:
    """``WASS_HOME=home`` for the block (the settings re-read on entry and exit), for code that
    outlives one test's ``monkeypatch`` (module fixtures) or runs the CLI in this process."""
    from wass_chat.config import settings

    previous = os.environ.get("WASS_HOME")
    os.environ["WASS_HOME"] = str(home)
    settings.cache_clear()
    try:
        yield home
    finally:
        if previous is None:
            os.environ.pop("WASS_HOME", None)
        else:
            os.environ["WASS_HOME"] = previous
        settings.cache_clear()


@dataclass(frozen=True)
class CliRun:
    """What one ``wass-chat`` command returned and printed."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(home: Path, *argv: str, env: dict[str, str] | None = None) -> CliRun:
    """``wass-chat ARGV`` with ``WASS_HOME=home`` (and ``env``) through the real entry point,
    ``wass_chat.cli.main``, in this process: a CLI start in a subprocess costs ~1 s of CPU, and
    a test that is not about the process need not pay it (docs/testing.md, rule 3). Usable
    where ``capsys`` is not (module fixtures)."""
    from wass_chat.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, data_home(home):
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    return CliRun(code, out.getvalue(), err.getvalue())


def no_settings_file(folder: Path) -> str:
    """A ``WASS_CONFIG`` value that means "no settings": an empty TOML file in ``folder``.

    (A path that does not exist is refused: ``WASS_CONFIG`` must name a real file.)"""
    path = folder / "settings-none.toml"
    path.touch()
    return str(path)
