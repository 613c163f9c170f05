"""The demo's runs are the demo's (issue #41, item 4): kept in the demo home, never in a site's
``runs``, ``status``, report or scheduler comparison, while the demo still shows and explains them;
a data home an earlier version filled with demo runs keeps every run of its own.

Real parts throughout: the demo runs as :func:`ensure_demo_runs` plans and simulates them, the
real CLI entry point, the report built from a real sacct cache.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from sim.demo import demo_platform, demo_workflow
from sim.platforms import platform_to_dict
from sim.wfformat import workflow_to_dict
from tests.agent.conftest import UNREACHABLE
from tests.analytics.test_report import make_home
from tests.chromium import render_pages, require_chromium
from tests.support import CliRun, run_cli
from wass_chat.agent.facts.demo_runs import ensure_demo_runs
from wass_chat.agent.facts.sources import Sources
from wass_chat.config import Settings
from wass_chat.demo_home import is_demo_record, move_demo_runs_out
from wass_chat.report.build import ReportData, build_report_from_cache
from wass_chat.report.html import render_html
from wass_chat.report.markdown import render_markdown
from wass_chat.report.tables import comparison_table, runs_table
from wass_chat.runlog import Decision, RunLog, RunRecord

pytestmark = pytest.mark.slow

DEMO_IDS = {
    "demo-genomics-49-heft",
    "demo-montage-60-heft",
    "demo-epigenomics-50-heft",
    "demo-fork-join-20-heft",
}
PERIOD = (datetime(2024, 1, 1), datetime(2030, 1, 1))


def site_run(runs_dir: Path, run_id: str | None = None) -> RunRecord:
    """A run the site submitted: two tasks with Slurm jobs, 25 s from first start to last end."""
    wf, pf = demo_workflow(), demo_platform()
    first, second = wf.topological_order[:2]
    decisions = (
        Decision(
            first,
            pf.nodes[0].name,
            "7001",
            0.0,
            10.0,
            evidence={"scheduler": "heft"},
            state="COMPLETED",
            real_start="2026-11-30T10:00:00",
            real_end="2026-11-30T10:00:12",
        ),
        Decision(
            second,
            pf.nodes[1].name,
            "7002",
            10.0,
            20.0,
            evidence={"scheduler": "heft"},
            state="COMPLETED",
            real_start="2026-11-30T10:00:13",
            real_end="2026-11-30T10:00:25",
        ),
    )
    log = RunLog(runs_dir)
    record = log.create(
        wf.name, workflow_to_dict(wf), platform_to_dict(pf), "heft", 20.0, decisions, run_id=run_id
    )
    return log.update(record.run_id, state="completed")


def legacy_demo_runs(runs_dir: Path, scratch: Path) -> list[str]:
    """Demo runs where versions before the demo home wrote them: in the site's own log."""
    ids = ensure_demo_runs(Settings(home=scratch, ollama_host=UNREACHABLE))
    runs_dir.mkdir(parents=True, exist_ok=True)
    for run_id in ids:
        shutil.copy(scratch / "demo" / "runs" / f"{run_id}.json", runs_dir)
    return ids


def cli(home: Path, *argv: str) -> CliRun:
    """``wass-chat ARGV`` on ``home``, in this process: none of these tests is about it."""
    return run_cli(home, *argv, env={"WASS_OLLAMA_HOST": UNREACHABLE})


def report_of(settings: Settings) -> ReportData:
    return build_report_from_cache(settings.sacct_dir, settings.runs_dir, *PERIOD)


@dataclass(frozen=True)
class Rendered:
    """A report and both its renderings (an HTML rendering draws 12 charts, ~5 s of CPU)."""

    report: ReportData
    html: str
    markdown: str


def rendered(report: ReportData) -> Rendered:
    return Rendered(report, render_html(report), render_markdown(report, None)[0])


def assert_only_site_runs(shown: Rendered, site_ids: set[str]) -> None:
    """The report's runs, its runs table, its comparison and both renderings: the site's only."""
    runs = shown.report.runs.runs
    assert {r.run_id for r in runs} == site_ids
    assert {row[0] for row in runs_table(runs).rows} == site_ids
    assert {row[0] for row in comparison_table(runs).rows} == site_ids
    for text in (shown.html, shown.markdown):
        assert all(site_id in text for site_id in site_ids)
        assert not any(demo_id in text for demo_id in DEMO_IDS)


@pytest.fixture
def site(tmp_path: Path) -> Settings:
    """A site's data home: a sacct cache and one submitted, finished run."""
    make_home(tmp_path, with_run=False)  # the cache at tmp_path/sacct
    return Settings(home=tmp_path, ollama_host=UNREACHABLE)


@dataclass(frozen=True)
class OpenedSite:
    """A site with one run of its own, seen right after the demo was opened on it, and its
    report once demo runs of an earlier version were also copied into its log."""

    site: Settings
    own: RunRecord
    demo_ids: list[str]
    runs_files: list[str]
    demo_files: set[str]
    listed: CliRun
    status: CliRun
    latest_run_id: str | None
    shown: Rendered
    page: Path


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> OpenedSite:
    """Built and rendered once: the tests only read it."""
    site = Settings(home=tmp_path_factory.mktemp("site"), ollama_host=UNREACHABLE)
    make_home(site.home, with_run=False)
    own = site_run(site.runs_dir)
    demo_ids = ensure_demo_runs(site)  # what opening the app on the site does
    runs_files = [p.name for p in site.runs_dir.glob("*.json")]
    demo_files = {p.stem for p in site.demo_runs_dir.glob("*.json")}
    listed = cli(site.home, "runs", "--json", "--no-learn")
    status = cli(site.home, "status", "demo-genomics-49-heft", "--json", "--no-learn")
    latest = Sources(site).latest_run_id()  # "why ...?" without a run: the site's
    legacy_demo_runs(site.runs_dir, tmp_path_factory.mktemp("old-version"))
    shown = rendered(report_of(site))
    page = site.home / "report.html"
    page.write_text(shown.html)
    return OpenedSite(
        site, own, demo_ids, runs_files, demo_files, listed, status, latest, shown, page
    )


def test_the_demo_opened_on_a_site_leaves_its_runs_out_of_everything(opened: OpenedSite) -> None:
    own = opened.own
    assert set(opened.demo_ids) == DEMO_IDS
    assert opened.runs_files == [f"{own.run_id}.json"]
    assert opened.demo_files == DEMO_IDS

    listed, status = opened.listed, opened.status
    assert listed.returncode == 0, listed.stderr
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [own.run_id]
    assert status.returncode == 2 and "no run 'demo-genomics-49-heft'" in status.stderr.lower()

    # its report, with the demo opened and an earlier version's demo runs in its log
    assert_only_site_runs(opened.shown, {own.run_id})
    assert opened.latest_run_id == own.run_id


def test_the_runs_table_is_readable(opened: OpenedSite) -> None:
    own = opened.own
    shown = runs_table(opened.shown.report.runs.runs)
    (row,) = shown.rows
    assert shown.header == (
        "Run",
        "Created",
        "Workflow",
        "Scheduler",
        "Tasks",
        "Jobs",
        "Planned makespan",
        "Actual makespan",
        "State",
    )
    expected = (own.workflow_name, "heft", "2", "2", "20 s", "25 s", "completed")
    assert row[0] == own.run_id and row[2:] == expected
    html = opened.shown.html
    section = html[html.index('id="runs"') : html.index('id="comparison"')]
    assert "{" not in section and '"scheduler"' not in section  # evidence in words, not JSON
    assert "scheduler: heft" in section


def test_a_home_with_demo_runs_from_an_earlier_version_keeps_every_run_of_its_own(
    site: Settings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    own = site_run(site.runs_dir)
    # A site run whose id merely starts like a demo run's (ids are the submitter's to choose):
    # it reached Slurm, so it is the site's, whatever its name.
    named = site_run(site.runs_dir, run_id="demo-genomics-49-custom")
    legacy = legacy_demo_runs(site.runs_dir, tmp_path_factory.mktemp("old-version"))
    site_files = {
        run_id: site.runs_dir.joinpath(f"{run_id}.json").read_bytes()
        for run_id in (own.run_id, named.run_id)
    }
    legacy_bytes = {r: site.runs_dir.joinpath(f"{r}.json").read_bytes() for r in legacy}
    assert not is_demo_record(RunLog(site.runs_dir).get(named.run_id))

    # Before anything moves them, every reader of the site's log ignores them.
    assert_only_site_runs(rendered(report_of(site)), {own.run_id, named.run_id})
    listed = cli(site.home, "runs", "--json", "--no-learn")
    assert {r["run_id"] for r in json.loads(listed.stdout)} == {own.run_id, named.run_id}
    status = cli(site.home, "status", "demo-montage-60-heft", "--json", "--no-learn")
    assert status.returncode == 2 and "is a demo run, not a run of this site" in status.stderr

    # The demo's start moves them to the demo home, as they were; the site's runs stay, intact.
    ensure_demo_runs(site)
    assert {
        run_id: site.runs_dir.joinpath(f"{run_id}.json").read_bytes() for run_id in site_files
    } == site_files
    assert {p.stem for p in site.runs_dir.glob("*.json")} == set(site_files)
    assert {r: site.demo_runs_dir.joinpath(f"{r}.json").read_bytes() for r in legacy} == (
        legacy_bytes
    )
    assert move_demo_runs_out(site.runs_dir, site.demo_runs_dir) == []  # nothing left to move


def assert_runs_table(dom: str, run_id: str, tasks: int) -> None:
    """The runs table of a rendered page's DOM: one row, the site's run, every cell written."""
    start = dom.index('id="runs-table"')
    box = dom[start : dom.index("</table>", start)]
    rows = re.findall(r"<tr>(.*?)</tr>", box, re.S)
    header, body = rows[0], rows[1:]
    assert re.findall(r"<th[^>]*>(.*?)</th>", header) == [
        "Run",
        "Created",
        "Workflow",
        "Scheduler",
        "Tasks",
        "Jobs",
        "Planned makespan",
        "Actual makespan",
        "State",
    ]
    assert len(body) == 1, body
    cells = re.findall(r"<td[^>]*>(.*?)</td>", body[0])
    assert cells[0] == run_id and cells[4] == str(tasks) and cells[5] == str(tasks)
    assert cells[6].endswith(" s") and cells[7].endswith(" s") and cells[8] == "completed"
    assert not [c for c in cells if "{" in c or c in ("None", "null", "")], cells


@pytest.mark.browser
@pytest.mark.xdist_group("chromium")
def test_the_report_page_in_chromium_shows_no_demo_run(opened: OpenedSite) -> None:
    """The page a site reads, in headless Chromium: the demo opened on the site and demo runs
    from an earlier version in its log, yet no demo run name anywhere, and the runs table
    readable."""
    binary = require_chromium()
    own = opened.own
    (shown,) = render_pages(binary, [(opened.page, 1280)])
    assert shown.console == []
    for where in (shown.dom, shown.seen["text"]):
        assert not [d for d in DEMO_IDS if d in where], "a demo run on the site's report"
    assert_runs_table(shown.dom, own.run_id, len(own.decisions))
    assert {"Planned makespan", "Actual makespan"} <= set(shown.seen["headers"])


def test_the_demo_still_shows_and_explains_its_runs(tmp_path: Path) -> None:
    """On a fresh home, as on ``make run``: the demo runs answer as they always did, from the
    demo home's log."""
    question = "why did task merge_bams of run demo-genomics-49-heft go to gpu02?"
    explained = cli(tmp_path, "ask", "--offline", "--json", question)
    assert explained.returncode == 0, explained.stderr
    facts = json.loads(explained.stdout)["facts"]
    assert facts["kind"] == "placement" and facts["run_id"] == "demo-genomics-49-heft"
    assert facts["task"] == "merge_bams" and facts["chosen_node"] == "gpu02"
    assert facts["run_source"] == "planned"  # read from the demo's recorded run
    assert (tmp_path / "demo" / "runs" / "demo-genomics-49-heft.json").is_file()
    assert not (tmp_path / "runs").exists()

    status = cli(tmp_path, "ask", "--offline", "--json", "status of run demo-montage-60-heft")
    assert status.returncode == 0, status.stderr
    facts = json.loads(status.stdout)["facts"]
    assert facts["kind"] == "run_status" and facts["run_id"] == "demo-montage-60-heft"
    assert facts["state_counts"] == {"SIMULATED": len(demo_workflow("montage-60").tasks)}
