"""`make run` installs Python packages only; `make test` still installs the suite's system
packages (issue 31 item 5).

The first test runs the Makefile's real `run` recipe, prerequisites included, on a fresh
virtual environment, with stand-ins first on PATH for every Debian packaging command (apt-get,
apt, dpkg, dpkg-query, debootstrap, sudo) and for Python itself, each recording how it was
called. The stand-in Python makes a venv of stand-ins, so pip installs nothing and the app
launched at the end is a stand-in too: the test takes a second, and any step that reaches for
a Debian package (directly or through a script such as scripts/install-system-deps, which asks
dpkg-query first) is caught, as root or not.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.support import require

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ("apt-get", "apt", "aptitude", "dpkg", "dpkg-query", "debootstrap", "sudo")

RECORDER = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >> {log}
"""
FAKE_PYTHON = """#!/usr/bin/env bash
# Python's stand-in: records; `-m venv DIR` makes a venv whose python and wass-chat are stand-ins.
echo "python $*" >> {log}
if [[ "$1" == "-m" && "$2" == "venv" ]]; then
    mkdir -p "$3/bin"
    cp "$0" "$3/bin/python"
    cp {wass_chat} "$3/bin/wass-chat"
fi
"""


def _stand_ins(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A directory of recording stand-ins, the stand-in Python, and the log they write."""
    log = tmp_path / "calls.log"
    log.touch()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    recorder = RECORDER.format(log=log)
    for name in (*PACKAGING, "wass-chat"):
        path = bin_dir / name
        path.write_text(recorder)
        path.chmod(0o755)
    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON.format(log=log, wass_chat=bin_dir / "wass-chat"))
    python.chmod(0o755)
    return bin_dir, python, log


def test_make_run_installs_python_packages_only(tmp_path: Path) -> None:
    require(shutil.which("make") is not None, "GNU make is not installed")
    bin_dir, python, log = _stand_ins(tmp_path)
    venv = tmp_path / "venv"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["make", "-C", str(ROOT), "run", f"VENV={venv}", f"PYTHON={python}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    calls = log.read_text().splitlines()
    packaging = [c for c in calls if c.split()[0] in PACKAGING]
    assert packaging == [], f"make run used Debian's packaging: {packaging}"
    installs = [c for c in calls if " -m pip install " in c]
    assert any(c.endswith(" torch==2.13.0") for c in installs), installs
    assert any(c.endswith(" -e .") for c in installs), installs
    assert not any("[" in c for c in installs), f"make run installed test extras: {installs}"
    assert calls[-1] == "wass-chat "  # then it opens the app
    assert "no system package" in done.stdout  # and says what it installs


def test_make_test_still_installs_the_suites_system_packages(tmp_path: Path) -> None:
    require(shutil.which("make") is not None, "GNU make is not installed")
    done = subprocess.run(
        ["make", "-C", str(ROOT), "-n", "test", f"VENV={tmp_path / 'venv'}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    planned = done.stdout.splitlines()
    assert "scripts/install-system-deps" in planned
    assert any("-e '.[dev,llm]'" in line for line in planned)
    assert any("scripts/link-simgrid" in line for line in planned)
    suite = next(i for i, line in enumerate(planned) if "/bin/pytest " in line)
    assert planned.index("scripts/install-system-deps") < suite
