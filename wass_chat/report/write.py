"""Build a report from the cache and write it: the page (or Markdown + PNGs) and its CSV tables.

Used by the CLI (``wass-chat report``) and the agent (``generate_report``). The output's folder
is checked before anything is built (it must exist and be writable: one line, exit 2,
otherwise); everything is then built in memory, written to temporary names and renamed, the page
last, so a failure (an empty period, a full disk) leaves no report or table behind.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sim.atomic_files import require_folder, write_together
from wass_chat.analytics.capacity import Capacity
from wass_chat.analytics.period import JobFilter
from wass_chat.report.build import ReportData, build_report_from_cache
from wass_chat.report.energy_whatifs import WhatIfOptions
from wass_chat.report.gpu_views import GPU_TABLES
from wass_chat.report.overview import SummaryWriter

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
    if a.gpu_use is not None:
        files |= {f"{name}.csv": a.tables[name].write_csv().encode() for name in GPU_TABLES}
    energy = report.cluster.energy
    if energy is not None:
        files["energy_by_partition.csv"] = energy.by_partition.write_csv().encode()
        files["energy_by_user.csv"] = energy.by_user.write_csv().encode()
        files["energy_over_time.csv"] = energy.over_time.write_csv().encode()
    if report.cluster.whatifs is not None:
        files["whatifs.csv"] = report.cluster.whatifs.write_csv().encode()
    return files


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
    whatifs: WhatIfOptions = WhatIfOptions(),
    before_writing: Callable[[], None] | None = None,
) -> list[str]:
    """Build the report from the cache and write it; returns the files written (page first).

    ``before_writing`` is called once the report is built, just before the first file is
    written: it may raise to stop (the chat passes its cancellation check, so an answer
    cancelled while the report was being built writes no file).

    CSV tables go to ``<stem>_tables/`` next to the page, PNG charts of the Markdown format to
    ``<stem>_assets/``. ``writer`` (a local model) may write the summary at the top. Raises
    :class:`~sim.atomic_files.OutputError` before any work when ``output``'s folder is
    missing or not writable; nothing is written then, nor on any later failure.
    """
    from wass_chat.report.html import render_html
    from wass_chat.report.markdown import render_markdown

    require_folder(output)
    report = build_report_from_cache(
        sacct_dir,
        runs_dir,
        start,
        end,
        only=only,
        capacity=capacity,
        writer=writer,
        writer_unavailable=writer_unavailable,
        whatifs=whatifs,
    )
    tables_dir = output.with_name(f"{output.stem}_tables")
    csvs = csv_tables(report)
    links = {x.kind: f"{tables_dir.name}/anomaly-{x.kind}.csv" for x in report.analysis.anomalies}
    linked = (*LINKED_TABLES, "energy_by_user", *GPU_TABLES)
    links |= {name: f"{tables_dir.name}/{name}.csv" for name in linked}
    extra: dict[Path, bytes] = {tables_dir / name: data for name, data in csvs.items()}
    if fmt == "html":
        page = render_html(report, links)
    else:
        assets = output.with_name(f"{output.stem}_assets")
        page, images = render_markdown(report, assets, links)
        extra |= {assets / name: data for name, data in images.items()}
    files: dict[Path, str | bytes] = {**extra, output: page}  # the page last
    if before_writing is not None:
        before_writing()
    write_together(files)
    return [str(output), *(str(p) for p in extra)]
