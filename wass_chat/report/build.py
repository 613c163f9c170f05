"""Assemble a report: accounting analysis + decision-log runs + data quality, for one period."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import polars as pl

from sim.errors import InputError
from wass_chat.analytics.analysis import Analysis, analyze
from wass_chat.analytics.capacity import Capacity
from wass_chat.analytics.period import JobFilter, submission_span
from wass_chat.report.energy_whatifs import ClusterSection, WhatIfOptions, build_cluster_section
from wass_chat.report.overview import Overview, SummaryWriter, build_overview
from wass_chat.report.runs import RunsReport, collect_runs
from wass_chat.sacct.cache import ImportRecord, SacctCache


@dataclass(frozen=True)
class DataQuality:
    """Malformed lines and unreadable values of the imports that fed this report."""

    imports: int
    lines: int
    malformed: int
    examples: tuple[str, ...]
    bad_values: dict[str, int]


@dataclass(frozen=True)
class ReportData:
    """Everything one report shows; rendered to HTML or Markdown."""

    title: str
    generated: str
    analysis: Analysis
    runs: RunsReport
    quality: DataQuality
    overview: Overview
    """The summary across charts shown first, and who wrote it."""
    cluster: ClusterSection = field(default_factory=ClusterSection)
    """Energy from the recorded schedule and the what-ifs replayed on the period's jobs."""


def build_report(
    jobs: pl.LazyFrame,
    runs_dir: Path,
    imports: list[ImportRecord],
    start: datetime | None = None,
    end: datetime | None = None,
    *,
    only: JobFilter = JobFilter(),
    capacity: Capacity | None = None,
    whole_cache: pl.LazyFrame | None = None,
    writer: SummaryWriter | None = None,
    writer_unavailable: str = "",
    whatifs: WhatIfOptions = WhatIfOptions(),
) -> ReportData:
    """The report over ``jobs`` (a lazy frame with the parsed schema) for ``[start, end)``.

    ``writer`` (a local model) may write the summary at the top; ``writer_unavailable`` says
    why there is none (see :func:`~wass_chat.report.overview.build_overview`).

    Raises :class:`EmptyPeriodError` when no job of the period matches: a report of "n/a"
    helps nobody, the span the cache covers (from ``whole_cache``, default ``jobs``) does.
    """
    analysis = analyze(
        jobs,
        start,
        end,
        only.user,
        account=only.account,
        partition=only.partition,
        capacity=capacity,
    )
    if analysis.summary.jobs == 0:
        raise EmptyPeriodError(
            analysis, whole_cache if whole_cache is not None else jobs, start, end
        )
    runs = collect_runs(runs_dir, analysis.period.start, analysis.period.end)
    return ReportData(
        title=f"Scheduling audit, {analysis.period.label()}",
        generated=datetime.now().isoformat(timespec="seconds"),
        analysis=analysis,
        runs=runs,
        quality=data_quality(imports),
        overview=build_overview(analysis, writer, writer_unavailable),
        cluster=build_cluster_section(jobs, analysis.period, analysis.filters, whatifs),
    )


class EmptyPeriodError(InputError):
    """No job was submitted in the period (with the filters): names the span the cache covers."""

    def __init__(
        self,
        analysis: Analysis,
        cache: pl.LazyFrame,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> None:
        first, last, count = submission_span(cache)
        where = f"in {analysis.period.label()}"
        if (start is None) != (end is None):  # one bound given: say what was asked
            where = f"from {start:%Y-%m-%d %H:%M} on" if start else f"before {end:%Y-%m-%d %H:%M}"
        if analysis.filters:
            where += " with " + ", ".join(f"{k}={v}" for k, v in analysis.filters.items())
        if count and first is not None and last is not None:
            held = (
                f"the cache holds {count:,} jobs submitted {first:%Y-%m-%d %H:%M} to "
                f"{last:%Y-%m-%d %H:%M}"
            )
        else:
            held = "the cache is empty: run `wass-chat sacct import` first"
        super().__init__("period", [f"no job was submitted {where}; {held}"])


def build_report_from_cache(
    sacct_dir: Path,
    runs_dir: Path,
    start: datetime | None = None,
    end: datetime | None = None,
    *,
    only: JobFilter = JobFilter(),
    capacity: Capacity | None = None,
    writer: SummaryWriter | None = None,
    writer_unavailable: str = "",
    whatifs: WhatIfOptions = WhatIfOptions(),
) -> ReportData:
    """The report from the sacct cache at ``sacct_dir`` and the decision log at ``runs_dir``."""
    cache = SacctCache(sacct_dir)
    return build_report(
        cache.scan(until=end),
        runs_dir,
        cache.imports(),
        start,
        end,
        only=only,
        capacity=capacity,
        whole_cache=cache.scan(),
        writer=writer,
        writer_unavailable=writer_unavailable,
        whatifs=whatifs,
    )


def data_quality(imports: list[ImportRecord]) -> DataQuality:
    """Sum the malformed-line and bad-value counts over ``imports``."""
    bad: dict[str, int] = {}
    for record in imports:
        for name, count in record.bad_values.items():
            bad[name] = bad.get(name, 0) + count
    return DataQuality(
        imports=len(imports),
        lines=sum(r.lines for r in imports),
        malformed=sum(r.malformed for r in imports),
        examples=tuple(e for r in imports for e in r.malformed_examples)[:10],
        bad_values=bad,
    )
