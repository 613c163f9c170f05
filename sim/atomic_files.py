"""Writing a file so that a failure never leaves it half-written (temp file, then rename).

Every package writes through here: :func:`write_atomic` (our own files, whose folder it creates:
the decision log, checkpoints, array plans and scripts), :func:`write_output` (a file a person
named with ``-o``/``--output``, whose folder must exist), :func:`write_together` (a report and
its tables) and :func:`publish` (a file built in place by a streaming writer, such as an SQLite
shard or a backup, moved into place whole). They live on the lowest floor (``sim``) so that
``sim``, ``policy``, ``kb`` and ``wass_chat`` share one writer.

All of them write only regular files: the content goes to a temporary file in the same folder,
is flushed to disk (``fsync``) and renamed onto the name, and the folder is fsync'd, so a reader
sees the old file or the new one, never a part, even after a crash of the machine. A writer
killed midway (SIGKILL) cannot remove its temporary file; its name carries the host and the
process id (``.NAME.HOST.PID.XXXX.tmp``), and the next write of that name on that host removes
the temporary files of processes that are gone. A name that is a symlink, a device, a FIFO, a
socket or a folder is refused and left as it is: ``-o /dev/null`` run as root would otherwise
replace the system's device with a file, and a symlink would be swapped for a copy
(:func:`check_replaceable`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from sim.errors import UserFacingError

DEFAULT_MODE = 0o666
"""A new file's permissions before the umask, as ``open()`` would create it (``mkstemp``'s
temporary file is 0600, which a report meant to be shared must not keep)."""


class OutputError(UserFacingError):
    """A file that cannot be written where the user asked (a missing or read-only directory, a
    file in the way, a full disk): one line and exit code 2, like any bad input."""

    def __init__(self, path: Path, cause: OSError) -> None:
        self.path = path
        super().__init__(f"cannot write {path}: {cause.strerror or cause}")


_SPECIAL_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def check_replaceable(path: Path) -> int | None:
    """Raise :class:`OutputError` unless ``path`` is absent or a regular file (not followed
    through a symlink); returns the existing file's permission bits, None when there is none."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(path, exc) from exc
    for is_kind, kind in _SPECIAL_KINDS:
        if is_kind(info.st_mode):
            problem = OSError(errno.EEXIST, f"{path} is {kind}; only a regular file is replaced")
            raise OutputError(path, problem)
    return stat.S_IMODE(info.st_mode)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temp_prefix(path: Path) -> str:
    """The start of this process's temporary files for ``path`` (host and pid in the name)."""
    return f".{path.name}.{socket.gethostname()}.{os.getpid()}."


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: alive
        return False
    return False


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Delete the temporary files of ``path`` left by writers on this host that are gone (a
    writer killed midway); returns them. Another host's, or a live writer's, are left alone."""
    start = f".{path.name}.{socket.gethostname()}."
    removed = []
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        for entry in entries:
            pid = entry.name.removeprefix(start).split(".", 1)[0]
            ours = entry.name.startswith(start) and entry.name.endswith(".tmp")
            if ours and pid.isdigit() and _gone(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def _temporary(path: Path) -> tuple[int, str]:
    """A new temporary file beside ``path`` (stale ones removed first): its fd and name."""
    remove_stale_temporaries(path)
    return tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")


def _replace_by(path: Path, fill: Callable[[Path], object], new_mode: int | None = None) -> None:
    """Have ``fill`` write a temporary file beside ``path`` (by its name), fsync it, give it
    ``new_mode`` or else the old file's mode (or a new file's), rename it onto ``path`` and
    fsync the folder. Leaves nothing behind on failure; raises :class:`OutputError` for any
    operating-system error."""
    mode = check_replaceable(path)
    if new_mode is not None:
        mode = new_mode
    try:
        fd, tmp = _temporary(path)
        os.close(fd)
    except OSError as exc:
        raise OutputError(path, exc) from exc
    try:
        fill(Path(tmp))
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, mode if mode is not None else DEFAULT_MODE & ~_umask())
        check_replaceable(path)  # still not a special file (it may have appeared meanwhile)
        os.replace(tmp, path)
        fsync_folder(path.parent)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(path, exc) from exc
        raise


def _replace_with(path: Path, content: str | bytes, new_mode: int | None = None) -> None:
    data = content.encode() if isinstance(content, str) else content
    _replace_by(path, lambda tmp: tmp.write_bytes(data), new_mode)


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: some filesystems refuse a folder fd)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, content: str | bytes, mode: int | None = None) -> None:
    """Write one of our own files (a run log, a saved conversation), creating its folder;
    ``mode``: its permission bits (default: the old file's, else a new file's).

    Only a regular file is written or replaced (see the module docstring); any operating-system
    error (raised as :class:`OutputError`) leaves nothing behind.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(path, exc) from exc
    _replace_with(path, content, mode)


def publish(partial: Path, final: Path) -> Path:
    """Move ``partial`` (a file a streaming writer built, closed) into place as ``final``:
    flushed to disk, renamed, the folder fsync'd, so the rename survives a crash of the node and
    a reader sees no part of it before. Returns ``final``; raises :class:`OutputError`."""
    try:
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, final)
    except OSError as exc:
        raise OutputError(final, exc) from exc
    fsync_folder(final.parent)
    return final


def write_output(path: Path, content: str | bytes) -> None:
    """Write a file a person named (``-o``/``--output``): its folder must exist, and only a
    regular file is written or replaced (never a symlink, device, FIFO, socket or folder).

    Raises :class:`OutputError` (one line, exit code 2) and leaves ``path`` untouched otherwise.
    """
    path = Path(path)
    require_folder(path)
    _replace_with(path, content)


def write_output_by(path: Path, fill: Callable[[Path], object]) -> None:
    """:func:`write_output` for a library that writes a file by its name (polars' Parquet,
    SQLite): ``fill(tmp)`` writes the temporary file, which then replaces ``path`` whole."""
    path = Path(path)
    require_folder(path)
    _replace_by(path, fill)


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
    else:
        check_replaceable(path)  # a symlink, device, FIFO, socket or folder in the way
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
    here) is removed. As with :func:`write_output`, only regular files are replaced: a name that
    is a symlink, device, FIFO, socket or folder fails the whole set before anything is written.
    """
    modes = {Path(path): check_replaceable(Path(path)) for path in files}
    made: list[Path] = []
    staged: list[tuple[str, Path]] = []
    current = Path()
    try:
        for path, content in files.items():
            current = Path(path)
            if not current.parent.is_dir():
                current.parent.mkdir()  # one level only: its parent must exist
                made.append(current.parent)
            fd, tmp = _temporary(current)
            staged.append((tmp, current))
            with os.fdopen(fd, "wb") as fh:
                fh.write(content.encode() if isinstance(content, str) else content)
                fh.flush()
                os.fsync(fh.fileno())
            mode = modes[current]
            os.chmod(tmp, mode if mode is not None else DEFAULT_MODE & ~_umask())
        for tmp, path in staged:
            current = path
            os.replace(tmp, path)
        for folder in {path.parent for _, path in staged}:
            fsync_folder(folder)
    except BaseException as exc:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        for folder in reversed(made):
            with contextlib.suppress(OSError):  # not empty: a file was already renamed there
                folder.rmdir()
        if isinstance(exc, OSError):
            raise OutputError(current, exc) from exc
        raise


def append_private_line(path: Path, line: str) -> None:
    """Append ``line`` to ``path`` in one ``write`` (``O_APPEND``), the file created readable
    by its owner only (mode 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)
