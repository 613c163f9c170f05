"""ReportData -> Markdown, with each chart as a PNG (matplotlib) in an assets folder."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from wass_chat.analytics.render_png import png_bytes
from wass_chat.report import tables
from wass_chat.report.build import ReportData
from wass_chat.report.html import SECTIONS
from wass_chat.report.methods import METHODS


def render_markdown(report: ReportData, assets_dir: Path | None) -> tuple[str, dict[str, bytes]]:
    """The Markdown text and the PNG files it links to (name -> bytes, relative to ``assets_dir``).

    With ``assets_dir`` None the charts are left out (only their insights are written).
    """
    titles = dict(SECTIONS)
    a = report.analysis
    out = [f"# {report.title}", "", f"Generated {report.generated} by wass-chat.", ""]
    out += [f"## {titles['summary']}", "", f"Period: {a.period.label()}.", ""]
    out += _table(["statistic", "value"], tables.summary_rows(a.summary, a.nodes_seen))
    out += [f"## {titles['analytics']}", ""]
    images: dict[str, bytes] = {}
    for chart in a.charts:
        out += [f"### {chart.title}", ""]
        if assets_dir is not None:
            name = f"{chart.id}.png"
            images[name] = png_bytes(chart)
            out += [f"![{chart.title}]({assets_dir.name}/{name})", ""]
        out += [f"> {chart.insight}", ""]
    out += [f"## {titles['runs']}", ""]
    out += [f"_{p}_" for p in report.runs.not_wired]
    if not report.runs.runs:
        out += ["No workflow run through wass-chat was recorded in this period.", ""]
    for run in report.runs.runs:
        out += [f"### Run {run.run_id}: {run.workflow} ({run.scheduler}, {run.state})", ""]
        out += _table(*tables.decision_rows(run))
    out += [f"## {titles['comparison']}", ""]
    if report.runs.runs:
        out += _table(*tables.comparison_rows(report.runs.runs))
    else:
        out += ["No workflow run in this period, so there is nothing to compare.", ""]
    out += [f"## {titles['anomalies']}", ""]
    for anomaly in a.anomalies:
        out += [f"### {anomaly.title}: {anomaly.count:,}", "", f"Rule: {anomaly.rule}", ""]
        if anomaly.count:
            out += _frame(anomaly.examples)
    out += [f"## {titles['data-quality']}", ""]
    out += _table(["measure", "count"], tables.data_quality_rows(report))
    out += [f"- `{e}`" for e in report.quality.examples] + [""]
    out += [f"## {titles['methods']}", ""]
    out += [f"- **{name}**: {text}" for name, text in METHODS]
    return "\n".join(out) + "\n", images


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def _frame(frame: pl.DataFrame) -> list[str]:
    return _table(frame.columns, [tuple(str(v) for v in row) for row in frame.rows()])
