"""A typed jobs table -> ``sacct -P -n`` text, exactly as Slurm 22.05 prints it.

The inverse of :mod:`wass_chat.sacct.parse`: synthetic data is written in sacct's own format so
the benchmark times the real import path, and the parser's round trip can be tested. Every
conversion is a column expression.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from wass_chat.sacct.fields import FIELDS, SacctField
from wass_chat.sacct.parse import TIMESTAMP_FORMAT


def render_sacct_lines(jobs: pl.DataFrame) -> pl.Series:
    """One ``|``-separated line per row, fields in :data:`~wass_chat.sacct.fields.FIELDS` order."""
    columns = [_render(f).fill_null("") for f in FIELDS]
    return jobs.select(pl.concat_str(columns, separator="|").alias("line")).to_series()


def write_sacct_file(jobs: pl.DataFrame, path: Path, chunk_rows: int = 250_000) -> int:
    """Write ``jobs`` as a ``sacct -P -n`` export; returns the number of lines written."""
    with Path(path).open("w", encoding="utf-8") as out:
        for offset in range(0, jobs.height, chunk_rows):
            lines = render_sacct_lines(jobs.slice(offset, chunk_rows))
            out.write("\n".join(lines.to_list()))
            out.write("\n")
    return jobs.height


def format_duration(seconds: pl.Expr) -> pl.Expr:
    """Seconds -> ``HH:MM:SS``, or ``D-HH:MM:SS`` from one day on (Slurm's own layout)."""
    days = seconds // 86400
    rest = seconds % 86400

    def two(e: pl.Expr) -> pl.Expr:
        return e.cast(pl.String).str.zfill(2)

    hms = pl.concat_str(
        [two(rest // 3600), two((rest % 3600) // 60), two(rest % 60)], separator=":"
    )
    return (
        pl.when(days > 0)
        .then(pl.concat_str([days.cast(pl.String), pl.lit("-"), hms]))
        .otherwise(hms)
    )


def format_cpu_time(seconds: pl.Expr) -> pl.Expr:
    """CPU seconds as sacct prints TotalCPU: ``MM:SS.mmm`` under an hour (milliseconds kept),
    else as durations (whole seconds, as sacct drops the fraction there)."""
    millis = (seconds * 1000).round(0).cast(pl.Int64)
    short = pl.concat_str(
        [
            (millis // 60_000).cast(pl.String).str.zfill(2),
            pl.lit(":"),
            ((millis % 60_000) // 1000).cast(pl.String).str.zfill(2),
            pl.lit("."),
            (millis % 1000).cast(pl.String).str.zfill(3),
        ]
    )
    whole = seconds.floor().cast(pl.Int64)
    return pl.when(seconds < 3600).then(short).otherwise(format_duration(whole))


def format_memory(num_bytes: pl.Expr) -> pl.Expr:
    """Bytes -> ``<n>G`` when a whole number of GiB, else ``<n>M`` (whole MiB)."""
    gib = num_bytes // 2**30
    mib = (num_bytes / 2**20).round(0).cast(pl.Int64)
    return (
        pl.when((num_bytes % 2**30 == 0) & (num_bytes > 0))
        .then(pl.concat_str([gib.cast(pl.String), pl.lit("G")]))
        .otherwise(pl.concat_str([mib.cast(pl.String), pl.lit("M")]))
    )


def _render(f: SacctField) -> pl.Expr:
    match f.kind:
        case "text":
            return pl.col(f.column)
        case "int":
            return pl.col(f.column).cast(pl.String)
        case "timestamp":
            return pl.col(f.column).dt.strftime(TIMESTAMP_FORMAT).fill_null("Unknown")
        case "cpu_time":
            return format_cpu_time(pl.col(f.column))
        case "duration":
            text = format_duration(pl.col(f.column))
            if f.column == "timelimit_s":
                unlimited = pl.col("timelimit_unlimited").fill_null(False)
                return pl.when(unlimited).then(pl.lit("UNLIMITED")).otherwise(text)
            return text
        case "memory":
            if f.column == "max_rss_bytes":  # sacct prints usage in KiB: 10436K
                kib = (pl.col(f.column) // 2**10).cast(pl.String)
                return pl.when(pl.col(f.column) == 0).then(pl.lit("0")).otherwise(kib + "K")
            return format_memory(pl.col(f.column))
        case "state":
            by = pl.concat_str([pl.lit(" by "), pl.col("cancelled_by").cast(pl.String)])
            return pl.concat_str([pl.col("state"), by.fill_null("")])
        case "exit_code":
            return pl.concat_str(
                [pl.col("exit_status").cast(pl.String), pl.col("exit_signal").cast(pl.String)],
                separator=":",
            )
    raise AssertionError(f"unhandled field kind {f.kind}")
