"""How a ``sacct`` export is laid out: its delimiter, its columns and whether it has a header.

Sites export accounting data in many ways, all of them sacct's own: ``-P``/``--parsable2`` (``|``
between fields), ``-p``/``--parsable`` (a ``|`` after every field, the last one included),
``--delimiter=S`` with any string (``^|^`` and ``☃`` are seen in the wild), with or without the
header line (``-n``), and with each site's own ``--format`` list in its own order. This module
reads that layout from the file itself:

* a **header** line is recognised by its names: identifiers, most of them sacct's fields (any
  case; :data:`SACCT_FIELDS`), one of them ``JobID`` or ``JobIDRaw``. Its delimiter is what
  stands between the first two names, so ``--delimiter`` exports need no option;
* columns are mapped **by name**: sacct's aliases are one field (``AllocCPUS`` is ``NCPUS``),
  columns the product does not read are skipped and listed, and a field absent from the file is a
  null column;
* a **headerless** export names its columns with ``--format`` (the list given to sacct); only the
  product's own layouts (:data:`~wass_chat.sacct.fields.HEADERLESS_LAYOUTS`) are recognised
  without it, by their field count;
* sacct's fixed-width output (no ``-P``) truncates values (``CANCELLED+``) and is refused with a
  hint instead of being misread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sim.errors import InputError
from wass_chat.sacct.fields import FIELD_BY_NAME, FIELDS, HEADERLESS_LAYOUTS, SacctField

_SACCT_FIELD_NAMES = (
    # src/sacct/sacct.c (Slurm 26.05), fields[]: every name `sacct --helpformat` lists.
    "Account AdminComment AllocCPUS AllocNodes AllocTRES AssocID AveCPU AveCPUFreq "
    "AveDiskRead AveDiskWrite AvePages AveRSS AveVMSize BlockID Cluster Comment Constraints "
    "ConsumedEnergy ConsumedEnergyRaw Container CPUTime CPUTimeRAW DBIndex DerivedExitCode "
    "Elapsed ElapsedRaw Eligible End ExitCode Extra FailedNode Flags GID Group JobID "
    "JobIDRaw JobName Layout Licenses MaxDiskRead MaxDiskReadNode MaxDiskReadTask "
    "MaxDiskWrite MaxDiskWriteNode MaxDiskWriteTask MaxPages MaxPagesNode MaxPagesTask "
    "MaxRSS MaxRSSNode MaxRSSTask MaxVMSize MaxVMSizeNode MaxVMSizeTask McsLabel MinCPU "
    "MinCPUNode MinCPUTask NCPUS NNodes NodeList NTasks Partition Planned PlannedCPU "
    "PlannedCPURAW Priority QOS QOSRAW QOSREQ Reason ReqCPUFreq ReqCPUFreqGov ReqCPUFreqMax "
    "ReqCPUFreqMin ReqCPUS ReqMem ReqNodes ReqTRES Reservation ReservationId Restarts "
    "SegmentSize SLUID Start State StdErr StdIn StdOut Submit SubmitLine Suspended "
    "SystemComment SystemCPU Timelimit TimelimitRaw TotalCPU TRESUsageInAve TRESUsageInMax "
    "TRESUsageInMaxNode TRESUsageInMaxTask TRESUsageInMin TRESUsageInMinNode "
    "TRESUsageInMinTask TRESUsageInTot TRESUsageOutAve TRESUsageOutMax TRESUsageOutMaxNode "
    "TRESUsageOutMaxTask TRESUsageOutMin TRESUsageOutMinNode TRESUsageOutMinTask "
    "TRESUsageOutTot UID User UserCPU WCKey WCKeyID WorkDir "
    # Names of older releases (17.11-21.08), still found in archived exports.
    "AllocGRES ReqGRES Reserved ResvCPU ResvCPURAW Dependency"
)
SACCT_FIELDS: frozenset[str] = frozenset(name.lower() for name in _SACCT_FIELD_NAMES.split())
"""Every field name sacct prints in a header, lower-cased (the product reads a few of them)."""

ALIASES: dict[str, str] = {"alloccpus": "NCPUS"}
"""sacct names that print the same value as one of the product's fields (sacct.c maps
``AllocCPUS`` and ``NCPUS`` to the same column, ``PRINT_ALLOC_CPUS``)."""
FALLBACKS: dict[str, tuple[str, ...]] = {
    "NCPUS": ("ReqCPUS",),
    "NNodes": ("AllocNodes",),
    "Elapsed": ("ElapsedRaw",),
    "Timelimit": ("TimelimitRaw",),
}
"""Fields read from another column only when the file lacks the field itself: a job's requested
CPUs stand in for its allocated ones (they are equal once it runs, save for whole-node
allocations), ``AllocNodes`` for ``NNodes``, the raw numbers for Elapsed and Timelimit."""
RAW_SECONDS: dict[str, int] = {"elapsedraw": 1, "timelimitraw": 60}
"""Columns sacct prints as a bare number, and the seconds one unit of it is (TimelimitRaw is in
minutes): read as their clock-text field once converted."""

DELIMITER_CANDIDATES = ("^|^", "|", "☃", "\t", ";", ",")
"""Delimiters tried, in order, on a headerless export given ``--format`` but no delimiter."""
JOB_ID = re.compile(r"^\d+(?:_(?:\d+|\[[^\]]*\]))?(?:\+\d+)?(?:\.[\w-]+)?$")
"""A sacct JobID: ``123``, ``123_4``, ``123_[1-5%2]`` (array), ``123+0`` (heterogeneous),
each optionally followed by a step (``.batch``, ``.extern``, ``.0``)."""
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_FIXED_WIDTH_RULE = re.compile(r"^-{3,}(?: +-{3,})+\s*$")


class ExportLayoutError(InputError):
    """The file's layout cannot be told (no header, no ``--format``), or does not fit it."""


@dataclass(frozen=True, slots=True)
class ExportLayout:
    """Where each field stands in a sacct export, and how its lines are delimited."""

    delimiter: str
    columns: tuple[str, ...]
    """The file's column names, as sacct printed or the user named them."""
    header: bool
    """The first non-empty line is the header (skip it)."""
    trailing: bool
    """Every line ends with the delimiter (``--parsable``): one more, empty, field."""

    @property
    def fields(self) -> dict[int, SacctField]:
        """Column index -> the product's field it holds; a field appears once (the first
        column holding it, a fallback only when the field itself is absent)."""
        lowered = [name.lower() for name in self.columns]
        found: dict[int, SacctField] = {}
        seen: set[str] = set()
        for i, name in enumerate(lowered):
            field = FIELD_BY_NAME.get(ALIASES.get(name, name).lower())
            if field is not None and field.name not in seen:
                found[i] = field
                seen.add(field.name)
        for target, sources in FALLBACKS.items():
            if target in seen:
                continue
            for source in sources:
                if source.lower() in lowered:
                    found[lowered.index(source.lower())] = FIELD_BY_NAME[target.lower()]
                    seen.add(target)
                    break
        return found

    @property
    def unknown_columns(self) -> tuple[str, ...]:
        """The file's columns the product does not read (listed once, never an error)."""
        used = self.fields
        return tuple(name for i, name in enumerate(self.columns) if i not in used)

    def describe(self) -> str:
        """One line: ``37 columns, delimiter '☃', header, trailing delimiter``."""
        parts = [f"{len(self.columns)} columns", f"delimiter {self.delimiter!r}"]
        parts.append("header" if self.header else "no header")
        if self.trailing:
            parts.append("trailing delimiter (--parsable)")
        return ", ".join(parts)


def parse_format(text: str) -> tuple[str, ...]:
    """sacct's ``--format`` value -> column names: ``JobID%20,state`` -> ``(JobID, state)``.

    Raises :class:`ExportLayoutError` naming every name that is not a sacct field.
    """
    names = tuple(part.split("%")[0].strip() for part in text.split(",") if part.strip())
    unknown = [n for n in names if n.lower() not in SACCT_FIELDS]
    if not names or unknown:
        problem = f"not sacct fields: {', '.join(unknown)}" if unknown else "no field names"
        raise ExportLayoutError("--format", [problem])
    return names


def detect_layout(
    lines: Sequence[str],
    subject: str,
    delimiter: str | None = None,
    columns: Sequence[str] | None = None,
) -> ExportLayout:
    """The layout of an export whose first non-empty lines are ``lines``.

    ``delimiter`` and ``columns`` are what the user said (``--delimiter``, ``--format``); a
    header line, when the file has one, is found either way. Raises :class:`ExportLayoutError`
    (one line) when the columns cannot be known or do not fit the lines.
    """
    sample = [line for line in lines if line.strip()]
    if not sample:
        return ExportLayout(delimiter or "|", tuple(f.name for f in FIELDS), False, False)
    if len(sample) > 1 and _FIXED_WIDTH_RULE.match(sample[1]):
        raise ExportLayoutError(
            subject,
            ["sacct's fixed-width output truncates values; export with `sacct -P` (or -p)"],
        )
    header = _header(sample[0], delimiter)
    if header is not None:
        names, sep, trailing = header
        if columns is not None and [c.lower() for c in columns] != [n.lower() for n in names]:
            raise ExportLayoutError(
                subject, ["its header names other columns than --format; drop --format"]
            )
        return ExportLayout(sep, names, True, trailing)
    if columns is None:
        own = _own_layout(sample, delimiter or "|")
        if own is not None:
            return own
        raise ExportLayoutError(
            subject,
            [
                "no header line, so its columns are unknown: name them with --format "
                "(the list given to sacct, e.g. --format JobID,State,Elapsed)"
            ],
        )
    data = sample[:200]
    for sep in (delimiter,) if delimiter else DELIMITER_CANDIDATES:
        fits = _fits(data, sep, len(columns))
        if fits is not None:
            return ExportLayout(sep, tuple(columns), False, fits)
    told = f"delimiter {delimiter!r}" if delimiter else "any usual delimiter"
    raise ExportLayoutError(
        subject, [f"its lines do not split into the {len(columns)} --format columns by {told}"]
    )


def _header(line: str, delimiter: str | None) -> tuple[tuple[str, ...], str, bool] | None:
    """``(names, delimiter, trailing)`` when ``line`` is a sacct header, else None."""
    line = line.strip("\r\n")
    if delimiter is None:
        first = _NAME.match(line)
        second = _NAME.search(line, first.end()) if first else None
        if first is None or second is None:
            return None
        delimiter = line[first.end() : second.start()]
    trailing = line.endswith(delimiter)
    body = line[: -len(delimiter)] if trailing else line
    names = tuple(name.strip() for name in body.split(delimiter))
    lowered = [name.lower() for name in names]
    if not all(_NAME.fullmatch(name) for name in names):
        return None
    if not {"jobid", "jobidraw"} & set(lowered):
        return None
    # a field of a release newer than our list, or a column a site's tool added, is skipped
    known = sum(name in SACCT_FIELDS for name in lowered)
    return (names, delimiter, trailing) if known >= max(2, len(names) / 2) else None


def _fits(lines: Sequence[str], sep: str, width: int) -> bool | None:
    """Whether most ``lines`` split into ``width`` fields by ``sep``: False when they do as
    they are, True when they do after one trailing ``sep`` is removed (``--parsable``),
    None when they do neither."""
    counts = [line.count(sep) + 1 for line in lines]
    plain = sum(c == width for c in counts)
    trailing = sum(
        c == width + 1 and line.endswith(sep) for c, line in zip(counts, lines, strict=True)
    )
    best = max(plain, trailing)
    if best < 0.8 * len(lines) or best == 0:
        return None
    # A --parsable2 line whose last field is empty also ends with the delimiter, but it has
    # ``width`` fields, not ``width + 1``: the two are told apart by the count.
    return trailing > plain


def _own_layout(lines: Sequence[str], sep: str) -> ExportLayout | None:
    """One of the product's own headerless layouts, when most lines have its field count."""
    for layout in HEADERLESS_LAYOUTS:
        trailing = _fits(lines[:200], sep, len(layout))
        if trailing is not None and _looks_like_job_ids(lines, sep):
            return ExportLayout(sep, tuple(f.name for f in layout), False, trailing)
    return None


def _looks_like_job_ids(lines: Sequence[str], sep: str) -> bool:
    """The product's layouts start with JobID: check that the first fields are job ids."""
    firsts = [line.split(sep, 1)[0] for line in lines[:50]]
    return sum(bool(JOB_ID.match(f)) for f in firsts) >= 0.8 * len(firsts)
