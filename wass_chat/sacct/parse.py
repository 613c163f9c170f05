"""``sacct -P`` text -> a typed polars table, counting what cannot be read instead of failing.

Accounting exports are long, come in many layouts (:mod:`.layout`: any delimiter, any column
set and order, header or not) and are occasionally damaged (a delimiter inside a job name, a
truncated line, a value a newer Slurm prints differently). The parser never stops on them:

* a line with the wrong number of fields, or without a JobID, is *malformed*: it is dropped,
  counted with its line number, and a few are kept as examples;
* a value that cannot be read (a timestamp in an unknown format, say) becomes null and is counted
  per column in ``bad_values``; the rest of its line is kept.

Every conversion is a polars expression over the whole column (no Python loop over jobs), so
1.5 million lines parse in seconds. Formats are sacct's: timestamps ``YYYY-MM-DDTHH:MM:SS``
(``Unknown``/``None`` when unset; a space instead of the ``T`` is read too), durations
``[D-]HH:MM:SS`` (``MM:SS.mmm`` for short CPU times, whose fractions are kept;
``UNLIMITED``/``Partition_Limit`` for limits), states ``CANCELLED by <uid>``, exit codes
``status:signal``, memory ``<number>[KMGTP][n|c]`` (``n``/``c``: per node / per CPU, Slurm
before 21.08), job ids ``123``, ``123_4``, ``123_[1-5]``, ``123+0`` and their steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from wass_chat.sacct.fields import FIELDS, SacctField
from wass_chat.sacct.gpu_columns import gpu_schema, sacct_gpu_columns, with_jobstats_columns
from wass_chat.sacct.layout import RAW_SECONDS, ExportLayout, ExportLayoutError, detect_layout

NULL_TOKENS = ("", "Unknown", "None", "N/A", "INVALID", "None assigned", "(null)")
"""Values Slurm prints for "not set"; they become null without counting as bad."""
UNLIMITED_TOKENS = ("UNLIMITED", "Partition_Limit")
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S"
MAX_EXAMPLES = 5
MAX_LINE_NUMBERS = 1000
"""Malformed line numbers kept (the count is always exact)."""
LAYOUT_SAMPLE_LINES = 200
_NEVER_IN_SACCT = "\x1f"
"""ASCII unit separator: reading with it as the CSV separator yields whole lines."""

_STATE = r"^([A-Z_]+)(?: by (\d+))?$"
_UNIT_BYTES = {"": 2**20, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}
"""A bare ReqMem number is in megabytes, Slurm's default memory unit."""


@dataclass(frozen=True)
class ParseResult:
    """The parsed jobs plus an account of everything that could not be read."""

    jobs: pl.DataFrame
    lines: int
    """Non-empty lines read (header excluded)."""
    malformed: int
    """Lines dropped: wrong field count or no JobID."""
    malformed_examples: tuple[str, ...] = ()
    bad_values: dict[str, int] = field(default_factory=dict)
    """Column -> values that could not be read and became null (the line was kept)."""
    bad_value_examples: dict[str, str] = field(default_factory=dict)
    malformed_lines: tuple[int, ...] = ()
    """File line numbers (1-based) of the malformed lines, the first MAX_LINE_NUMBERS."""
    layout: str = ""
    """How the file was read (:meth:`ExportLayout.describe`)."""
    unknown_columns: tuple[str, ...] = ()
    """The file's columns the product does not read (skipped)."""


def schema() -> dict[str, pl.DataType]:
    """Column name -> polars type of a parsed table (also the sacct cache's schema)."""
    types: dict[str, pl.DataType] = {}
    for f in FIELDS:
        match f.kind:
            case "timestamp":
                types[f.column] = pl.Datetime("us")
            case "duration" | "int" | "memory":
                types[f.column] = pl.Int64()
            case "cpu_time":
                types[f.column] = pl.Float64()
            case "exit_code":
                types["exit_status"] = pl.Int64()
                types["exit_signal"] = pl.Int64()
            case "state":
                types["state"] = pl.String()
                types["cancelled_by"] = pl.Int64()
            case "text":
                types[f.column] = pl.String()
    types["is_step"] = pl.Boolean()
    types["array_job_id"] = pl.Int64()
    types["backfilled"] = pl.Boolean()
    types["timelimit_unlimited"] = pl.Boolean()
    types["het_job_id"] = pl.Int64()
    types["source"] = pl.String()
    types["slurm_version"] = pl.String()
    types.update(gpu_schema())
    return types


def empty_jobs() -> pl.DataFrame:
    """A table with the parsed schema and no rows."""
    return pl.DataFrame(schema=schema())


def parse_sacct_file(
    path: Path, delimiter: str | None = None, columns: Sequence[str] | None = None
) -> ParseResult:
    """Parse a ``sacct`` export in any of its layouts, without loading it line by line in Python.

    ``delimiter`` and ``columns`` are what the user said of the file (``--delimiter``,
    ``--format``), needed only for a headerless export in another layout than the product's
    own. The file is read as one string column by polars' native reader (undecodable bytes are
    replaced, not fatal). Raises :class:`ExportLayoutError` when its columns cannot be told.
    """
    lines = pl.read_csv(
        Path(path),
        has_header=False,
        separator=_NEVER_IN_SACCT,
        quote_char=None,
        new_columns=["line"],
        infer_schema=False,
        encoding="utf8-lossy",
        truncate_ragged_lines=True,
        raise_if_empty=False,
    )
    series = (
        lines.to_series().str.strip_chars_end("\r")
        if lines.width
        else pl.Series("line", [], dtype=pl.String)
    )
    return parse_export_lines(series, str(path), delimiter, columns)


def parse_sacct_text(
    text: str,
    delimiter: str | None = None,
    columns: Sequence[str] | None = None,
    subject: str = "sacct output",
) -> ParseResult:
    """Parse ``sacct`` output held in a string (a header line, or the product's own layout)."""
    lines = pl.Series("line", text.replace("\r", "").split("\n"), dtype=pl.String)
    return parse_export_lines(lines, subject, delimiter, columns)


def parse_export_lines(
    lines: pl.Series,
    subject: str,
    delimiter: str | None = None,
    columns: Sequence[str] | None = None,
) -> ParseResult:
    """Detect the layout from the first lines of ``lines`` (the file's, in order), then parse."""
    numbered = pl.DataFrame({"line": lines}).with_row_index("line_no", offset=1)
    numbered = numbered.filter(
        pl.col("line").is_not_null() & (pl.col("line").str.strip_chars() != "")
    )
    sample = numbered.head(LAYOUT_SAMPLE_LINES)["line"].to_list()
    layout = detect_layout(sample, subject, delimiter, columns)
    if layout.header:
        numbered = numbered.slice(1)
    return parse_sacct_lines(numbered, layout)


def parse_sacct_lines(numbered: pl.DataFrame | pl.Series, layout: ExportLayout) -> ParseResult:
    """Parse non-empty data lines laid out as ``layout``.

    ``numbered`` has columns ``line_no`` (the file's line number) and ``line``; a bare string
    series is numbered from 1.
    """
    if isinstance(numbered, pl.Series):
        numbered = pl.DataFrame({"line": numbered}).with_row_index("line_no", offset=1)
    sep = layout.delimiter
    width = len(layout.columns)
    fields = layout.fields
    id_index = next(
        (i for i, f in fields.items() if f.name == "JobID"),
        next((i for i, n in enumerate(layout.columns) if n.lower() == "jobidraw"), None),
    )
    if id_index is None:
        raise ExportLayoutError(layout.describe(), ["no JobID or JobIDRaw column"])
    line = pl.col("line")
    if layout.trailing:
        line = pl.when(line.str.ends_with(sep)).then(line.str.head(-len(sep))).otherwise(line)
    frame = numbered.select("line_no", line.alias("line")).with_columns(
        (pl.col("line").str.count_matches(sep, literal=True) + 1).alias("n_fields")
    )
    parts = pl.col("line").str.split_exact(sep, width - 1)
    job_id = parts.struct.field(f"field_{id_index}")
    well_formed = (pl.col("n_fields") == width) & (job_id.str.strip_chars() != "")
    rejected = frame.filter(~well_formed.fill_null(False))
    examples = tuple(
        f"line {n}: {_why(k, width)}: {text[:160]!r}"
        for n, k, text in rejected.head(MAX_EXAMPLES).select("line_no", "n_fields", "line").rows()
    )
    raw = frame.filter(well_formed.fill_null(False)).select(parts.alias("parts")).unnest("parts")
    keep = {f"field_{i}": f.name for i, f in fields.items()}
    if "JobID" not in keep.values():
        keep[f"field_{id_index}"] = "JobID"  # JobIDRaw alone identifies the job
    raw = raw.select(
        _as_clock(pl.col(src), layout.columns[int(src[6:])]).alias(dst) for src, dst in keep.items()
    )
    jobs, bad, bad_examples = _typed(raw)
    return ParseResult(
        jobs=jobs,
        lines=frame.height,
        malformed=rejected.height,
        malformed_examples=examples,
        bad_values=bad,
        bad_value_examples=bad_examples,
        malformed_lines=tuple(rejected["line_no"].head(MAX_LINE_NUMBERS).to_list()),
        layout=layout.describe(),
        unknown_columns=layout.unknown_columns,
    )


def _as_clock(text: pl.Expr, column: str) -> pl.Expr:
    """A raw-number column (ElapsedRaw seconds, TimelimitRaw minutes) as the clock text of the
    field it stands in for (``[D-]HH:MM:SS``); any other column unchanged."""
    unit = RAW_SECONDS.get(column.lower())
    if unit is None:
        return text
    seconds = text.str.to_integer(strict=False) * unit
    rest = seconds % 86400
    clock = pl.format(
        "{}:{}:{}",
        *(
            part.cast(pl.String).str.zfill(2)
            for part in (rest // 3600, rest % 3600 // 60, rest % 60)
        ),
    )
    days = seconds // 86400
    as_clock = pl.when(days > 0).then(pl.format("{}-{}", days, clock)).otherwise(clock)
    return pl.when(seconds.is_not_null()).then(as_clock).otherwise(text)


def _why(n_fields: int, expected: int) -> str:
    return "no JobID" if n_fields == expected else f"{n_fields} fields, expected {expected}"


def _is_null(column: str) -> pl.Expr:
    return pl.col(column).is_null() | pl.col(column).is_in(list(NULL_TOKENS))


def _typed(raw: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int], dict[str, str]]:
    """Convert the raw string columns; return the table and the per-column bad-value counts."""
    present = set(raw.columns)
    missing = [pl.lit(None, pl.String).alias(f.name) for f in FIELDS if f.name not in present]
    raw = raw.with_columns(missing) if missing else raw
    conversions = [expr for f in FIELDS for expr in _convert(f)]
    typed = raw.with_columns(conversions)
    checks = {f.column: _unreadable(f) for f in FIELDS if f.kind != "text"}
    flags = typed.select(expr.alias(name) for name, expr in checks.items())
    counts = flags.sum().row(0)
    bad_counts = {n: int(c) for n, c in zip(checks, counts, strict=True) if c}
    bad_examples: dict[str, str] = {}
    for name in bad_counts:
        source = next(f.name for f in FIELDS if f.column == name)
        value = typed.get_column(source).filter(flags.get_column(name)).item(0)
        bad_examples[name] = f"{source}={value!r}"
    typed = typed.with_columns(_derived()).with_columns(sacct_gpu_columns())
    typed, undecoded, example = with_jobstats_columns(typed)
    if undecoded:
        bad_counts["admin_comment"] = undecoded
        bad_examples["admin_comment"] = example or ""
    jobs = typed.select(pl.col(name).cast(dtype) for name, dtype in schema().items())
    return jobs, bad_counts, bad_examples


def _convert(f: SacctField) -> list[pl.Expr]:
    """Expressions producing ``f``'s typed column(s) from its raw text column."""
    src = pl.col(f.name)
    match f.kind:
        case "text":
            return [pl.when(_is_null(f.name)).then(None).otherwise(src).alias(f.column)]
        case "timestamp":
            return [timestamp(src).alias(f.column)]
        case "int":
            return [src.str.to_integer(strict=False).alias(f.column)]
        case "duration":
            return [duration_seconds(src).alias(f.column)]
        case "cpu_time":
            return [cpu_seconds(src).alias(f.column)]
        case "memory":
            # ReqMem: a bare number is in megabytes (Slurm's memory unit); MaxRSS is usage,
            # which `sacct --noconvert` prints in bytes without a unit
            bare = "B" if f.name == "MaxRSS" else ""
            return [memory_bytes(src, pl.col("NNodes"), pl.col("NCPUS"), bare).alias(f.column)]
        case "state":
            parts = src.str.split_exact(" by ", 1)
            return [
                parts.struct.field("field_0").alias("state"),
                parts.struct.field("field_1").str.to_integer(strict=False).alias("cancelled_by"),
            ]
        case "exit_code":
            parts = src.str.split_exact(":", 1)
            return [
                parts.struct.field("field_0").str.to_integer(strict=False).alias("exit_status"),
                parts.struct.field("field_1").str.to_integer(strict=False).alias("exit_signal"),
            ]
    raise AssertionError(f"unhandled field kind {f.kind}")


def _unreadable(f: SacctField) -> pl.Expr:
    """True where ``f`` held a value (not a "not set" token) that did not convert."""
    given = ~_is_null(f.name)
    match f.kind:
        case "duration" | "cpu_time":
            return (
                given & ~pl.col(f.name).is_in(list(UNLIMITED_TOKENS)) & pl.col(f.column).is_null()
            )
        case "state":
            return given & ~pl.col(f.name).str.contains(_STATE)
        case "exit_code":
            return given & (pl.col("exit_status").is_null() | pl.col("exit_signal").is_null())
    return given & pl.col(f.column).is_null()


def duration_seconds(text: pl.Expr) -> pl.Expr:
    """``[D-]HH:MM:SS``, ``HH:MM:SS``, ``MM:SS`` or ``MM:SS.mmm`` -> whole seconds (else null).

    Slurm switches to ``D-`` from 24 hours on and to ``MM:SS`` below one hour only for CPU
    times, so the clock part always reads as a time of day; native time parsing is several
    times faster than splitting strings, which matters on millions of values.
    """
    has_days = text.str.contains("-", literal=True)
    clock = pl.when(has_days).then(text.str.tail(8)).otherwise(text)
    hms = clock.str.to_time("%H:%M:%S", strict=False)
    ms = pl.concat_str([pl.lit("00:"), clock]).str.to_time("%H:%M:%S%.f", strict=False)
    seconds = pl.coalesce(hms, ms).cast(pl.Int64) // 1_000_000_000
    days = text.str.head(-9).str.to_integer(strict=False)
    return pl.when(has_days).then(days * 86400 + seconds).otherwise(seconds)


_CPU_TIME = r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d*)?)$"


def cpu_seconds(text: pl.Expr) -> pl.Expr:
    """A CPU time (TotalCPU, UserCPU) -> seconds with their fractions, as a float (else null).

    sacct prints ``MM:SS.mmm`` below an hour, ``HH:MM:SS`` from one and ``D-HH:MM:SS`` from a
    day; dropping the milliseconds would put short jobs' CPU efficiency points off.
    """
    groups = text.str.extract_groups(_CPU_TIME)
    part = [groups.struct.field(str(i)).cast(pl.Float64) for i in range(1, 5)]
    return part[0].fill_null(0.0) * 86400 + part[1].fill_null(0.0) * 3600 + part[2] * 60 + part[3]


def timestamp(text: pl.Expr) -> pl.Expr:
    """``YYYY-MM-DDTHH:MM:SS`` (sacct's default), with a space for the ``T``, or seconds since
    the epoch (``SLURM_TIME_FORMAT=%s``, as jobstats exports) -> datetime (UTC for the last)."""
    iso = text.str.to_datetime(TIMESTAMP_FORMAT, time_unit="us", strict=False, cache=False)
    spaced = text.str.to_datetime("%Y-%m-%d %H:%M:%S", time_unit="us", strict=False, cache=False)
    epoch = pl.from_epoch(text.str.to_integer(strict=False), time_unit="s").cast(pl.Datetime("us"))
    return pl.coalesce(iso, spaced, epoch)


def memory_bytes(text: pl.Expr, nnodes: pl.Expr, ncpus: pl.Expr, bare_unit: str = "") -> pl.Expr:
    """ReqMem ``<number>[KMGTP][n|c]`` -> bytes for the whole job (else null).

    ``n``/``c`` (Slurm before 21.08) mean per node / per CPU and are multiplied out; a bare
    number is in megabytes, or in ``bare_unit`` (``B``: bytes, as ``--noconvert`` prints usage).
    """
    per = text.str.slice(-1, 1)
    body = pl.when(per.is_in(["n", "c"])).then(text.str.head(-1)).otherwise(text)
    unit = body.str.slice(-1, 1)
    has_unit = unit.is_in(list("KMGTP"))
    number = pl.when(has_unit).then(body.str.head(-1)).otherwise(body)
    unit_bytes = (
        pl.when(has_unit)
        .then(unit)
        .otherwise(pl.lit(bare_unit))
        .replace_strict(_UNIT_BYTES, return_dtype=pl.Float64)
    )
    scale = (
        pl.when(per == "n")
        .then(nnodes.str.to_integer(strict=False))
        .when(per == "c")
        .then(ncpus.str.to_integer(strict=False))
        .otherwise(1)
    )
    value = number.cast(pl.Float64, strict=False) * unit_bytes * scale
    return value.round(0).cast(pl.Int64)


def _derived() -> list[pl.Expr]:
    job_id = pl.col("job_id")
    return [
        job_id.str.contains(".", literal=True).alias("is_step"),
        job_id.str.extract(r"^(\d+)_", 1).str.to_integer(strict=False).alias("array_job_id"),
        job_id.str.extract(r"^(\d+)\+", 1).str.to_integer(strict=False).alias("het_job_id"),
        pl.col("flags").fill_null("").str.contains("SchedBackfill").alias("backfilled"),
        pl.col("Timelimit").is_in(list(UNLIMITED_TOKENS)).alias("timelimit_unlimited"),
        pl.lit(None, pl.String).alias("source"),  # set by the import (ingest.py)
        pl.lit(None, pl.String).alias("slurm_version"),  # set by a live import (ingest.py)
    ]
