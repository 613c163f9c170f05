"""Writing a file so that a failure never leaves it half-written (temp file, then rename).

Every command, the decision log, the plugin export and the app write through
:func:`write_atomic`; it lives here, below the CLI, so none of them imports the CLI.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from sim.errors import UserFacingError


class OutputError(UserFacingError):
    """A file that cannot be written where the user asked (a missing or read-only directory, a
    file in the way, a full disk): one line and exit code 2, like any bad input."""

    def __init__(self, path: Path, cause: OSError) -> None:
        self.path = path
        super().__init__(f"cannot write {path}: {cause.strerror or cause}")


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write a file so that a failure never leaves it half-written (temp file + rename).

    Any operating-system error (raised as :class:`OutputError`) leaves nothing behind.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(path, exc) from exc
    mode = "wb" if isinstance(content, bytes) else "w"
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(content)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(path, exc) from exc
        raise
