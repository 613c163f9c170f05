"""The audit report from the real cluster's accounting (issue 8), end to end.

A workflow goes through ``wass-chat submit`` (CLI, real decision log), with one failing job and
one whose name holds ``|`` (sacct -P cannot quote it: a genuinely malformed accounting line).
While they run, scontrol and squeue are polled; then ``wass-chat sacct import`` (CLI, live
sacct, no file) fills the cache, which must agree with what the controller reported; the report
built from it shows the run's decisions and the malformed line, and renders in headless
Chromium with every section and chart drawn and no console message. The same home had the demo
opened on it and holds demo runs an earlier version wrote into its log: the report, read in
Chromium, shows the site's run in a readable runs table and no demo run (issue #41, item 4).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from html import unescape
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from sim.wfformat import write_workflow
from tests.agent.test_demo_home import DEMO_IDS, assert_runs_table, legacy_demo_runs
from tests.chromium import assert_not_blank, assert_rendered, render_pages, require_chromium
from tests.slurm.conftest import FINAL, Cluster, layered_workflow, wait_for_final
from tests.support import run_cli
from wass_chat.analytics.period import FAILURE_STATES, REFUSED, load_period
from wass_chat.answers.checks.overview_check import overview_problems
from wass_chat.report import tables
from wass_chat.report.build import ReportData, build_report_from_cache
from wass_chat.report.html import render_html, shown_sections
from wass_chat.report.overview_figures import recomputed_figures
from wass_chat.slurm.commands import SlurmCommands

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]

ODD_NAME = "audit|odd"


@dataclass(frozen=True)
class Audit:
    home: Path
    start: datetime
    end: datetime
    run_id: str
    job_of: dict[str, str]
    """Task -> job id of the workflow run."""
    failing_job: str
    odd_job: str
    controller: dict[str, dict[str, str]]
    """Last ``scontrol show job`` record of every job (all final)."""
    running_on: dict[str, str]
    """Job id -> node list squeue showed while the job was RUNNING."""
    imported: dict[str, Any]
    """``wass-chat sacct import --json`` output."""


def wass_chat(home: Path, *argv: str) -> object:
    """Run the real CLI (WASS_HOME=home, in this process) and return its ``--json`` document."""
    done = run_cli(home, *argv, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def watch(
    commands: SlurmCommands, job_ids: list[str], timeout: float = 90.0
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """Poll scontrol and squeue until every job is final: last records, nodes seen running."""
    running_on: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while True:
        records = commands.show_jobs(job_ids)
        for job_id, entry in commands.queue(job_ids).items():
            if entry.state == "RUNNING":
                running_on[job_id] = entry.nodes
        if len(records) == len(job_ids) and all(
            r["JobState"] in FINAL and r.get("EndTime") not in (None, "Unknown")
            for r in records.values()
        ):
            return records, running_on
        assert time.monotonic() < deadline, {j: r.get("JobState") for j, r in records.items()}
        time.sleep(0.3)


@pytest.fixture(scope="module")
def audit(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Audit]:
    root = tmp_path_factory.mktemp("audit")
    home = root / "home"
    start = datetime.now().replace(microsecond=0) - timedelta(seconds=5)
    path = root / "audit.json"
    write_workflow(layered_workflow("audit", (2, 3, 1), (1.0, 3.0), seed=5), path)
    submitted = wass_chat(home, "submit", str(path), "--yes", "--scale", "0.5")
    assert isinstance(submitted, dict)
    job_of: dict[str, str] = submitted["jobs"]
    commands = SlurmCommands()
    extra = ["-N1", "--mem=64M", f"--output={root}/%j.out"]
    failing = commands.sbatch(["--job-name", "audit-fails", *extra, "--wrap=sleep 1; exit 3"])
    odd = commands.sbatch(["--job-name", ODD_NAME, *extra, "--wrap=sleep 1"])
    refused = subprocess.run(
        ["sbatch", "--mem=64G", "--output=/dev/null", "--wrap=true"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode != 0, refused.stdout  # no node has 64G: sacct keeps it as FAILED
    job_ids = [*job_of.values(), failing, odd]
    controller, running_on = watch(commands, job_ids)
    wait_for_final(job_ids[:-1], timeout=30)  # sacct lags the controller; the odd line can't parse
    status = wass_chat(home, "status", submitted["run_id"])  # also records states in the log
    assert isinstance(status, dict) and status["sim_to_real"]["timing_source"] == "job stamps"
    # The demo opened on this site (it records its runs), and demo runs an earlier version left
    # in the site's own log: neither may reach the report.
    asked = wass_chat(home, "ask", "--offline", "status of run demo-genomics-49-heft")
    assert isinstance(asked, dict) and asked["facts"]["kind"] == "run_status"
    legacy_demo_runs(home / "runs", root / "old-version")
    end = datetime.now().replace(microsecond=0) + timedelta(minutes=1)
    imported = wass_chat(
        home, "sacct", "import", "--start", start.isoformat(), "--end", end.isoformat()
    )
    assert isinstance(imported, dict)
    yield Audit(
        home,
        start,
        end,
        submitted["run_id"],
        job_of,
        failing,
        odd,
        controller,
        running_on,
        imported,
    )


@pytest.fixture(scope="module")
def report(audit: Audit) -> ReportData:
    return build_report_from_cache(
        audit.home / "sacct", audit.home / "runs", audit.start, audit.end
    )


@pytest.fixture(scope="module")
def html(report: ReportData) -> str:
    """The report's HTML, rendered once (12 charts, ~5 s of CPU): the tests only read it."""
    return render_html(report)


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_import_from_live_sacct_agrees_with_the_controller(audit: Audit) -> None:
    imported = audit.imported
    assert imported["source"] == "sacct" and imported["malformed"] >= 1
    assert any(ODD_NAME in line for line in imported["malformed_examples"])
    jobs = {
        r["job_id"]: r
        for r in pl.read_parquet(audit.home / "sacct" / "month=*" / "jobs.parquet")
        .filter(~pl.col("is_step"))
        .to_dicts()
    }
    expected = [*audit.job_of.values(), audit.failing_job]
    assert set(expected) <= set(jobs) and audit.odd_job not in jobs  # its line was malformed
    for job_id in expected:
        seen, row = audit.controller[job_id], jobs[job_id]
        assert row["state"] == seen["JobState"], job_id
        assert row["node_list"] == seen["NodeList"], job_id
        for column, key in (("submit", "SubmitTime"), ("start", "StartTime"), ("end", "EndTime")):
            assert row[column] == when(seen[key]), (job_id, column)
    assert jobs[audit.failing_job]["state"] == "FAILED"
    assert jobs[audit.failing_job]["exit_status"] == 3
    assert audit.running_on, "squeue never showed a running job"
    for job_id, nodes in audit.running_on.items():
        if job_id in jobs:
            assert jobs[job_id]["node_list"] == nodes
    for task, job_id in audit.job_of.items():
        assert f"task={task};" in jobs[job_id]["comment"]


def test_report_shows_the_run_decisions_and_the_malformed_line(
    audit: Audit, report: ReportData, html: str
) -> None:
    runs = {r.run_id: r for r in report.runs.runs}
    assert list(runs) == [audit.run_id]  # the site's run, no demo run
    run = runs[audit.run_id]
    assert run.jobs == len(audit.job_of) and run.actual_makespan and run.actual_makespan > 0
    assert {d.job_id for d in run.decisions} == set(audit.job_of.values())
    assert all(d.alternatives for d in run.decisions) and run.makespans
    assert {d.state for d in run.decisions} == {"COMPLETED"}  # from `wass-chat status`
    assert report.quality.malformed >= 1
    assert any(ODD_NAME in e for e in report.quality.examples)
    summary = report.analysis.summary
    assert summary.jobs >= len(audit.job_of) + 1
    assert summary.over_request_jobs > 0  # sleep jobs ask for a finite --time
    walltime = next(c for c in report.analysis.charts if c.id == "chart-walltime")
    assert not walltime.insight.startswith("No completed job"), walltime.insight
    assert audit.run_id in html and ODD_NAME in html.replace("&#x27;", "'")


def test_report_summary_figures_are_the_recomputed_ones(audit: Audit, report: ReportData) -> None:
    """Every figure of the summary paragraph equals one recomputed from the tables, and the
    refused submission is a refusal, in no rate: the failed job is the one whose script exited
    3. (Counts are not pinned: another module's jobs of the same seconds may be in the period.)"""
    cache = pl.scan_parquet(audit.home / "sacct" / "month=*" / "jobs.parquet")
    loaded = load_period(cache, report.analysis.period)
    state_of = dict(loaded.select("job_id", "state").iter_rows())
    refused = loaded.filter(pl.col("req_tres").str.contains("mem=64G"))
    assert refused.height >= 1 and set(refused["state"]) == {REFUSED}, refused
    assert state_of[audit.failing_job] == "FAILED"
    summary = report.analysis.summary
    states = summary.state_counts
    assert summary.refused == states[REFUSED] >= 1
    failed = sum(states.get(s, 0) for s in FAILURE_STATES)
    assert summary.failure_rate == pytest.approx(failed / summary.finished)
    figures = recomputed_figures(report.analysis)
    assert overview_problems(report.overview.text, figures) == [], report.overview.text
    table = dict(tables.summary_table(summary, report.analysis.nodes_seen, None).rows)
    assert table["Refused by Slurm at submission (never ran)"] == f"{summary.refused:,}"


def test_report_renders_in_headless_chromium(report: ReportData, html: str, tmp_path: Path) -> None:
    """One Chromium draws, reads and photographs the page (two launches took ~100 s of the
    suite per version on the loaded machine)."""
    binary = require_chromium()
    page = tmp_path / "audit.html"
    page.write_text(html)
    (done,) = render_pages(binary, [(page, 1280)])
    assert done.console == []
    shown = re.search(r'<div class="overview"[^>]*>(.*?)</div>', done.dom, re.S)
    assert shown is not None, "no summary in the rendered page"
    text = unescape(re.sub(r"<[^>]+>", " ", shown.group(1)))
    assert " ".join(text.split()) == " ".join(report.overview.text.split())
    assert overview_problems(text, recomputed_figures(report.analysis)) == [], text
    drawable = [c.id for c in report.analysis.charts if c.points]  # empty ones say so instead
    assert_rendered(done.dom, shown_sections(report), drawable)
    assert not [d for d in DEMO_IDS if d in done.dom], "a demo run on the site's report"
    assert_runs_table(done.dom, report.runs.runs[0].run_id, len(report.runs.runs[0].decisions))
    assert_not_blank(done.screenshot)
