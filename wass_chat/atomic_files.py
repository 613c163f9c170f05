"""Writing a file so that a failure never leaves it half-written (temp file, then rename).

Every command, the decision log, the plugin export and the app write through
:func:`write_atomic`; a report and its tables through :func:`write_together`. They live here,
below the CLI, so none of them imports the CLI.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from sim.errors import UserFacingError


class OutputError(UserFacingError):
    """A file that cannot be written where the user asked (a missing or read-only directory, a
    file in the way, a full disk): one line and exit code 2, like any bad input."""

    def __init__(self, path: Path, cause: OSError) -> None:
        self.path = path
        super().__init__(f"cannot write {path}: {cause.strerror or cause}")


def write_atomic(path: Path, content: str | bytes, durable: bool = False) -> None:
    """Write a file so that a failure never leaves it half-written (temp file + rename).

    Any operating-system error (raised as :class:`OutputError`) leaves nothing behind. With
    ``durable``, the content and the rename are on disk (fsync of the file and its folder)
    before this returns: what a record written before acting on the cluster needs.
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
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
        if durable:
            folder = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(path, exc) from exc
        raise


def require_folder(path: Path) -> None:
    """Raise :class:`OutputError` unless ``path`` can be created in its folder as it stands.

    The folder must already exist, be a folder and be writable: a report is never the reason a
    folder appears (``-o /nonexistent/dir/x.html`` is a typo, not a request). Called before any
    work, so a wrong path costs one line, not a report's build time.
    """
    path = Path(path)
    folder = path.parent
    problem: OSError
    if not folder.exists():
        problem = FileNotFoundError(errno.ENOENT, f"the folder {folder} does not exist")
    elif not folder.is_dir():
        problem = NotADirectoryError(errno.ENOTDIR, f"{folder} is not a folder")
    elif not os.access(folder, os.W_OK | os.X_OK):
        problem = PermissionError(errno.EACCES, f"the folder {folder} is not writable")
    elif path.is_dir():
        problem = IsADirectoryError(errno.EISDIR, f"{path} is a folder")
    else:
        return
    raise OutputError(path, problem)


def write_together(files: Mapping[Path, str | bytes]) -> None:
    """Write several files so that a failure while writing leaves none of them, whole or partial.

    Each file is first written to a temporary name beside it; only when every one is written are
    they renamed onto their names, in the mapping's order (put a page that links to the others
    last; a rename within one folder does not run out of space). A file's folder is created when
    its parent exists (a report's ``_tables/`` next to it) and removed again on failure; a
    deeper missing folder is an error. Any operating-system error is raised as
    :class:`OutputError` for the file concerned, after every temporary file (and folder made
    here) is removed.
    """
    made: list[Path] = []
    staged: list[tuple[str, Path]] = []
    current = Path()
    try:
        for path, content in files.items():
            current = Path(path)
            if not current.parent.is_dir():
                current.parent.mkdir()  # one level only: its parent must exist
                made.append(current.parent)
            fd, tmp = tempfile.mkstemp(
                dir=current.parent, prefix=f".{current.name}.", suffix=".tmp"
            )
            staged.append((tmp, current))
            with os.fdopen(fd, "wb") as fh:
                fh.write(content.encode() if isinstance(content, str) else content)
        for tmp, path in staged:
            current = path
            os.replace(tmp, path)
    except BaseException as exc:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        for folder in reversed(made):
            with contextlib.suppress(OSError):  # not empty: a file was already renamed there
                folder.rmdir()
        if isinstance(exc, OSError):
            raise OutputError(current, exc) from exc
        raise
