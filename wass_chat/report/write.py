"""Build a report from the cache and write it: the page (or Markdown + PNGs) and its CSV tables.

Used by the CLI (``wass-chat report``) and the agent (``generate_report``). Everything is
built in memory first; files are then written each to a temporary name and renamed, the page
last, so a failure (an empty period, a full disk) leaves no half-written report behind.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from pathlib import Path

from sim.errors import UserFacingError
from wass_chat.analytics.capacity import Capacity
from wass_chat.analytics.period import JobFilter
from wass_chat.report.build import ReportData, build_report_from_cache
from wass_chat.report.overview import SummaryWriter
from wass_chat.sacct.cache import replace_atomically

LINKED_TABLES = (
    "efficiency_by_user",
    "efficiency_by_account",
    "efficiency_by_partition",
    "gpu_by_account",
)
"""Views whose page shows the first rows; the CSV holds every row and the page links to it."""


def csv_tables(report: ReportData) -> dict[str, bytes]:
    """File name -> CSV bytes: every anomaly's full table and the views' tables."""
    a = report.analysis
    files = {f"anomaly-{x.kind}.csv": x.table.write_csv().encode() for x in a.anomalies}
    for name in (
        "wait_by_partition",
        "wait_by_qos",
        "wait_by_size",
        "pending_reasons",
        "partition_utilisation",
        "gpu_by_partition",
        "gpu_by_user",
        *LINKED_TABLES,
    ):
        files[f"{name}.csv"] = a.tables[name].write_csv().encode()
    return files


class ReportWriteError(UserFacingError):
    """A report file that cannot be written (a read-only or missing directory, a full disk)."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(f"cannot write {path}: {cause.strerror or cause}")


def _write_bytes(data: bytes, path: str) -> None:
    Path(path).write_bytes(data)


def _write_all(files: dict[Path, bytes]) -> None:
    """Write each file atomically, in order; an OS error becomes one :class:`ReportWriteError`."""
    for path, data in files.items():
        try:
            replace_atomically(path, partial(_write_bytes, data))
        except OSError as exc:
            raise ReportWriteError(path, exc) from exc


def write_report(
    sacct_dir: Path,
    runs_dir: Path,
    output: Path,
    fmt: str,
    start: datetime | None = None,
    end: datetime | None = None,
    *,
    only: JobFilter = JobFilter(),
    capacity: Capacity | None = None,
    writer: SummaryWriter | None = None,
    writer_unavailable: str = "",
) -> list[str]:
    """Build the report from the cache and write it; returns the files written (page first).

    CSV tables go to ``<stem>_tables/`` next to the page, PNG charts of the Markdown format to
    ``<stem>_assets/``. ``writer`` (a local model) may write the summary at the top.
    """
    from wass_chat.report.html import render_html
    from wass_chat.report.markdown import render_markdown

    report = build_report_from_cache(
        sacct_dir,
        runs_dir,
        start,
        end,
        only=only,
        capacity=capacity,
        writer=writer,
        writer_unavailable=writer_unavailable,
    )
    tables_dir = output.with_name(f"{output.stem}_tables")
    csvs = csv_tables(report)
    links = {x.kind: f"{tables_dir.name}/anomaly-{x.kind}.csv" for x in report.analysis.anomalies}
    links |= {name: f"{tables_dir.name}/{name}.csv" for name in LINKED_TABLES}
    extra: dict[Path, bytes] = {tables_dir / name: data for name, data in csvs.items()}
    if fmt == "html":
        page = render_html(report, links)
    else:
        assets = output.with_name(f"{output.stem}_assets")
        page, images = render_markdown(report, assets, links)
        extra |= {assets / name: data for name, data in images.items()}
    _write_all({**extra, output: page.encode()})  # the page last
    return [str(output), *(str(p) for p in extra)]
