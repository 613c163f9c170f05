"""Which Slurm backend to use, and why.

The commands backend (:class:`~wass_chat.slurm.commands.SlurmCommands`) is the default: it needs
nothing but Slurm's own binaries. pyslurm is a C binding tied to one Slurm release (PyPI ships
only 25.11, which needs Slurm 25.11; Debian 12 has 22.05), so it is used only when an importable
pyslurm matches the installed Slurm's major.minor. Until a pyslurm backend exists, a match is
reported and the commands backend still serves.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class BackendChoice:
    """The backend in use and a sentence saying why the others are not."""

    name: str
    slurm_version: str | None
    pyslurm_version: str | None
    reason: str


def installed_slurm_version() -> str | None:
    """``22.05.8`` from ``sinfo --version``, or None when Slurm is absent."""
    if shutil.which("sinfo") is None:
        return None
    done = subprocess.run(
        ["sinfo", "--version"], capture_output=True, text=True, timeout=10, check=False
    )
    match = re.search(r"(\d+\.\d+\.\d+)", done.stdout)
    return match.group(1) if match else None


def choose_backend() -> BackendChoice:
    """Detect pyslurm and Slurm and explain the choice (always ``commands`` today)."""
    slurm = installed_slurm_version()
    if importlib.util.find_spec("pyslurm") is None:
        return BackendChoice(
            "commands", slurm, None,
            "pyslurm is not installed (PyPI has only 25.11, which needs Slurm 25.11 headers); "
            "using sbatch/scontrol/squeue/sacct/scancel",
        )  # fmt: skip
    from importlib.metadata import PackageNotFoundError, version

    try:
        pyslurm = version("pyslurm")
    except PackageNotFoundError:
        pyslurm = "unknown"
    same_release = slurm is not None and pyslurm.split(".")[:2] == slurm.split(".")[:2]
    if not same_release:
        reason = (
            f"pyslurm {pyslurm} does not match Slurm {slurm or 'absent'} "
            "(pyslurm must match Slurm's major.minor); using the Slurm commands"
        )
    else:
        reason = (
            f"pyslurm {pyslurm} matches Slurm {slurm}, but the commands backend is the tested "
            "one; using the Slurm commands"
        )
    return BackendChoice("commands", slurm, pyslurm, reason)
