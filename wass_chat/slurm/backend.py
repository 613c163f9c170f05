"""Which way wass-chat talks to Slurm, and why: the commands, or pyslurm when it could match.

pyslurm wraps libslurm's C API and must be built against the same Slurm release (its version is
the release's: pyslurm 25.11.x needs Slurm 25.11's headers and ``libslurmfull``). PyPI offers
only 25.11.x (and 17.x/18.x); Debian ships Slurm 22.05 (bookworm), 24.11 (trixie) and 26.05
(sid), none of which it builds against. :func:`choose_backend` names both versions, the Slurm
the commands run (``scontrol --version``) and pyslurm's if installed, and says why the commands
are used. wass-chat has no pyslurm code path yet: even a matching pair is reported, not used.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

from wass_chat.slurm.availability import (
    VERSION_TIMEOUT_S,
    SlurmVersion,
    conf_path_in_use,
    parse_version,
)


@dataclass(frozen=True)
class BackendChoice:
    """The backend in use, the two versions it was chosen from, and the reason in words."""

    backend: Literal["commands"]
    slurm_version: SlurmVersion | None
    pyslurm_version: str | None
    reason: str

    def line(self) -> str:
        """``Slurm 22.05.8 through its commands (pyslurm is not installed)``."""
        slurm = f"Slurm {self.slurm_version}" if self.slurm_version else "Slurm (version unknown)"
        return f"{slurm} through its commands ({self.reason})"


def installed_slurm_version() -> SlurmVersion | None:
    """The release of the Slurm commands on PATH, from ``scontrol --version``.

    ``scontrol`` parses a configuration even to print its version; without a usable one here,
    it is given a two-line stand-in (it is only parsed, never used to contact anyone)."""
    path, _ = conf_path_in_use()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="wass-slurm-version-") as scratch:
        if path is None or not path.is_file():
            stand_in = Path(scratch) / "slurm.conf"
            stand_in.write_text("ClusterName=probe\nSlurmctldHost=localhost\n")
            env["SLURM_CONF"] = str(stand_in)
        try:
            done = subprocess.run(
                ["scontrol", "--version"],
                capture_output=True,
                text=True,
                timeout=VERSION_TIMEOUT_S,
                env=env,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    return parse_version(done.stdout)


def installed_pyslurm_version() -> tuple[str | None, str]:
    """pyslurm's version if it is installed (without importing it), and whether it loads."""
    try:
        version = metadata.version("pyslurm")
    except metadata.PackageNotFoundError:
        return None, "pyslurm is not installed"
    try:
        __import__("pyslurm")
    except (ImportError, OSError) as exc:  # built against another libslurm, or none
        return version, f"pyslurm {version} is installed but does not load ({exc})"
    return version, f"pyslurm {version} loads"


def choose_backend(
    slurm: SlurmVersion | None = None, pyslurm: tuple[str | None, str] | None = None
) -> BackendChoice:
    """The commands, with the reason pyslurm is not used (both versions named)."""
    slurm = slurm if slurm is not None else installed_slurm_version()
    pyslurm_version, state = pyslurm if pyslurm is not None else installed_pyslurm_version()
    if pyslurm_version is None:
        reason = f"{state}; PyPI has only 25.11, which matches no Debian Slurm"
    elif slurm is None:
        reason = f"{state}, but the installed Slurm's version is unknown"
    elif _release(pyslurm_version) != slurm.release:
        reason = (
            f"{state} but is built for Slurm {'.'.join(pyslurm_version.split('.')[:2])}, "
            f"not {slurm.major}.{slurm.minor:02d}"
        )
    else:
        reason = f"{state} and matches, but wass-chat has no pyslurm code path yet"
    return BackendChoice("commands", slurm, pyslurm_version, reason)


def _release(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
        return int(parts[0]), int(parts[1])
    return None
