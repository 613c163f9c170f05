"""Digest of the compiled core's C sources (sim/csrc/), shared by setup.py and sim.fast.

setup.py compiles it into the extension; :mod:`sim.fast` compares it with the sources at import,
so a core built from older sources is never used. Standard library only: setup.py runs it
before the package's dependencies exist.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

SOURCES = Path(__file__).parent / "csrc"


def source_hash(directory: Path = SOURCES) -> str:
    """First 16 hex digits of the SHA-256 over the sorted ``*.c``/``*.h`` files' names and bytes."""
    digest = hashlib.sha256()
    for path in sorted(directory.glob("*.[ch]")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]
