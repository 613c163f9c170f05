"""`wass-chat sacct ...`: import accounting data, synthesize it, summarize it, and per-job
efficiency (what `seff JOBID` and reportseff give).

Heavy libraries (polars) are imported inside the commands so that ``wass-chat --help`` stays
fast.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import typer

from wass_chat.cli.output import console, emit, err_console
from wass_chat.cli.period_options import (
    CAP_CPUS,
    CAP_NODES,
    END_HELP,
    START_HELP,
    capacity,
    parse_period,
    settings,
)

sacct_app = typer.Typer(
    help="Slurm accounting: import into the local cache, synthesize, summarize, efficiency."
)


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.add_typer(sacct_app, name="sacct")


@sacct_app.command("import")
def import_command(
    start: str | None = typer.Option(None, "--start", help=START_HELP + " Default: 30 days ago."),
    end: str | None = typer.Option(None, "--end", help=END_HELP + " Default: now."),
    from_file: Path | None = typer.Option(
        None,
        "--from-file",
        help="A sacct export: -P/-p, any --delimiter, any column set and order; its header "
        "line names the columns (else give --format).",
    ),
    fields: str | None = typer.Option(
        None,
        "--format",
        help="A headerless export's columns, as given to sacct (JobID,State,Elapsed,...).",
    ),
    delimiter: str | None = typer.Option(
        None, "--delimiter", help="The export's delimiter (default: read from its header)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import accounting data into the local cache (from sacct, month by month, or a file).

    A file from which nothing can be read is refused (exit 2) and the cache is left as it was.
    """
    from dataclasses import asdict

    from rich.progress import Progress

    from sim.errors import InputError
    from wass_chat.sacct.cache import SacctCache
    from wass_chat.sacct.ingest import ingest_file, ingest_slurm
    from wass_chat.sacct.layout import parse_format

    cache = SacctCache(settings().sacct_dir)
    if from_file is not None:
        if not from_file.is_file():
            raise InputError(str(from_file), ["no such file"])
        columns = parse_format(fields) if fields is not None else None
        record = ingest_file(cache, from_file, delimiter, columns)
    else:
        if fields is not None or delimiter is not None:
            raise InputError("options", ["--format and --delimiter describe a --from-file"])
        begin, finish = parse_period(start, end)
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
        f"({record['lines']:,} lines, {record['malformed']:,} malformed)",
        markup=False,
    )
    if record.get("layout"):
        console.print(f"  read as: {record['layout']}", markup=False)
    if record.get("unknown_columns"):
        console.print(f"  columns not used: {', '.join(record['unknown_columns'])}", markup=False)
    if record["malformed"]:
        console.print(
            f"  malformed lines: {line_ranges(record.get('malformed_lines', ()))}", markup=False
        )
    for example in record["malformed_examples"]:
        console.print(f"  malformed: {example}", markup=False)
    for name, count in record["bad_values"].items():
        console.print(
            f"  unreadable {name}: {count:,} ({record['bad_value_examples'][name]})", markup=False
        )
    if record.get("out_of_range"):
        console.print(
            f"  skipped {record['out_of_range']:,} rows with a time out of range (before 1990 "
            f"or over a year ahead): {', '.join(record['out_of_range_examples'])}",
            markup=False,
        )


def line_ranges(numbers: Any) -> str:
    """``[3, 4, 5, 9]`` -> ``3-5, 9``."""
    spans: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            spans.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        spans.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(spans)


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
    import polars as pl

    from sim.atomic_files import write_output_by
    from wass_chat.sacct.cache import ImportRecord, SacctCache
    from wass_chat.sacct.render import write_sacct_file
    from wass_chat.sacct.synth import synthesize

    began = time.perf_counter()
    table = synthesize(jobs, seed, days=days, with_steps=steps)
    target: str
    if output is None:
        cache = SacctCache(settings().sacct_dir)
        record = ImportRecord(
            f"synth(jobs={jobs}, seed={seed})",
            datetime.now().isoformat(timespec="seconds"),
            None,
            None,
            table.height,
            0,
            table.height,
        )
        cache.write(table.with_columns(pl.lit("synthetic").alias("source")), record)
        target = str(cache.root)
    elif output.suffix == ".parquet":
        write_output_by(output, lambda tmp: table.write_parquet(tmp))
        target = str(output)
    else:
        write_output_by(output, lambda tmp: write_sacct_file(table, tmp))
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
    from wass_chat.sacct.cache_names import check_filter_names

    begin, finish = parse_period(start, end)
    cache = SacctCache(settings().sacct_dir)
    check_filter_names(cache.scan(), user=user, account=account, partition=partition)
    analysis = analyze(
        cache.scan(until=finish),
        begin,
        finish,
        user,
        account=account,
        partition=partition,
        capacity=capacity(capacity_nodes, capacity_cpus),
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

    from wass_chat.report.tables import summary_table

    table = Table(title=f"Accounting summary, {analysis.period.label()} ({analysis.period.origin})")
    summary = summary_table(analysis.summary, analysis.nodes_seen)
    for header in summary.header:
        table.add_column(header)
    for row in summary.rows:
        table.add_row(*row)
    console.print(table)
    console.print(f"Capacity: {analysis.capacity.label()}", markup=False)
    for finding in analysis.findings:
        console.print(f"* {finding.text} {finding.recommendation}", markup=False)
    for chart in analysis.charts:
        console.print(f"- {chart.title}: {chart.insight}", markup=False)


@sacct_app.command("efficiency")
def efficiency_command(
    job_ids: list[str] = typer.Argument(
        None, help="Job ids (123, 123_4, or an array's 123 for all its tasks). Default: all."
    ),
    user: str | None = typer.Option(None, "--user", help="Only this user's jobs."),
    account: str | None = typer.Option(None, "--account", help="Only this account's jobs."),
    start: str | None = typer.Option(None, "--start", help=START_HELP + " (submission)"),
    end: str | None = typer.Option(None, "--end", help=END_HELP),
    limit: int = typer.Option(
        20, "--limit", min=1, help="Jobs listed without ids, most wasted core-hours first."
    ),
    live: bool = typer.Option(
        True,
        "--live/--no-live",
        help="Ask sacct for ids the cache does not hold (when Slurm answers).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (every job, no --limit)."),
) -> None:
    """CPU, memory and time efficiency per job, with advice on its requests.

    CPU: TotalCPU / (Elapsed x CPUs); memory: the largest step's total over its tasks
    (TRESUsageInTot, else MaxRSS x NTasks) / the job's whole memory; time: Elapsed /
    Timelimit. docs/analytics.md compares each with seff and reportseff.
    """
    from wass_chat.analytics.job_efficiency import find_jobs

    begin, finish = parse_period(start, end)
    found = find_jobs(settings().sacct_dir, job_ids or (), user, account, begin, finish, live=live)
    data = [job.to_dict() for job in found]
    emit(data, as_json, lambda rows: _render_efficiency(rows, limit, bool(job_ids)))


def _render_efficiency(rows: list[dict[str, Any]], limit: int, by_id: bool) -> None:
    from wass_chat.analytics.job_efficiency import describe_job

    if not rows:
        console.print("No finished job matches.")
        return
    shown = rows if by_id else rows[:limit]
    for row in shown:
        console.print(describe_job(row), markup=False)
        console.print()
    if len(shown) < len(rows):
        console.print(
            f"({len(rows) - len(shown):,} more jobs; --limit N or --json for all)", markup=False
        )
