"""ReportData -> Markdown, with each chart as a PNG (matplotlib) in an assets folder."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from wass_chat.analytics.capacity import capacity_note
from wass_chat.analytics.render_png import png_bytes
from wass_chat.report import tables, views
from wass_chat.report.build import ReportData
from wass_chat.report.columns import Table, frame_table
from wass_chat.report.energy_whatif_views import energy_markdown, whatifs_markdown
from wass_chat.report.gpu_views import gpu_headline, gpu_views
from wass_chat.report.html import SECTIONS, shown_sections
from wass_chat.report.methods import METHODS
from wass_chat.report.overview import ranked_findings


def render_markdown(
    report: ReportData, assets_dir: Path | None, csv_links: dict[str, str] | None = None
) -> tuple[str, dict[str, bytes]]:
    """The Markdown text and the PNG files it links to (name -> bytes, relative to ``assets_dir``).

    With ``assets_dir`` None the charts are left out (only their insights are written).
    """
    titles = dict(SECTIONS)
    a = report.analysis
    out = [f"# {report.title}", "", f"Generated {report.generated} by wass-chat.", ""]
    for note in (tables.mixed_sources_note(a.sources), capacity_note(a.capacity)):
        out += [f"> **Note:** {note}", ""] if note else []
    o = report.overview
    out += [f"## {titles['overview']}", "", o.text, ""]
    out += [f"_Written by {o.author}.{' ' + o.note if o.note else ''}_", ""]
    out += [f"## {titles['summary']}", "", f"Period: {a.period.label()} ({a.period.origin}).", ""]
    if a.filters:
        out += ["Only jobs with " + ", ".join(f"{k} = {v}" for k, v in a.filters.items()) + ".", ""]
    out += [f"Capacity: {a.capacity.label()}.", ""]
    out += _table(tables.summary_table(a.summary, a.nodes_seen, a.previous))
    out += [f"## {titles['findings']}", ""]
    found = ranked_findings(a)  # the summary's order
    out += [f"{i}. **{f.text}** {f.recommendation}" for i, f in enumerate(found, 1)]
    out += [""] if a.findings else ["No rule fired: nothing stands out in this period.", ""]
    out += [f"## {titles['analytics']}", ""]
    images: dict[str, bytes] = {}
    for chart in a.charts:
        if not chart.points:  # no empty axes: the insight says what is absent
            out += [chart.insight, ""]
            continue
        out += [f"### {chart.title}", ""]
        if assets_dir is not None:
            name = f"{chart.id}.png"
            images[name] = png_bytes(chart)
            out += [f"![{chart.title}]({assets_dir.name}/{name})", ""]
        out += [f"> {chart.insight}", ""]
    sections = [("queue", views.queue_views(a)), ("resources", views.resources_views(a))]
    if a.gpu_use is not None:
        sections.append(("gpus", gpu_views(a)))
    for section, made in sections:
        out += [f"## {titles[section]}", ""]
        out += [gpu_headline(a), ""] if section == "gpus" else []
        for view in views.shown(made):
            if isinstance(view, str):
                out += [view, ""]
                continue
            out += [f"### {view.title}", ""] + ([view.note, ""] if view.note else [])
            out += _frame(view.table)
            link = (csv_links or {}).get(view.csv or "")
            out += [f"[Every row as CSV]({link}).", ""] if link else []
    out += [f"## {titles['energy']}", "", *energy_markdown(report.cluster, _frame, csv_links)]
    out += [f"## {titles['whatifs']}", "", *whatifs_markdown(report.cluster, _frame)]
    shown = shown_sections(report)
    if "runs" in shown:
        out += [f"## {titles['runs']}", ""]
        out += [f"_{p}_" for p in report.runs.not_wired]
        out += _table(tables.runs_table(report.runs.runs)) if report.runs.runs else []
        for run in report.runs.runs:
            out += [f"### Run {run.run_id}: {run.workflow} ({run.scheduler}, {run.state})", ""]
            out += _table(tables.decision_table(run))
    if "comparison" in shown:
        out += [f"## {titles['comparison']}", ""]
        out += _table(tables.comparison_table(report.runs.runs))
    out += [f"## {titles['anomalies']}", ""]
    for anomaly in a.anomalies:
        if not anomaly.count:
            out += [f"{anomaly.title}: none (rule: {anomaly.rule}).", ""]
            continue
        out += [f"### {anomaly.title}: {anomaly.count:,}", "", f"Rule: {anomaly.rule}", ""]
        link = (csv_links or {}).get(anomaly.kind)
        more = f" [All {anomaly.count:,} rows as CSV]({link})." if link else ""
        out += [f"The first {anomaly.examples.height:,} of {anomaly.count:,}.{more}", ""]
        out += _frame(anomaly.examples)
    out += [f"## {titles['data-quality']}", ""]
    out += _table(tables.data_quality_table(report))
    out += [f"- `{e}`" for e in report.quality.examples] + [""]
    out += [f"## {titles['methods']}", ""]
    out += [f"- **{name}**: {text}" for name, text in METHODS]
    return "\n".join(out) + "\n", images


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(table: Table) -> list[str]:
    """A Markdown table: the columns table's labels, numbers right-aligned."""
    lines = ["| " + " | ".join(_cell(h) for h in table.header) + " |"]
    lines.append("|" + "".join("---:|" if n else "---|" for n in table.numeric))
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    return [*lines, ""]


def _frame(frame: pl.DataFrame) -> list[str]:
    return _table(frame_table(frame))
