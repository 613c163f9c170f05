"""Bring the cache up to date for a period before answering a question about it.

Questions about history ("how busy was the cluster last week?") are answered from the local
cache; :func:`refresh_period` first imports the period from a reachable Slurm, month by month
(:func:`~wass_chat.sacct.ingest.ingest_slurm`), unless an earlier import already covers it and
was made after the period ended (accounting of a closed period does not change). Without
Slurm the answer comes from the cache as it is, and the note says so; with neither, a one-line
:class:`~sim.errors.ServiceUnavailable`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sim.errors import ServiceUnavailable
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.ingest import ChunkProgress, ingest_slurm

DEFAULT_SPAN = timedelta(days=7)


def covered(cache: SacctCache, start: datetime, end: datetime) -> bool:
    """An import from sacct spans ``[start, end)`` and was made after ``end``."""
    for record in cache.imports():
        if record.source != "sacct" or not record.start or not record.end:
            continue
        made = datetime.fromisoformat(record.imported_at)
        if (
            datetime.fromisoformat(record.start) <= start
            and datetime.fromisoformat(record.end) >= end
            and made >= end
        ):
            return True
    return False


def refresh_period(
    cache: SacctCache,
    start: datetime | None,
    end: datetime | None,
    now: datetime | None = None,
    progress: ChunkProgress | None = None,
) -> str:
    """Import ``[start, end)`` from Slurm when needed; returns a note for the answer ('' when
    the cache is fresh). ``start=None`` means a week before ``end``."""
    now = now or datetime.now()
    end = min(end or now, now)
    start = start or end - DEFAULT_SPAN
    if start >= end or covered(cache, start, end):
        return ""
    try:
        record = ingest_slurm(cache, start, end, progress)
    except ServiceUnavailable as exc:
        if not cache.months():
            raise ServiceUnavailable(
                f"no accounting data: Slurm is unreachable ({exc.one_line()}) and the local "
                "cache is empty (import a file with `wass-chat sacct import --from-file`)"
            ) from exc
        return f"answered from the local cache: {exc.one_line()}"
    return f"imported {record.rows_written} jobs of this period from sacct"
