"""ReportData -> one self-contained HTML file: plotly.js inline, no network fetch, no CDN."""

from __future__ import annotations

from html import escape

import polars as pl

from wass_chat.analytics.render_plotly import plotly_fragment
from wass_chat.report import tables
from wass_chat.report.build import ReportData
from wass_chat.report.methods import METHODS

SECTIONS = (
    ("summary", "Summary of the period"),
    ("analytics", "Accounting analytics"),
    ("runs", "Workflow runs through wass-chat"),
    ("comparison", "Policy vs classic schedulers (simulated)"),
    ("anomalies", "Anomalies"),
    ("data-quality", "Data quality: malformed accounting lines"),
    ("methods", "Methods"),
)
_STYLE = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 1.5em;color:#222}
h1{margin-top:1em} section{border-top:1px solid #ddd;padding-top:.5em;margin-top:1.5em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3} .chart{margin:1em 0} .note{color:#666;font-size:.85em}
.insight{background:#f6f9ff;border-left:4px solid #1f77b4;padding:.4em .8em}
nav li{display:inline;margin-right:1em} code{font-size:.85em}
td.evidence{max-width:420px;word-break:break-all;font-size:.8em}
"""


def render_html(report: ReportData) -> str:
    """The complete HTML document."""
    from plotly.offline import get_plotlyjs

    body = "\n".join(
        [
            f"<h1>{escape(report.title)}</h1>",
            f'<p class="note">Generated {escape(report.generated)} by wass-chat.</p>',
            "<nav><ul>"
            + "".join(f'<li><a href="#{i}">{escape(t)}</a></li>' for i, t in SECTIONS)
            + "</ul></nav>",
            _section("summary", _summary(report)),
            _section("analytics", _analytics(report)),
            _section("runs", _runs(report)),
            _section("comparison", _comparison(report)),
            _section("anomalies", _anomalies(report)),
            _section("data-quality", _quality(report)),
            _section("methods", _methods()),
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(report.title)}</title><style>{_STYLE}</style>"
        f'<script type="text/javascript">{get_plotlyjs()}</script></head>\n'
        f"<body>\n{body}\n</body></html>\n"
    )


def _section(section_id: str, content: str) -> str:
    title = dict(SECTIONS)[section_id]
    return (
        f'<section id="{section_id}" class="report-section">'
        f"<h2>{escape(title)}</h2>\n{content}\n</section>"
    )


def table_html(
    header: list[str], rows: list[tuple[str, ...]], css: dict[int, str] | None = None
) -> str:
    css = css or {}
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{css[i]}">{escape(str(c))}</td>'
            if i in css
            else f"<td>{escape(str(c))}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def frame_html(frame: pl.DataFrame) -> str:
    return table_html(frame.columns, [tuple(str(v) for v in row) for row in frame.rows()])


def _summary(report: ReportData) -> str:
    a = report.analysis
    rows = tables.summary_rows(a.summary, a.nodes_seen)
    return f"<p>Period: {escape(a.period.label())}.</p>" + table_html(["statistic", "value"], rows)


def _analytics(report: ReportData) -> str:
    parts = []
    for chart in report.analysis.charts:
        parts.append(
            f'<figure class="chart" data-chart="{chart.id}">{plotly_fragment(chart)}'
            f'<figcaption class="insight">{escape(chart.insight)}</figcaption></figure>'
        )
    return "\n".join(parts)


def _runs(report: ReportData) -> str:
    runs = report.runs
    parts = [f'<p class="note">{escape(p)}</p>' for p in runs.not_wired]
    if not runs.runs:
        parts.append("<p>No workflow run through wass-chat was recorded in this period.</p>")
    for run in runs.runs:
        planned = f"{run.planned_makespan:.1f} s" if run.planned_makespan is not None else "n/a"
        header, rows = tables.decision_rows(run)
        parts.append(
            f"<h3>Run {escape(run.run_id)}: {escape(run.workflow)}</h3>"
            f"<p>Created {escape(run.created)}; scheduler {escape(run.scheduler)}; state "
            f"{escape(run.state)}; planned makespan {planned}; {len(run.decisions)} decisions.</p>"
            + table_html(header, rows, css={6: "evidence"})
        )
    return "\n".join(parts)


def _comparison(report: ReportData) -> str:
    runs = report.runs.runs
    if not runs:
        return "<p>No workflow run in this period, so there is nothing to compare.</p>"
    header, rows = tables.comparison_rows(runs)
    problems = [f"{r.run_id}: {p}" for r in runs for p in r.simulation_problems]
    notes = "".join(f'<p class="note">{escape(p)}</p>' for p in problems)
    return (
        "<p>Makespan in simulated seconds of each run's workflow on its platform; "
        "* marks the best.</p>" + table_html(header, rows) + notes
    )


def _anomalies(report: ReportData) -> str:
    parts = []
    for anomaly in report.analysis.anomalies:
        parts.append(
            f"<h3>{escape(anomaly.title)}: {anomaly.count:,}</h3>"
            f'<p class="note">Rule: {escape(anomaly.rule)}</p>'
            + (frame_html(anomaly.examples) if anomaly.count else "<p>None found.</p>")
        )
    return "\n".join(parts)


def _quality(report: ReportData) -> str:
    examples = "".join(f"<li><code>{escape(e)}</code></li>" for e in report.quality.examples)
    return table_html(["measure", "count"], tables.data_quality_rows(report)) + (
        f"<p>Examples of malformed lines:</p><ul>{examples}</ul>" if examples else ""
    )


def _methods() -> str:
    return (
        "<dl>"
        + "".join(
            f"<dt><strong>{escape(name)}</strong></dt><dd>{escape(text)}</dd>"
            for name, text in METHODS
        )
        + "</dl>"
    )
