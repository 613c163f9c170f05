"""What ``--slurm-array``, ``--array-dir``, ``--slurm-mem`` and ``--no-wait`` say, as a typed
config the CLI reads its defaults from (light: no Slurm code loads with it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

EVALUATE_MEMORY_MB = 2000
"""MB per task of `train evaluate --slurm-array` (a lookahead's workers each hold a network)."""


@dataclass(frozen=True)
class ArrayConfig:
    """How a command's work runs as a job array; the defaults are the CLI's."""

    tasks: int = 0
    """Array tasks the work is split into (``--slurm-array``); 0: run here, no array."""
    directory: Path | None = None
    """Shards and logs, on a filesystem the nodes share (``--array-dir``); None:
    ``WASS_HOME/arrays/KIND-DIGEST``."""
    memory_mb: int = 1000
    """MB each task asks for (``--slurm-mem``; :data:`EVALUATE_MEMORY_MB` for the evaluation)."""
    wait: bool = True
    """Watch the array until it ends; False submits and returns (``kb seed --no-wait``)."""
