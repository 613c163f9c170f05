"""Run ``sacct`` for a time window, one calendar month at a time.

Month-sized requests keep each answer from slurmdbd bounded (large sites hold millions of jobs
a month) and line up with the cache's partitions. ``sacct`` is run from an argument list, never
through a shell, and inherits ``SLURM_CONF`` from the environment.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from sim.errors import ServiceUnavailable
from wass_chat.sacct.fields import FIELD_NAMES
from wass_chat.slurm.availability import ensure_slurm
from wass_chat.slurm.commands import unreachable_cause

SACCT_TIMEOUT_S = 600.0
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"


@dataclass(frozen=True, slots=True)
class SacctChunk:
    """The raw ``sacct -P -n`` text for one window."""

    start: datetime
    end: datetime
    text: str


def month_windows(start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """Split ``[start, end)`` at calendar-month boundaries."""
    windows: list[tuple[datetime, datetime]] = []
    cursor = start
    while cursor < end:
        year, month = (
            (cursor.year + 1, 1) if cursor.month == 12 else (cursor.year, cursor.month + 1)
        )
        boundary = min(datetime(year, month, 1), end)
        windows.append((cursor, boundary))
        cursor = boundary
    return windows


def supported_fields(helpformat: str) -> tuple[str, ...]:
    """Our curated fields that this ``sacct`` knows, from its ``--helpformat`` text.

    Slurm versions differ (22.05 has no ``Dependency`` field, for one); asking for an unknown
    field makes sacct fail, so we ask only for what it offers. The rest become null columns.
    """
    offered = {word.lower() for word in helpformat.split()}
    return tuple(name for name in FIELD_NAMES if name.lower() in offered)


def sacct_argv(start: datetime, end: datetime, fields: tuple[str, ...] = FIELD_NAMES) -> list[str]:
    """The ``sacct`` command line for every user's jobs active in ``[start, end)``.

    The header line is kept (no ``-n``): the parser maps columns by name.
    """
    return [
        "sacct",
        "-a",
        "-P",
        f"--format={','.join(fields)}",
        "-S",
        start.strftime(_TIME_FORMAT),
        "-E",
        end.strftime(_TIME_FORMAT),
    ]


def fetch_sacct(start: datetime, end: datetime) -> Iterator[SacctChunk]:
    """Yield the accounting text of ``[start, end)`` month by month.

    Raises :class:`ServiceUnavailable` (one line) when ``sacct`` is missing, hangs, or cannot
    reach slurmdbd.
    """
    ensure_slurm("sacct")  # a missing command or slurm.conf, named in one line, at once
    fields = supported_fields(_run(["sacct", "--helpformat"]).stdout)
    for chunk_start, chunk_end in month_windows(start, end):
        done = _run(sacct_argv(chunk_start, chunk_end, fields))
        yield SacctChunk(chunk_start, chunk_end, done.stdout)


def fetch_jobs(job_ids: Sequence[str]) -> str:
    """``sacct -P`` text (with its header) of the given jobs and their steps, whenever they ran.

    With ``-j`` sacct searches from the epoch, so no window is needed. Raises
    :class:`ServiceUnavailable` (one line) as :func:`fetch_sacct` does.
    """
    ensure_slurm("sacct")
    fields = supported_fields(_run(["sacct", "--helpformat"]).stdout)
    argv = ["sacct", "-a", "-P", f"--format={','.join(fields)}", "-j", ",".join(job_ids)]
    return _run(argv).stdout


def sacct_version() -> str | None:
    """The version of this ``sacct`` (``22.05.8``), None when it does not say: how a task's
    GPU usage is read depends on it (docs/analytics.md "GPU usage")."""
    words = _run(["sacct", "--version"]).stdout.split()
    return words[-1] if words else None


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run one sacct command; every failure becomes a one-line :class:`ServiceUnavailable`."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, errors="replace", timeout=SACCT_TIMEOUT_S
        )
    except subprocess.TimeoutExpired as exc:
        raise ServiceUnavailable(f"sacct gave no answer within {SACCT_TIMEOUT_S:.0f} s") from exc
    except OSError as exc:
        raise ServiceUnavailable(f"sacct could not be run: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.strip() or f"exit status {done.returncode}"
        raise ServiceUnavailable(f"sacct failed: {unreachable_cause(message)}")
    return done
