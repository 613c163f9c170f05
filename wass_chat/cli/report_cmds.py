"""`wass-chat sacct ...` (accounting import, synthesis, summary) and `wass-chat report ...`.

Heavy libraries (polars, plotly, matplotlib) are imported inside the commands so that
``wass-chat --help`` stays fast.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import typer

from wass_chat.cli.output import console, emit, err_console

sacct_app = typer.Typer(
    help="Slurm accounting: import into the local cache, synthesize, summarize."
)
report_app = typer.Typer(
    help="Scheduling audit report (self-contained HTML, or Markdown with PNG charts).",
    invoke_without_command=True,
)

CAP_NODES = "Configured nodes (default: from scontrol or $SLURM_CONF; else nodes seen, labelled)."
CAP_CPUS = "Configured CPUs; utilisation is then allocated CPUs over this."
START_HELP = "Period start (YYYY-MM-DD[THH:MM[:SS]], cluster local time)."
END_HELP = "Period end, exclusive."


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.add_typer(sacct_app, name="sacct")
    app.add_typer(report_app, name="report")


def _when(value: str | None, option: str) -> datetime | None:
    from sim.errors import InputError

    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError as exc:
        raise InputError(
            "options", [f"{option} must be an ISO date or time, got {value!r}"]
        ) from exc


def _period(start: str | None, end: str | None) -> tuple[datetime | None, datetime | None]:
    from sim.errors import InputError

    begin, finish = _when(start, "--start"), _when(end, "--end")
    if begin is not None and finish is not None and finish <= begin:
        raise InputError("options", [f"--end ({finish}) must be after --start ({begin})"])
    return begin, finish


def _capacity(nodes: int | None, cpus: int | None) -> Any:
    """The stated capacity, else the one the live cluster or $SLURM_CONF gives, else None."""
    from wass_chat.analytics.capacity import discover_capacity, stated_capacity

    return stated_capacity(nodes, cpus) or discover_capacity()


def _settings() -> Any:
    from wass_chat.config import settings

    return settings()


@sacct_app.command("import")
def import_command(
    start: str | None = typer.Option(None, "--start", help=START_HELP + " Default: 30 days ago."),
    end: str | None = typer.Option(None, "--end", help=END_HELP + " Default: now."),
    from_file: Path | None = typer.Option(
        None, "--from-file", help="A `sacct -P` export to import."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import accounting data into the local cache (from sacct, month by month, or a file)."""
    from dataclasses import asdict

    from rich.progress import Progress

    from sim.errors import InputError
    from wass_chat.sacct.cache import SacctCache
    from wass_chat.sacct.ingest import ingest_file, ingest_slurm

    cache = SacctCache(_settings().sacct_dir)
    if from_file is not None:
        if not from_file.is_file():
            raise InputError(str(from_file), ["no such file"])
        record = ingest_file(cache, from_file)
    else:
        begin, finish = _period(start, end)
        finish = finish or datetime.now().replace(microsecond=0)
        begin = begin or finish - timedelta(days=30)
        with Progress(console=err_console, transient=True) as bar:
            task = bar.add_task("sacct", total=None)
            record = ingest_slurm(
                cache,
                begin,
                finish,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    emit(asdict(record), as_json, _render_import)


def _render_import(record: dict[str, Any]) -> None:
    console.print(
        f"imported {record['rows_written']:,} rows from {record['source']} "
        f"({record['lines']:,} lines, {record['malformed']:,} malformed)"
    )
    for example in record["malformed_examples"]:
        console.print(f"  malformed: {example}", markup=False)
    for name, count in record["bad_values"].items():
        console.print(
            f"  unreadable {name}: {count:,} ({record['bad_value_examples'][name]})", markup=False
        )


@sacct_app.command("synth")
def synth_command(
    jobs: int = typer.Option(..., "--jobs", min=1, help="Number of jobs to generate."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same data)."),
    days: float = typer.Option(30.0, "--days", min=1.0, help="Length of the submission window."),
    steps: bool = typer.Option(False, "--steps", help="Also emit .batch/.extern job steps."),
    output: Path | None = typer.Option(
        None,
        "-o",
        "--output",
        help="FILE.parquet, or a text file for `sacct -P` format; default: the cache.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Generate realistic synthetic accounting data (for benchmarks and demos)."""
    from wass_chat.sacct.cache import ImportRecord, SacctCache, replace_atomically
    from wass_chat.sacct.render import write_sacct_file
    from wass_chat.sacct.synth import synthesize

    began = time.perf_counter()
    table = synthesize(jobs, seed, days=days, with_steps=steps)
    target: str
    if output is None:
        cache = SacctCache(_settings().sacct_dir)
        cache.write(table)
        cache.record_import(
            ImportRecord(
                f"synth(jobs={jobs}, seed={seed})",
                datetime.now().isoformat(timespec="seconds"),
                None,
                None,
                table.height,
                0,
                table.height,
            )
        )
        target = str(cache.root)
    elif output.suffix == ".parquet":
        replace_atomically(output, lambda tmp: table.write_parquet(tmp))
        target = str(output)
    else:
        replace_atomically(output, lambda tmp: write_sacct_file(table, Path(tmp)))
        target = str(output)
    result = {
        "rows": table.height,
        "seed": seed,
        "output": target,
        "seconds": time.perf_counter() - began,
    }
    emit(
        result,
        as_json,
        lambda r: console.print(
            f"wrote {r['rows']:,} rows to {r['output']} in {r['seconds']:.1f} s"
        ),
    )


@sacct_app.command("summary")
def summary_command(
    start: str | None = typer.Option(
        None, "--start", help=START_HELP + " Default: first submission."
    ),
    end: str | None = typer.Option(
        None, "--end", help=END_HELP + " Default: last submission or start."
    ),
    user: str | None = typer.Option(None, "--user", help="Only this user's jobs."),
    account: str | None = typer.Option(None, "--account", help="Only this account's jobs."),
    partition: str | None = typer.Option(None, "--partition", help="Only this partition's jobs."),
    capacity_nodes: int | None = typer.Option(None, "--capacity-nodes", min=1, help=CAP_NODES),
    capacity_cpus: int | None = typer.Option(None, "--capacity-cpus", min=1, help=CAP_CPUS),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Headline statistics and per-chart insights of a period, from the cache."""
    from wass_chat.analytics.analysis import analyze
    from wass_chat.sacct.cache import SacctCache

    begin, finish = _period(start, end)
    analysis = analyze(
        SacctCache(_settings().sacct_dir).scan(until=finish),
        begin,
        finish,
        user,
        account=account,
        partition=partition,
        capacity=_capacity(capacity_nodes, capacity_cpus),
    )
    data = {
        "period": {
            "start": analysis.period.start.isoformat(),
            "end": analysis.period.end.isoformat(),
        },
        "summary": analysis.summary.to_dict(),
        "nodes_seen": analysis.nodes_seen,
        "capacity": analysis.capacity.label(),
        "findings": [f.text + " " + f.recommendation for f in analysis.findings],
        "insights": {c.id: c.insight for c in analysis.charts},
        "anomalies": {a.kind: a.count for a in analysis.anomalies},
    }
    emit(data, as_json, lambda _: _render_summary(analysis))


def _render_summary(analysis: Any) -> None:
    from rich.table import Table

    from wass_chat.report.tables import summary_rows

    table = Table(title=f"Accounting summary, {analysis.period.label()} ({analysis.period.origin})")
    table.add_column("statistic")
    table.add_column("value")
    for label, value in summary_rows(analysis.summary, analysis.nodes_seen):
        table.add_row(label, value)
    console.print(table)
    console.print(f"Capacity: {analysis.capacity.label()}", markup=False)
    for finding in analysis.findings:
        console.print(f"* {finding.text} {finding.recommendation}", markup=False)
    for chart in analysis.charts:
        console.print(f"- {chart.title}: {chart.insight}", markup=False)


@report_app.callback()
def report_command(
    ctx: typer.Context,
    start: str | None = typer.Option(
        None, "--start", help=START_HELP + " Default: first submission."
    ),
    end: str | None = typer.Option(
        None, "--end", help=END_HELP + " Default: after the last submission or start."
    ),
    fmt: str = typer.Option("html", "--format", help="html or md."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Report file to write."),
    user: str | None = typer.Option(None, "--user", help="Only this user's jobs."),
    account: str | None = typer.Option(None, "--account", help="Only this account's jobs."),
    partition: str | None = typer.Option(None, "--partition", help="Only this partition's jobs."),
    capacity_nodes: int | None = typer.Option(None, "--capacity-nodes", min=1, help=CAP_NODES),
    capacity_cpus: int | None = typer.Option(None, "--capacity-cpus", min=1, help=CAP_CPUS),
    offline: bool = typer.Option(
        False, "--offline", help="Never ask the local model to write the summary."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Write the scheduling audit report of a period (from the sacct cache and decision log).

    Without --start/--end the period is the span of submissions. Full anomaly and view tables
    are written as CSV to FILE's stem + ``_tables/``. When the local model answers (Ollama),
    it writes the summary at the top; every number it writes is checked against the tables,
    and the rules' text is used when one fails.
    """
    from sim.errors import InputError
    from wass_chat.agent.report_overview import local_model_writer
    from wass_chat.analytics.period import JobFilter
    from wass_chat.report.write import write_report

    if ctx.invoked_subcommand is not None:
        return
    problems = []
    if fmt not in ("html", "md"):
        problems.append(f"--format must be html or md, got {fmt!r}")
    if output is None:
        problems.append("-o FILE is required")
    if problems:
        raise InputError("options", problems)
    assert output is not None
    begin, finish = _period(start, end)
    cfg = _settings()
    began = time.perf_counter()
    writer, unavailable = (None, "--offline was given") if offline else local_model_writer(cfg)
    files = write_report(
        cfg.sacct_dir,
        cfg.runs_dir,
        output,
        fmt,
        begin,
        finish,
        only=JobFilter(user, account, partition),
        capacity=_capacity(capacity_nodes, capacity_cpus),
        writer=writer,
        writer_unavailable=unavailable,
    )
    result = {
        "output": str(output),
        "files": files,
        "seconds": round(time.perf_counter() - began, 2),
    }
    emit(result, as_json, lambda r: console.print(f"wrote {r['output']} in {r['seconds']:.1f} s"))


@report_app.command("bench")
def bench_command(
    jobs: int = typer.Option(1_500_000, "--jobs", min=1, help="Synthetic jobs."),
    seed: int = typer.Option(0, "--seed", help="Synthesis seed."),
    workdir: Path | None = typer.Option(
        None, "--workdir", help="Keep the files here (default: temp)."
    ),
    draws: int = typer.Option(
        3, "--draws", min=0, help="Open the page this many times in headless Chromium (0: skip)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Time import (sacct -P text -> cache) plus the full HTML report on synthetic jobs, and
    the page's size and time to draw in headless Chromium."""
    import tempfile

    from wass_chat.report.benchmark import run_benchmark

    if workdir is not None:
        result = run_benchmark(jobs, seed, workdir, draws)
    else:
        with tempfile.TemporaryDirectory(prefix="wass-report-bench-") as tmp:
            result = run_benchmark(jobs, seed, Path(tmp), draws)
    emit(result, as_json, _render_bench)


def _render_bench(r: dict[str, Any]) -> None:
    console.print(
        f"{r['jobs']:,} jobs ({r['sacct_file_mb']:.0f} MB of sacct -P text): "
        f"synth {r['synth_s']:.1f} s, "
        f"write text {r['write_text_s']:.1f} s (both untimed setup)"
    )
    console.print(
        f"import {r['import_s']:.1f} s + report {r['report_s']:.1f} s = "
        f"[bold]{r['import_plus_report_s']:.1f} s[/bold] wall (CPU {r['import_cpu_s']:.1f} + "
        f"{r['report_cpu_s']:.1f} s; HTML {r['html_mb']:.1f} MB, "
        f"{r['malformed']} malformed lines, {r['cpus']} CPUs)"
    )
    console.print(
        f"page {r['html_mb']:.2f} MB (plotly.js packed {r['plotly_js_mb']:.2f} MB, figures "
        f"{r['figures_kb']:.0f} kB); "
        + (
            f"drawn in {r['draw_ms_median'] / 1000:.2f} s in headless Chromium (median of "
            f"{len(r['draw_ms'])}: {', '.join(f'{t / 1000:.2f}' for t in r['draw_ms'])} s)"
            if r["draw_ms"]
            else "draw time not measured (no Chromium, or --draws 0)"
        )
    )
