"""`wass-chat report ...`: the scheduling audit report and its benchmark.

Heavy libraries (polars, plotly, matplotlib) are imported inside the commands so that
``wass-chat --help`` stays fast.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from wass_chat.cli.output import console, emit
from wass_chat.cli.period_options import (
    CAP_CPUS,
    CAP_NODES,
    END_HELP,
    START_HELP,
    capacity,
    parse_period,
    settings,
)

report_app = typer.Typer(
    help="Scheduling audit report (self-contained HTML, or Markdown with PNG charts).",
    invoke_without_command=True,
)


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.add_typer(report_app, name="report")


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
    no_whatifs: bool = typer.Option(
        False, "--no-whatifs", help="Skip the what-if replays (the energy view stays)."
    ),
    whatif_jobs: int = typer.Option(
        20_000,
        "--whatif-jobs",
        min=0,
        help="Replay the what-ifs on the period's last N jobs (0: all of them).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Write the scheduling audit report of a period (from the sacct cache and decision log).

    Without --start/--end the period is the span of submissions. Full anomaly and view tables
    are written as CSV to FILE's stem + ``_tables/``. When the local model answers (Ollama),
    it writes the summary at the top; every number it writes is checked against the tables,
    and the rules' text is used when one fails. The energy view and the what-ifs (power saving,
    predicted walltimes, 10% more or fewer nodes, replayed on the period's last 20,000 jobs)
    need node lists in the accounting data.
    """
    from sim.atomic_files import require_folder
    from sim.errors import InputError
    from wass_chat.agent.report_overview import local_model_writer
    from wass_chat.analytics.period import JobFilter
    from wass_chat.report.energy_whatifs import WhatIfOptions
    from wass_chat.report.write import write_report
    from wass_chat.sacct.cache import SacctCache
    from wass_chat.sacct.cache_names import check_filter_names

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
    require_folder(output)  # before asking the model or reading the cache
    begin, finish = parse_period(start, end)
    cfg = settings()
    check_filter_names(  # before anything is written
        SacctCache(cfg.sacct_dir).scan(), user=user, account=account, partition=partition
    )
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
        capacity=capacity(capacity_nodes, capacity_cpus),
        writer=writer,
        writer_unavailable=unavailable,
        whatifs=WhatIfOptions(not no_whatifs, whatif_jobs or None),
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
        f"{r['report_cpu_s']:.1f} s, of which energy and what-ifs "
        f"{r['energy_whatifs_cpu_s']:.1f} s; HTML {r['html_mb']:.1f} MB, "
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
