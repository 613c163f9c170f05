"""ReportData -> one self-contained HTML file: plotly.js inline, no network fetch, no CDN.

The page carries plotly.js once, gzip-compressed and base64-encoded (1.9 MB instead of 4.8 MB),
and the figures as one JSON list; a single script inflates plotly.js with the browser's own
``DecompressionStream`` and draws every figure. When all are drawn it stamps the page with
``data-drawn-ms`` (milliseconds since navigation), which ``wass-chat report bench`` reads.
"""

from __future__ import annotations

import base64
from html import escape

from wass_chat.analytics.capacity import capacity_note
from wass_chat.analytics.insights import amount, plural
from wass_chat.analytics.render_png import compact_png_bytes
from wass_chat.report import tables, views
from wass_chat.report.build import ReportData
from wass_chat.report.charts_js import charts_script
from wass_chat.report.energy_whatif_views import energy_html, whatifs_html
from wass_chat.report.gpu_views import gpu_html
from wass_chat.report.html_table import frame_html, table_html
from wass_chat.report.methods import METHODS
from wass_chat.report.overview import ranked_findings
from wass_chat.report.runs import local_time

SECTIONS = (
    ("overview", "Summary and recommendations"),
    ("summary", "The period in figures"),
    ("findings", "Findings and recommendations"),
    ("analytics", "Accounting analytics"),
    ("queue", "Waits and the pending queue"),
    ("resources", "Partitions, GPUs and efficiency"),
    ("gpus", "GPU use and waste"),
    ("energy", "Energy (modelled from the recorded schedule)"),
    ("whatifs", "What-ifs replayed on the jobs of the period"),
    ("runs", "Workflow runs through wass-chat"),
    ("comparison", "Policy vs classic schedulers (simulated)"),
    ("anomalies", "Anomalies"),
    ("data-quality", "Data quality: malformed accounting lines"),
    ("methods", "Methods"),
)
_STYLE = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 1.5em;color:#222;
  overflow-wrap:break-word}
h1{margin-top:1em} section{border-top:1px solid #ddd;padding-top:.5em;margin-top:1.5em}
.table-box{max-width:100%;overflow-x:auto;margin:.5em 0}
table{border-collapse:collapse;font-size:.9em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;max-width:40em}
th{background:#f3f3f3;vertical-align:bottom}
td.num,th.num{text-align:right} td.num{white-space:nowrap;font-variant-numeric:tabular-nums}
.chart{margin:1em 0} .note{color:#666;font-size:.85em} .absent{color:#444}
.insight{background:#f6f9ff;border-left:4px solid #1f77b4;padding:.4em .8em}
nav ul{padding-left:0} nav li{display:inline-block;margin-right:1em}
code{font-size:.85em;overflow-wrap:anywhere}
td.evidence{min-width:16em;font-size:.8em;overflow-wrap:anywhere}
details.run-decisions{margin:.4em 0} details.run-decisions summary{cursor:pointer}
.warn{background:#fff4e5;border-left:4px solid #ff7f0e;padding:.4em .8em}
.plot{min-height:420px;max-width:100%} ol.findings li{margin:.4em 0}
img.static-chart{max-width:100%;height:auto}
.overview{background:#f4f9f4;border-left:4px solid #2ca02c;padding:.2em .8em}
"""


def shown_sections(report: ReportData) -> list[str]:
    """The ids of the sections this report has something to say in, in page order: the
    workflow-run sections only when runs were recorded (or could not be read)."""
    runs = report.runs
    hidden = set()
    if report.analysis.gpu_use is None:
        hidden.add("gpus")
    if not runs.runs:
        hidden.add("comparison")
        if not runs.not_wired:
            hidden.add("runs")
    return [i for i, _ in SECTIONS if i not in hidden]


def render_html(report: ReportData, csv_links: dict[str, str] | None = None) -> str:
    """The complete HTML document; ``csv_links`` maps an anomaly kind to its CSV file's path
    relative to the page (written by :func:`wass_chat.report.write.write_report`)."""
    content = {
        "overview": lambda: _overview(report),
        "summary": lambda: _summary(report),
        "findings": lambda: _findings(report),
        "analytics": lambda: _analytics(report),
        "queue": lambda: views.queue_html(report.analysis),
        "resources": lambda: views.resources_html(report.analysis, csv_links),
        "gpus": lambda: gpu_html(report.analysis, csv_links),
        "energy": lambda: energy_html(report.cluster, csv_links),
        "whatifs": lambda: whatifs_html(report.cluster),
        "runs": lambda: _runs(report),
        "comparison": lambda: _comparison(report),
        "anomalies": lambda: _anomalies(report, csv_links or {}),
        "data-quality": lambda: _quality(report),
        "methods": _methods,
    }
    titles = dict(SECTIONS)
    ids = shown_sections(report)
    body = "\n".join(
        [
            f"<h1>{escape(report.title)}</h1>",
            f'<p class="note">Generated {escape(report.generated)} by wass-chat.</p>',
            _notes(report),
            "<nav><ul>"
            + "".join(f'<li><a href="#{i}">{escape(titles[i])}</a></li>' for i in ids)
            + "</ul></nav>",
            *(_section(i, content[i]()) for i in ids),
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(report.title)}</title><style>{_STYLE}</style></head>\n"
        f"<body>\n{body}\n{charts_script(report.analysis.charts)}\n</body></html>\n"
    )


def _notes(report: ReportData) -> str:
    """What the reader must know before any figure: synthetic or mixed data, a guessed capacity."""
    notes = (
        ("sources-warning", tables.mixed_sources_note(report.analysis.sources)),
        ("capacity-note", capacity_note(report.analysis.capacity)),
    )
    return "".join(f'<p class="warn" id="{i}">{escape(n)}</p>' for i, n in notes if n)


def _section(section_id: str, content: str) -> str:
    title = dict(SECTIONS)[section_id]
    return (
        f'<section id="{section_id}" class="report-section">'
        f"<h2>{escape(title)}</h2>\n{content}\n</section>"
    )


def _overview(report: ReportData) -> str:
    o = report.overview
    paragraphs = "".join(f"<p>{escape(p)}</p>" for p in o.text.split("\n\n") if p.strip())
    note = f" {escape(o.note)}" if o.note else ""
    by = "model" if o.by_model else "rules"
    return (
        f'<div class="overview" data-author="{by}">{paragraphs}</div>'
        f'<p class="note author">Written by {escape(o.author)}.{note}</p>'
    )


def _summary(report: ReportData) -> str:
    a = report.analysis
    lines = [f"Period: {a.period.label()} ({a.period.origin})."]
    if a.filters:
        lines.append(
            "Only jobs with " + ", ".join(f"{k} = {v}" for k, v in a.filters.items()) + "."
        )
    lines.append(f"Capacity: {a.capacity.label()}.")
    text = "".join(f'<p class="period">{escape(line)}</p>' for line in lines)
    return text + table_html(tables.summary_table(a.summary, a.nodes_seen, a.previous))


def _findings(report: ReportData) -> str:
    found = ranked_findings(report.analysis)  # the summary's order
    if not found:
        return "<p>No rule fired: nothing stands out in this period.</p>"
    items = "".join(
        f'<li data-topic="{f.topic}"><strong>{escape(f.text)}</strong><br>'
        f"{escape(f.recommendation)}</li>"
        for f in found
    )
    return f'<ol class="findings">{items}</ol>'


def _analytics(report: ReportData) -> str:
    parts = []
    for chart in report.analysis.charts:
        if not chart.points:  # no empty axes: the insight says what is absent, in one line
            parts.append(f'<p class="absent" id="{chart.id}">{escape(chart.insight)}</p>')
            continue
        # The chart drawn once more as a PNG inside its figure: what a mailed or printed
        # page, a reader without JavaScript and a quick screenshot show; the loader removes
        # it once plotly.js has drawn the interactive chart over it.
        image = base64.b64encode(compact_png_bytes(chart)).decode("ascii")
        static = (
            f'<img class="static-chart" alt="{escape(chart.title)}" '
            f'src="data:image/png;base64,{image}">'
        )
        plot = f'<div id="{chart.id}" class="plot">{static}</div>'
        parts.append(
            f'<figure class="chart" data-chart="{chart.id}">{plot}'
            f'<figcaption class="insight">{escape(chart.insight)}</figcaption></figure>'
        )
    return "\n".join(parts)


def _runs(report: ReportData) -> str:
    """One table of the runs, then each run's placement decisions, folded (a run of 60 tasks is
    60 rows: open the one you want)."""
    runs = report.runs
    parts = [f'<p class="note">{escape(p)}</p>' for p in runs.not_wired]
    if runs.runs:
        parts.append(f'<div id="runs-table">{table_html(tables.runs_table(runs.runs))}</div>')
    for run in runs.runs:
        planned = "not recorded"
        if run.planned_makespan is not None:
            planned = f"{amount(run.planned_makespan)} s (simulated)"
        parts.append(
            f'<details class="run-decisions"><summary>Run {escape(run.run_id)}: '
            f"{escape(run.workflow)}, {plural(len(run.decisions), 'decision')}</summary>"
            f"<p>Created {local_time(run.created):%Y-%m-%d %H:%M}; scheduler "
            f"{escape(run.scheduler)}; state {escape(run.state)}; planned makespan {planned}.</p>"
            + table_html(tables.decision_table(run), css={6: "evidence"})
            + "</details>"
        )
    return "\n".join(parts)


def _comparison(report: ReportData) -> str:
    runs = report.runs.runs
    problems = [f"{r.run_id}: {p}" for r in runs for p in r.simulation_problems]
    notes = "".join(f'<p class="note">{escape(p)}</p>' for p in problems)
    return (
        "<p>Each run's workflow replayed on its platform by the simulator under every "
        "scheduler of the comparison, fastest first.</p>"
        + table_html(tables.comparison_table(runs))
        + notes
    )


def _anomalies(report: ReportData, csv_links: dict[str, str]) -> str:
    parts = []
    for anomaly in report.analysis.anomalies:
        if not anomaly.count:  # one line: the absence is worth knowing, the rule says what it is
            parts.append(
                f'<p class="absent">{escape(anomaly.title)}: none '
                f"(rule: {escape(anomaly.rule)}).</p>"
            )
            continue
        shown = anomaly.examples.height
        more = ""
        if anomaly.kind in csv_links:
            link = escape(csv_links[anomaly.kind])
            more = f' <a class="csv" href="{link}">All {anomaly.count:,} rows as CSV</a>.'
        parts.append(
            f"<h3>{escape(anomaly.title)}: {anomaly.count:,}</h3>"
            f'<p class="note">Rule: {escape(anomaly.rule)}</p>'
            f'<p class="note">The first {shown:,} of {anomaly.count:,}.{more}</p>'
            + frame_html(anomaly.examples)
        )
    return "\n".join(parts)


def _quality(report: ReportData) -> str:
    examples = "".join(f"<li><code>{escape(e)}</code></li>" for e in report.quality.examples)
    return table_html(tables.data_quality_table(report)) + (
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
