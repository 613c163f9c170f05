"""Import accounting data into the cache, from a running Slurm or from a ``sacct -P`` file."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import polars as pl

from wass_chat.sacct.cache import ImportRecord, SacctCache
from wass_chat.sacct.fetch import fetch_sacct, month_windows
from wass_chat.sacct.parse import ParseResult, parse_sacct_file, parse_sacct_text

ChunkProgress = Callable[[int, int], None]
"""Called with (chunks done, chunks in total) during a Slurm import."""


def ingest_file(cache: SacctCache, path: Path) -> ImportRecord:
    """Parse a ``sacct -P`` export and merge it into ``cache``; log and return what happened."""
    result = parse_sacct_file(path)
    return _store(cache, result, source=str(path), start=None, end=None)


def ingest_slurm(
    cache: SacctCache, start: datetime, end: datetime, progress: ChunkProgress | None = None
) -> ImportRecord:
    """Fetch ``[start, end)`` from ``sacct`` month by month and merge it into ``cache``."""
    total = len(month_windows(start, end))
    results: list[ParseResult] = []
    for done, chunk in enumerate(fetch_sacct(start, end), start=1):
        results.append(parse_sacct_text(chunk.text))
        if progress is not None:
            progress(done, total)
    merged = _merge(results)
    return _store(cache, merged, source="sacct", start=start, end=end)


def _merge(results: list[ParseResult]) -> ParseResult:
    """One result for several chunks: rows concatenated, counts summed, first examples kept."""
    if not results:
        return parse_sacct_text("")
    bad: dict[str, int] = {}
    bad_examples: dict[str, str] = {}
    for r in results:
        for name, count in r.bad_values.items():
            bad[name] = bad.get(name, 0) + count
            bad_examples.setdefault(name, r.bad_value_examples[name])
    return ParseResult(
        jobs=pl.concat([r.jobs for r in results]),
        lines=sum(r.lines for r in results),
        malformed=sum(r.malformed for r in results),
        malformed_examples=tuple(e for r in results for e in r.malformed_examples)[:5],
        bad_values=bad,
        bad_value_examples=bad_examples,
    )


def _store(
    cache: SacctCache,
    result: ParseResult,
    source: str,
    start: datetime | None,
    end: datetime | None,
) -> ImportRecord:
    written = cache.write(result.jobs)
    record = ImportRecord(
        source=source,
        imported_at=datetime.now().isoformat(timespec="seconds"),
        start=start.isoformat() if start else None,
        end=end.isoformat() if end else None,
        lines=result.lines,
        malformed=result.malformed,
        rows_written=written,
        malformed_examples=result.malformed_examples,
        bad_values=result.bad_values,
        bad_value_examples=result.bad_value_examples,
    )
    cache.record_import(record)
    return record
