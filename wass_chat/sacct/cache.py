"""The local sacct cache: Parquet files partitioned by submission month, one job per JobID.

Layout under ``Settings().sacct_dir``::

    month=2024-03/jobs.parquet   jobs submitted in March 2024 (all columns of parse.schema())
    month=unknown/jobs.parquet   jobs whose submission time could not be read
    imports.json                 one record per import: source, window, lines, malformed lines

Every row says where it came from (column ``source``: ``sacct`` for a live import,
``file:<name>`` for an export, ``synthetic`` for generated data), so a report can say which
sources its period mixes.

Re-importing an overlapping window replaces the earlier rows of the same JobID (the newer import
wins: a job seen RUNNING, then COMPLETED, is stored once, COMPLETED).

What an import may meet, and what the cache does (issue #45: 8 parallel imports kept 31,982 of
40,000 jobs; one far-future row, one truncated month file or a kill during an import broke every
later command):

- **Concurrent writers** take an exclusive lock (``.lock``, ``flock``) for the whole
  read-merge-write, so parallel imports all land, one after the other.
- **Whole or nothing.** Every month file and the new import log are first written under
  temporary names (fsync'd), then a manifest naming them (``.pending-import.json``), then they
  are renamed into place and the manifest removed. A process killed before the manifest leaves
  the old cache (and stray temporary files, removed by the next writer); killed after it, the
  next command that opens the cache finishes the renames (roll forward). Either way the cache
  holds the import together with its record, or neither.
- **A damaged month file** (truncated, not Parquet) is named in a :class:`CacheDamaged` error
  (one line, exit 2) by every reader, saying how to rebuild it; an import of that month moves it
  aside (``jobs.parquet.damaged``) and writes the month from what it imports.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path

import polars as pl

from sim.atomic_files import OutputError, fsync_folder, write_atomic
from sim.errors import InputError
from wass_chat.sacct.parse import empty_jobs, schema

UNKNOWN_MONTH = "unknown"
_TUPLES = ("malformed_examples", "malformed_lines", "unknown_columns", "out_of_range_examples")
"""ImportRecord fields stored as JSON lists."""
_PARQUET = "jobs.parquet"
_IMPORTS = "imports.json"
_LOCK = ".lock"
_MANIFEST = ".pending-import.json"


class CacheDamaged(InputError):
    """A month file of the cache cannot be read; the message says how to rebuild it."""

    def __init__(self, path: Path, why: str) -> None:
        month = path.parent.name.removeprefix("month=")
        if month == UNKNOWN_MONTH:
            fix = "delete it or re-import the export it came from"
        else:
            fix = (
                f"re-import that month (wass-chat sacct import --start {month}-01 ...) or the "
                "export it came from; the import moves the damaged file aside"
            )
        super().__init__(str(path), [f"the sacct cache's month {month} is damaged ({why}): {fix}"])
        self.path = path


@dataclass(frozen=True)
class ImportRecord:
    """What one import read and wrote; the report shows the malformed counts of its period."""

    source: str
    imported_at: str
    start: str | None
    end: str | None
    lines: int
    malformed: int
    rows_written: int
    malformed_examples: tuple[str, ...] = ()
    bad_values: dict[str, int] = field(default_factory=dict)
    bad_value_examples: dict[str, str] = field(default_factory=dict)
    malformed_lines: tuple[int, ...] = ()
    layout: str = ""
    """How the export was read: columns, delimiter, header (files only)."""
    unknown_columns: tuple[str, ...] = ()
    """The export's columns the product does not read."""
    out_of_range: int = 0
    """Rows skipped because a time in them lies outside the sane range (``ingest.SANE_SINCE``
    to a year from the import): ``Submit=9999-12-31T23:59:59`` broke every later summary."""
    out_of_range_examples: tuple[str, ...] = ()
    """A few of them, as ``JobID Field=value``."""


class SacctCache:
    """Read and write the month-partitioned job cache rooted at ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # --- writing ------------------------------------------------------------------------
    def write(self, jobs: pl.DataFrame, record: ImportRecord | None = None) -> int:
        """Merge ``jobs`` into the cache (newest row per JobID wins) and append ``record`` to
        the import log, together or not at all; returns rows written."""
        if jobs.is_empty() and record is None:
            return 0
        with self._locked():
            staged: dict[Path, Path] = {}
            try:
                if not jobs.is_empty():
                    keyed = jobs.with_columns(_month_key().alias("__month"))
                    for (month,), part in keyed.partition_by("__month", as_dict=True).items():
                        path = self._month_path(str(month))
                        merged = self._merged_month(path, part.drop("__month"))
                        staged[path] = _staged(path, partial(_write_parquet, merged))
                if record is not None:
                    records = [asdict(r) for r in self.imports()] + [asdict(record)]
                    text = json.dumps(records, indent=1)
                    log = self.root / _IMPORTS
                    staged[log] = _staged(log, lambda tmp: Path(tmp).write_text(text))
                self._commit(staged)
            except BaseException:
                for tmp in staged.values():
                    tmp.unlink(missing_ok=True)
                raise
        return jobs.height

    def record_import(self, record: ImportRecord) -> None:
        """Append ``record`` to the import log."""
        self.write(empty_jobs(), record)

    def _merged_month(self, path: Path, fresh: pl.DataFrame) -> pl.DataFrame:
        """``fresh`` merged over the month's cached rows; a damaged month file is moved aside
        (its rows cannot be read) and the month rebuilt from ``fresh``."""
        if path.exists():
            try:
                fresh = pl.concat([self._read_month(path), fresh], how="vertical_relaxed")
            except CacheDamaged:
                os.replace(path, path.with_name(f"{_PARQUET}.damaged"))
        return fresh.unique(subset="job_id", keep="last", maintain_order=True)

    # --- the lock and the manifest --------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the cache's exclusive lock; finish an interrupted import first."""
        try:  # a read-only data home: one line, not a traceback
            self.root.mkdir(parents=True, exist_ok=True)
            lock = open(self.root / _LOCK, "a")  # noqa: SIM115 (closed by the with below)
        except OSError as exc:
            raise OutputError(self.root / _LOCK, exc) from exc
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._roll_forward()
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _commit(self, staged: dict[Path, Path]) -> None:
        """Record the staged files in the manifest, then rename each into place."""
        if not staged:
            return
        manifest = self.root / _MANIFEST
        moves = [[str(tmp), str(path)] for path, tmp in staged.items()]
        write_atomic(manifest, json.dumps(moves))  # fsync'd, folder too
        self._roll_forward()

    def _roll_forward(self) -> None:
        """Finish the renames a manifest names (an import killed after staging), then drop
        the manifest; temporary files of an import killed before it are removed."""
        manifest = self.root / _MANIFEST
        if manifest.exists():
            try:
                moves = json.loads(manifest.read_text())
            except (OSError, ValueError):
                moves = []  # written whole or not at all (temp + rename): not ours if broken
            for tmp, path in moves:
                if Path(tmp).exists():
                    os.replace(tmp, path)
                    fsync_folder(Path(path).parent)
            manifest.unlink()
            fsync_folder(self.root)
        for stray in self._strays():
            stray.unlink(missing_ok=True)

    def _recover_if_interrupted(self) -> None:
        """Readers finish an interrupted import too (under the lock, so after any import in
        progress), so none reads half of one. A reader that may not write the cache (another
        user's, a read-only home) reads it as it is."""
        if not (self.root / _MANIFEST).exists() and not self._strays():
            return
        try:
            with self._locked():
                pass
        except PermissionError:
            return

    def _strays(self) -> list[Path]:
        """Temporary files an interrupted import left behind (only while none is running:
        callers hold the lock, or take it before removing them)."""
        return [
            *self.root.glob(".*.tmp"),
            *self.root.glob(f"month=*/.{_PARQUET}.*.tmp"),
        ]

    # --- reading ------------------------------------------------------------------------
    def months(self) -> list[str]:
        """Partition keys present, oldest first (``unknown`` last)."""
        keys = sorted(
            p.parent.name.removeprefix("month=") for p in self.root.glob(f"month=*/{_PARQUET}")
        )
        return sorted(keys, key=lambda k: (k == UNKNOWN_MONTH, k))

    def scan(self, until: datetime | None = None) -> pl.LazyFrame:
        """All cached jobs as a lazy frame; with ``until``, months after it are not read.

        Raises :class:`CacheDamaged` naming a month file that cannot be read."""
        self._recover_if_interrupted()
        keys = self.months()
        if until is not None:
            last = until.strftime("%Y-%m")
            keys = [k for k in keys if k == UNKNOWN_MONTH or k <= last]
        paths = [self._month_path(k) for k in keys]
        if not paths:
            return empty_jobs().lazy()
        for path in paths:
            _check_readable(path)
        # Months written before a column existed (the usage fields, NTasks, source) read it as
        # null; TotalCPU was whole seconds (Int64) before its fractions were kept.
        return pl.scan_parquet(
            paths,
            schema=schema(),
            missing_columns="insert",
            extra_columns="ignore",
            cast_options=pl.ScanCastOptions(integer_cast="allow-float"),
        ).select(list(schema()))

    def imports(self) -> list[ImportRecord]:
        """The import log, oldest first."""
        path = self.root / _IMPORTS
        if not path.exists():
            return []
        return [
            ImportRecord(
                **{
                    **r,
                    **{k: tuple(r.get(k, ())) for k in _TUPLES},
                }
            )
            for r in json.loads(path.read_text())
        ]

    def sources(self, jobs: pl.LazyFrame | None = None) -> dict[str, int]:
        """Allocation rows per source (``sacct``, ``file:<name>``, ``synthetic``, ``unknown``
        for rows imported before sources were recorded), most first."""
        frame = self.scan() if jobs is None else jobs
        counts = (
            frame.filter(~pl.col("is_step"))
            .group_by(pl.col("source").fill_null("unknown"))
            .len()
            .sort("len", descending=True)
            .collect()
        )
        return dict(counts.rows())

    def _read_month(self, path: Path) -> pl.DataFrame:
        """One month file in today's schema (columns it predates are null)."""
        try:
            frame = pl.read_parquet(path)
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise CacheDamaged(path, _short(exc)) from exc
        return frame.select(
            pl.col(name).cast(dtype) if name in frame.columns else pl.lit(None, dtype).alias(name)
            for name, dtype in schema().items()
        )

    def _month_path(self, month: str) -> Path:
        return self.root / f"month={month}" / _PARQUET


def _check_readable(path: Path) -> None:
    """Raise :class:`CacheDamaged` if ``path``'s Parquet footer cannot be read (a truncated or
    overwritten file); reading the footer costs microseconds, the rows are not read."""
    try:
        pl.read_parquet_schema(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise CacheDamaged(path, _short(exc)) from exc


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:160] if text else type(exc).__name__


def _staged(path: Path, write: Callable[[str], object]) -> Path:
    """``write(tmp)`` into a temporary file beside ``path``, fsync'd; returns the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _write_parquet(frame: pl.DataFrame, path: str) -> None:
    frame.write_parquet(path, compression="lz4")


def _month_key() -> pl.Expr:
    when = pl.coalesce("submit", "eligible", "start", "end")
    return when.dt.strftime("%Y-%m").fill_null(UNKNOWN_MONTH)
