"""`wass-chat report bench`: time importing a sacct -P file plus building the full HTML report.

Wall-clock seconds are the target figure; CPU seconds (all threads) are reported too because they
stay meaningful on a machine shared with other work.

Synthesis and writing the text file are setup (reported, not counted); the timed part is what a
site runs: parse the export into the Parquet cache, then build and write the report from it.
With a headless Chromium on the machine the page is then opened ``draws`` times and the
wall-clock time from navigation until every chart is drawn is reported (:mod:`.draw_time`).
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from wass_chat.report.build import build_report_from_cache
from wass_chat.report.draw_time import draw_time_ms
from wass_chat.report.html import render_html
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.ingest import ingest_file
from wass_chat.sacct.render import write_sacct_file
from wass_chat.sacct.synth import synthesize


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run_benchmark(jobs: int, seed: int, workdir: Path, draws: int = 3) -> dict[str, Any]:
    """Run the benchmark in ``workdir`` (it gets the text file, the cache and the report)."""
    workdir.mkdir(parents=True, exist_ok=True)
    text_file = workdir / "sacct.txt"
    cache_dir = workdir / "sacct-cache"
    report_file = workdir / "report.html"

    t0 = time.perf_counter()
    table = synthesize(jobs, seed)
    t1 = time.perf_counter()
    write_sacct_file(table, text_file)
    del table
    t2, c2 = time.perf_counter(), time.process_time()
    record = ingest_file(SacctCache(cache_dir), text_file)
    t3, c3 = time.perf_counter(), time.process_time()
    report = build_report_from_cache(cache_dir, workdir / "runs")
    report_file.write_text(render_html(report))
    t4, c4 = time.perf_counter(), time.process_time()
    binary = chromium_binary()
    draw = [draw_time_ms(binary, report_file) for _ in range(draws)] if binary else []
    html = report_file.read_text()
    plotly_bytes = len(html.split('id="plotly-gz"', 1)[-1].split("</script>", 1)[0])
    return {
        "jobs": jobs,
        "seed": seed,
        "cpus": os.cpu_count(),
        "sacct_file_mb": text_file.stat().st_size / 2**20,
        "synth_s": t1 - t0,
        "write_text_s": t2 - t1,
        "import_s": t3 - t2,
        "report_s": t4 - t3,
        "import_plus_report_s": t4 - t2,
        "import_cpu_s": c3 - c2,
        "report_cpu_s": c4 - c3,
        "energy_whatifs_cpu_s": report.cluster.cpu_s,
        "rows_imported": record.rows_written,
        "malformed": record.malformed,
        "html_mb": report_file.stat().st_size / 2**20,
        "plotly_js_mb": plotly_bytes / 2**20,
        "figures_kb": len(html.split('id="figures"', 1)[-1].split("</script>", 1)[0]) / 2**10,
        "draw_ms": draw,
        "draw_ms_median": statistics.median(draw) if draw else None,
        "browser": binary,
        "workdir": str(workdir),
    }
