"""The audit report: every section present, charts embedded, runs and scheduler comparison wired."""

from __future__ import annotations

from datetime import datetime
from itertools import pairwise
from pathlib import Path

import pytest

from sim.demo import demo_platform, demo_workflow
from sim.platforms import platform_to_dict
from sim.wfformat import workflow_to_dict
from tests.batch.replayed_record import with_replayed_starts
from wass_chat.report.build import build_report_from_cache
from wass_chat.report.html import SECTIONS, render_html, shown_sections
from wass_chat.report.markdown import render_markdown
from wass_chat.runlog import Decision, RunLog
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.ingest import ingest_file
from wass_chat.sacct.render import write_sacct_file
from wass_chat.sacct.synth import synthesize

CHART_IDS = (
    "chart-states-per-user",
    "chart-wait-by-state",
    "chart-walltime",
    "chart-nodes-vs-elapsed",
    "chart-utilisation",
    "chart-top-users",
    "chart-top-accounts",
    "chart-rates",
    "chart-wait-by-partition",
    "chart-pending-reasons",
    "chart-backfill",
    "chart-efficiency",
    "chart-wasted-core-hours",
)


def make_home(root: Path, with_run: bool = True, replayed: bool = False) -> tuple[Path, Path]:
    """A sacct cache imported from a synthetic export with two damaged lines, and a decision log.
    ``replayed``: the jobs' starts those of their replay, so what-ifs have a baseline that
    matches the record (tests/batch/replayed_record.py)."""
    sacct_dir, runs_dir = root / "sacct", root / "runs"
    export = root / "export.txt"
    jobs = synthesize(3000, seed=7, start=datetime(2024, 1, 1), days=10)
    write_sacct_file(with_replayed_starts(jobs) if replayed else jobs, export)
    with export.open("a") as out:
        out.write("999|truncated|line\n|no|job|id\n")
    ingest_file(SacctCache(sacct_dir), export)
    if with_run:
        wf, pf = demo_workflow(), demo_platform()
        first = wf.tasks[0].id
        decisions = (
            Decision(
                first,
                pf.nodes[0].name,
                "1000001",
                0.0,
                12.5,
                alternatives={pf.nodes[1].name: 14.0},
                evidence={"cases": ["case-17"], "rank": 3.2},
            ),
        )
        RunLog(runs_dir).create(
            wf.name, workflow_to_dict(wf), platform_to_dict(pf), "heft", 123.4, decisions
        )
    return sacct_dir, runs_dir


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> tuple[Path, Path]:
    return make_home(tmp_path_factory.mktemp("report-home"))


def test_report_data_wires_runs_comparison_and_quality(home):
    sacct_dir, runs_dir = home
    report = build_report_from_cache(
        sacct_dir, runs_dir, datetime(2024, 1, 1), datetime(2030, 1, 1)
    )
    assert report.quality.malformed == 2 and report.quality.lines == 3002
    assert [c.id for c in report.analysis.charts] == list(CHART_IDS)
    assert report.runs.not_wired == ()
    (run,) = report.runs.runs
    assert run.scheduler == "heft" and run.decisions[0].job_id == "1000001"
    assert "case-17" in run.decisions[0].evidence and ": 14 s" in run.decisions[0].alternatives
    assert {"heft", "cpop", "slurm"} <= set(run.makespans)
    assert all(m > 0 for m in run.makespans.values())


def test_html_is_self_contained_with_every_section(home):
    sacct_dir, runs_dir = home
    html = render_html(
        build_report_from_cache(sacct_dir, runs_dir, datetime(2024, 1, 1), datetime(2030, 1, 1))
    )
    for section_id, title in SECTIONS:
        assert f'<section id="{section_id}"' in html and title in html
    for chart_id in CHART_IDS:
        assert f'id="{chart_id}"' in html
    assert (
        "<script src" not in html
        and "<link" not in html
        and "cdn.plot.ly" not in html.split("</script>")[-1]
    )
    assert "Plotly.newPlot" in html and "Malformed lines (dropped)" in html
    assert "truncated|line" in html  # malformed example shown


def test_a_period_without_runs_has_no_run_sections(tmp_path):
    sacct_dir, runs_dir = make_home(tmp_path, with_run=False)
    report = build_report_from_cache(sacct_dir, runs_dir)
    html = render_html(report)
    assert "runs" not in shown_sections(report) and "comparison" not in shown_sections(report)
    assert 'id="runs"' not in html and 'href="#comparison"' not in html
    text, _ = render_markdown(report, None)
    assert "## Workflow runs" not in text and "## Policy vs" not in text


def test_markdown_with_png_charts(home, tmp_path):
    sacct_dir, runs_dir = home
    report = build_report_from_cache(
        sacct_dir, runs_dir, datetime(2024, 1, 1), datetime(2030, 1, 1)
    )
    text, images = render_markdown(report, tmp_path / "r_assets")
    assert set(images) == {f"{c.id}.png" for c in report.analysis.charts if c.points}
    assert len(images) >= len(CHART_IDS) - 1  # the fixture may have no pending job
    assert all(data.startswith(b"\x89PNG") and len(data) > 5000 for data in images.values())
    for _, title in SECTIONS:
        assert f"## {title}" in text
    assert "](r_assets/chart-walltime.png)" in text


def test_markdown_reads_like_the_page(home, tmp_path):
    """The Markdown report takes its headers and cells from the same columns table."""
    from tests.analytics.readable import raw_empties, too_precise
    from wass_chat.report.columns import COLUMNS

    sacct_dir, runs_dir = home
    report = build_report_from_cache(
        sacct_dir, runs_dir, datetime(2024, 1, 1), datetime(2030, 1, 1)
    )
    text, _ = render_markdown(report, None)
    body = text.split("## Methods")[0]
    headers = [line for line, rule in pairwise(body.splitlines()) if rule.startswith("|---")]
    cells = {c.strip() for line in headers for c in line.strip("|").split(" | ")}
    assert headers and cells <= {c.label for c in COLUMNS.values()}, cells
    prose = "\n".join(line for line in body.splitlines() if not line.startswith("- `"))
    assert raw_empties(prose) == [] and too_precise(prose) == []


def test_run_records_stamped_in_utc_are_placed_in_local_time() -> None:
    from wass_chat.report.runs import local_time

    stamp = "2026-01-02T03:04:05+00:00"
    assert local_time(stamp) == datetime.fromtimestamp(datetime.fromisoformat(stamp).timestamp())
    assert local_time("2026-01-02T03:04:05") == datetime(2026, 1, 2, 3, 4, 5)
