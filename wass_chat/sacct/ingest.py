"""Import accounting data into the cache, from a running Slurm or from a ``sacct -P`` file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

from sim.errors import InputError
from wass_chat.sacct.cache import ImportRecord, SacctCache
from wass_chat.sacct.fetch import fetch_sacct, month_windows, sacct_version
from wass_chat.sacct.parse import ParseResult, parse_sacct_file, parse_sacct_text

ChunkProgress = Callable[[int, int], None]
"""Called with (chunks done, chunks in total) during a Slurm import."""
SANE_SINCE = datetime(1990, 1, 1)
"""The earliest time a row may carry (Slurm was first released in 2002)."""
SANE_AHEAD = timedelta(days=366)
"""How far past the import a time may lie (clock skew, a begin time set ahead)."""
TIMES = ("submit", "eligible", "start", "end")


class NothingImportable(InputError):
    """An export from which no row could be read: the cache is left as it was."""


def ingest_file(
    cache: SacctCache,
    path: Path,
    delimiter: str | None = None,
    columns: Sequence[str] | None = None,
) -> ImportRecord:
    """Parse a ``sacct`` export (any layout, :mod:`.layout`) and merge it into ``cache``.

    Raises :class:`~wass_chat.sacct.layout.ExportLayoutError` when its columns cannot be
    told, and :class:`NothingImportable` when no line could be read; the cache is untouched
    then. Returns what was read and written, also appended to the import log.
    """
    result = parse_sacct_file(path, delimiter, columns)
    if result.jobs.is_empty():
        why = (
            f"none of its {result.lines:,} lines could be read ({_first(result)})"
            if result.lines
            else "it holds no job lines"
        )
        raise NothingImportable(str(path), [f"nothing imported: {why}"])
    return _store(cache, result, source=f"file:{Path(path).name}", start=None, end=None)


def _first(result: ParseResult) -> str:
    return result.malformed_examples[0] if result.malformed_examples else "no JobID"


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
    version = sacct_version()
    stamped = merged.jobs.with_columns(pl.lit(version, pl.String).alias("slurm_version"))
    merged = replace(merged, jobs=stamped)
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
        layout=results[0].layout,
    )


def _store(
    cache: SacctCache,
    result: ParseResult,
    source: str,
    start: datetime | None,
    end: datetime | None,
) -> ImportRecord:
    now = datetime.now()
    jobs, skipped, examples = _within_sane_times(result.jobs, now + SANE_AHEAD)
    record = ImportRecord(
        source=source,
        imported_at=now.isoformat(timespec="seconds"),
        start=start.isoformat() if start else None,
        end=end.isoformat() if end else None,
        lines=result.lines,
        malformed=result.malformed,
        rows_written=jobs.height,
        malformed_examples=result.malformed_examples,
        bad_values=result.bad_values,
        bad_value_examples=result.bad_value_examples,
        malformed_lines=result.malformed_lines,
        layout=result.layout,
        unknown_columns=result.unknown_columns,
        out_of_range=skipped,
        out_of_range_examples=examples,
    )
    cache.write(jobs.with_columns(pl.lit(source).alias("source")), record)
    return record


def _within_sane_times(
    jobs: pl.DataFrame, latest: datetime
) -> tuple[pl.DataFrame, int, tuple[str, ...]]:
    """The rows whose every time lies in [SANE_SINCE, latest], how many were not, and up to
    five of those as ``JobID Field=value``."""
    present = [c for c in TIMES if c in jobs.columns]
    bad = pl.any_horizontal(
        [pl.col(c).is_not_null() & ~pl.col(c).is_between(SANE_SINCE, latest) for c in present]
    )
    flagged = jobs.filter(bad) if present else jobs.clear()
    examples = []
    for row in flagged.head(5).iter_rows(named=True):
        field = next(
            c for c in present if row[c] is not None and not SANE_SINCE <= row[c] <= latest
        )
        examples.append(f"{row['job_id']} {field.capitalize()}={row[field].isoformat()}")
    kept = jobs.filter(~bad) if present else jobs
    return kept, flagged.height, tuple(examples)
