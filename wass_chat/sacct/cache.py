"""The local sacct cache: Parquet files partitioned by submission month, one job per JobID.

Layout under ``Settings().sacct_dir``::

    month=2024-03/jobs.parquet   jobs submitted in March 2024 (all columns of parse.schema())
    month=unknown/jobs.parquet   jobs whose submission time could not be read
    imports.json                 one record per import: source, window, lines, malformed lines

Every row says where it came from (column ``source``: ``sacct`` for a live import,
``file:<name>`` for an export, ``synthetic`` for generated data), so a report can say which
sources its period mixes.

Re-importing an overlapping window replaces the earlier rows of the same JobID (the newer import
wins: a job seen RUNNING, then COMPLETED, is stored once, COMPLETED). Every file is written to a
temporary name and renamed into place, so an interrupted import leaves the previous cache intact.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path

import polars as pl

from wass_chat.sacct.parse import empty_jobs, schema

UNKNOWN_MONTH = "unknown"
_TUPLES = ("malformed_examples", "malformed_lines", "unknown_columns")
"""ImportRecord fields stored as JSON lists."""
_PARQUET = "jobs.parquet"
_IMPORTS = "imports.json"


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


class SacctCache:
    """Read and write the month-partitioned job cache rooted at ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # --- writing ------------------------------------------------------------------------
    def write(self, jobs: pl.DataFrame) -> int:
        """Merge ``jobs`` into the cache (newest row per JobID wins); returns rows written."""
        if jobs.is_empty():
            return 0
        keyed = jobs.with_columns(_month_key().alias("__month"))
        for (month,), part in keyed.partition_by("__month", as_dict=True).items():
            path = self._month_path(str(month))
            fresh = part.drop("__month")
            if path.exists():
                fresh = pl.concat([self._read_month(path), fresh], how="vertical_relaxed")
            merged = fresh.unique(subset="job_id", keep="last", maintain_order=True)
            replace_atomically(path, partial(_write_parquet, merged))
        return jobs.height

    def record_import(self, record: ImportRecord) -> None:
        """Append ``record`` to the import log."""
        records = [asdict(r) for r in self.imports()] + [asdict(record)]
        text = json.dumps(records, indent=1)
        replace_atomically(self.root / _IMPORTS, lambda tmp: Path(tmp).write_text(text))

    # --- reading ------------------------------------------------------------------------
    def months(self) -> list[str]:
        """Partition keys present, oldest first (``unknown`` last)."""
        keys = sorted(
            p.parent.name.removeprefix("month=") for p in self.root.glob(f"month=*/{_PARQUET}")
        )
        return sorted(keys, key=lambda k: (k == UNKNOWN_MONTH, k))

    def scan(self, until: datetime | None = None) -> pl.LazyFrame:
        """All cached jobs as a lazy frame; with ``until``, months after it are not read."""
        keys = self.months()
        if until is not None:
            last = until.strftime("%Y-%m")
            keys = [k for k in keys if k == UNKNOWN_MONTH or k <= last]
        paths = [self._month_path(k) for k in keys]
        if not paths:
            return empty_jobs().lazy()
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
        frame = pl.read_parquet(path)
        return frame.select(
            pl.col(name).cast(dtype) if name in frame.columns else pl.lit(None, dtype).alias(name)
            for name, dtype in schema().items()
        )

    def _month_path(self, month: str) -> Path:
        return self.root / f"month={month}" / _PARQUET


def _write_parquet(frame: pl.DataFrame, path: str) -> None:
    frame.write_parquet(path, compression="lz4")


def _month_key() -> pl.Expr:
    when = pl.coalesce("submit", "eligible", "start", "end")
    return when.dt.strftime("%Y-%m").fill_null(UNKNOWN_MONTH)


def replace_atomically(path: Path, write: Callable[[str], object]) -> None:
    """Run ``write(tmp_path)`` then rename the temporary file onto ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
