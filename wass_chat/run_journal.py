"""The submission journal: each sbatch of a run on disk before the next one starts.

A run's record (:mod:`wass_chat.runlog`) is written before the first sbatch, in state
``submitting``. While the jobs go in, a journal beside it (``<run_id>.jobs``) gets one JSON line
per step, each fsync'd before the step after it:

* ``{"sbatch": TASK, "at": T}``: TASK's job is about to be submitted (written before sbatch
  runs, at Unix time T: an sbatch that gives no answer can still be taken in for a while);
* ``{"job": TASK, "id": ID}``: sbatch returned ID;
* ``{"refused": TASK}``: sbatch answered with an error (Slurm made no job);
* ``{"stop": REASON}``: the submission stopped there (sbatch refused, Slurm did not answer);
* ``{"done": true}``: every job was submitted.

So a process killed at any point leaves a journal that names every job it may have submitted: a
task with ``sbatch`` but no ``job`` line is one Slurm may hold (``runs``/``status``/``cancel``
look for it by its job name, :mod:`wass_chat.slurm.recovery`). The journal's space is reserved
(written as zeros and fsync'd) before the first sbatch, so a disk that fills up meanwhile (the
jobs' own output files are under the same home) cannot stop a line from being written; if the
reservation fails, nothing is submitted. A copy-on-write filesystem (btrfs, ZFS) may still need
new blocks to overwrite them: there the guarantee is only that nothing is submitted unrecorded
before the first failed write.

The submitter holds an exclusive ``flock`` on the journal while it works (the lock goes with the
process, even one killed by SIGKILL): a reader that can take it knows the submission is no longer
running (``interrupted`` unless the journal says ``done`` or ``stop``). Once the submission ends,
the record is rewritten with the job ids and its final state, and the journal removed; if that
rewrite fails, the journal stays and readers merge it into the record.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from sim.atomic_files import OutputError, fsync_folder

JOURNAL_SUFFIX = ".jobs"
STOP_REASON_BYTES = 2048
"""Room reserved for the ``stop`` line's reason; a longer one is cut."""
LONGEST_JOB_ID = "9" * 20
LATEST_TIME = 9_999_999_999


@dataclass(frozen=True)
class JournalState:
    """What a journal says: the jobs submitted, the tasks attempted, how the submission ended."""

    jobs: dict[str, str]
    """Task -> job id, for every sbatch that returned one."""
    attempted: tuple[str, ...]
    """Tasks whose sbatch started, in order."""
    refused: frozenset[str]
    """Tasks whose sbatch answered with an error: no job."""
    stopped: str | None
    """Why the submission stopped early (None: it did not say)."""
    done: bool
    """Every job was submitted."""
    live: bool
    """A process is still submitting (it holds the journal's lock)."""
    attempted_at: dict[str, float] = field(default_factory=dict)
    """Task -> the Unix time its sbatch began (journals written before it was kept lack it)."""

    @property
    def uncertain(self) -> tuple[str, ...]:
        """Tasks whose sbatch started but returned no job id: Slurm may or may not hold them."""
        return tuple(t for t in self.attempted if t not in self.jobs and t not in self.refused)

    @property
    def state(self) -> str:
        """The run's state as this journal shows it."""
        if self.done:
            return "submitted"
        if self.stopped is not None:
            return "partly submitted"
        return "submitting" if self.live else "interrupted"


def journal_path(record_path: Path) -> Path:
    """The journal beside a run record (``RUN.json`` -> ``RUN.jobs``)."""
    return record_path.with_suffix(JOURNAL_SUFFIX)


def _line(entry: dict[str, Any]) -> bytes:
    return (json.dumps(entry, separators=(",", ":")) + "\n").encode()


class SubmissionJournal:
    """The journal of one submission, open and locked; every write is on disk when it returns.

    Use as a context manager: on leaving it the lock is released (the file stays until
    :meth:`remove`)."""

    def __init__(self, path: Path, tasks: list[str]) -> None:
        """Create the journal at ``path`` with room for every line ``tasks`` can need, locked.

        Raises :class:`~sim.atomic_files.OutputError` (nothing created) when the room
        cannot be reserved: then nothing may be submitted."""
        self.path = Path(path)
        size = sum(
            len(_line({"sbatch": t, "at": LATEST_TIME}))
            + len(_line({"job": t, "id": LONGEST_JOB_ID}))
            for t in tasks
        )
        size += max((len(_line({"refused": t})) for t in tasks), default=0)
        size += len(_line({"done": True})) + STOP_REASON_BYTES
        staging = self.path.with_name(f".{self.path.name}.new")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # unbuffered: each write reaches the file (or fails) when called, never at close
            fh = open(staging, "w+b", buffering=0)  # noqa: SIM115 - held for the submission
        except OSError as exc:
            raise OutputError(self.path, exc) from exc
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            if fh.write(b"\0" * size) != size:
                raise OSError(28, "No space left on device")
            os.fsync(fh.fileno())
            fh.seek(0)
            os.replace(staging, self.path)  # the lock is the inode's: held from the first look
            fsync_folder(self.path.parent)
        except OSError as exc:
            with contextlib.suppress(OSError):
                fh.close()
            staging.unlink(missing_ok=True)
            raise OutputError(self.path, exc) from exc
        self._fh: BinaryIO = fh
        self._room = size

    def __enter__(self) -> SubmissionJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def _write(self, entry: dict[str, Any]) -> None:
        data = _line(entry)
        if len(data) > self._room:
            raise OutputError(self.path, OSError(28, "the journal's reserved room is used up"))
        try:
            written = self._fh.write(data)
            if written != len(data):
                raise OSError(28, f"wrote {written} of {len(data)} bytes")
            os.fsync(self._fh.fileno())
        except OSError as exc:
            raise OutputError(self.path, exc) from exc
        self._room -= len(data)

    def attempting(self, task: str) -> None:
        """Before sbatch runs for ``task``."""
        self._write({"sbatch": task, "at": int(time.time())})

    def submitted(self, task: str, job_id: str) -> None:
        """The moment sbatch returned ``job_id`` for ``task``."""
        self._write({"job": task, "id": job_id})

    def refused(self, task: str) -> None:
        """sbatch answered ``task`` with an error: Slurm made no job."""
        self._write({"refused": task})

    def stopped(self, reason: str) -> None:
        """The submission stops early, for ``reason`` (cut to the room left)."""
        reason = reason[: STOP_REASON_BYTES - 64]
        self._write({"stop": reason})

    def done(self) -> None:
        """Every job was submitted."""
        self._write({"done": True})

    def remove(self) -> None:
        """Delete the journal once the run record holds everything it says."""
        self.path.unlink(missing_ok=True)


def submitter_alive(path: Path) -> bool:
    """Whether a process holds the journal's lock (is still submitting)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def read_journal(path: Path) -> JournalState | None:
    """The journal at ``path`` (None when there is none). A torn last line (a write cut by a
    kill) and the reserved zeros after the last line are not entries."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    written = raw.split(b"\0", 1)[0]
    jobs: dict[str, str] = {}
    attempted: list[str] = []
    attempted_at: dict[str, float] = {}
    refused: set[str] = set()
    stopped: str | None = None
    done = False
    for line in written.split(b"\n")[:-1]:  # the part after the last newline is torn
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if not isinstance(entry, dict):
                continue
            if isinstance(entry.get("sbatch"), str):
                attempted.append(entry["sbatch"])
                if isinstance(entry.get("at"), int | float):
                    attempted_at[entry["sbatch"]] = float(entry["at"])
            elif isinstance(entry.get("job"), str) and isinstance(entry.get("id"), str):
                jobs[entry["job"]] = entry["id"]
                if entry["job"] not in attempted:
                    attempted.append(entry["job"])
            elif isinstance(entry.get("refused"), str):
                refused.add(entry["refused"])
            elif isinstance(entry.get("stop"), str):
                stopped = entry["stop"]
            elif entry.get("done") is True:
                done = True
    return JournalState(
        jobs,
        tuple(attempted),
        frozenset(refused),
        stopped,
        done,
        submitter_alive(path),
        attempted_at,
    )
