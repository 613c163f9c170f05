"""The report's energy view and what-if section (issue 33): present and readable, the same
figures as the chat's energy answer and as `wass-chat whatif cluster` on the same jobs, the
power model's assumptions on the page, one line instead when the accounting has no node lists,
and the flags that skip or widen the replays."""

from __future__ import annotations

import json
from datetime import datetime
from html import escape
from pathlib import Path

import polars as pl
import pytest

from tests.analytics.readable import raw_empties, too_precise
from tests.analytics.test_report import make_home
from tests.support import no_settings_file
from wass_chat.batch.energy_answer import energy_facts
from wass_chat.batch.scenario import DEFAULT_MAX_JOBS
from wass_chat.cli import main
from wass_chat.config import settings
from wass_chat.report.build import ReportData, build_report_from_cache
from wass_chat.report.energy_whatifs import NO_NODES, WhatIfOptions
from wass_chat.report.html import render_html
from wass_chat.report.markdown import render_markdown
from wass_chat.report.whatif_choices import FIXED_WHATIFS
from wass_chat.sacct.cache import SacctCache

START, END = datetime(2024, 1, 1), datetime(2030, 1, 1)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_home(tmp_path_factory.mktemp("report-energy"), with_run=False, replayed=True)


@pytest.fixture(scope="module")
def report(home: tuple[Path, Path]) -> ReportData:
    return build_report_from_cache(*home, START, END)


@pytest.fixture(scope="module")
def html(report: ReportData) -> str:
    """The report's page, rendered once (12 charts, ~5 s of CPU): the tests only read it."""
    return render_html(report)


def section(page: str, name: str) -> str:
    return page.split(f'<section id="{name}"', 1)[1].split("</section>", 1)[0]


def test_the_energy_view_is_the_chats_energy_answer(home, report, html):
    e = report.cluster.energy
    assert e is not None and e.jobs > 0
    period = report.analysis.period
    jobs = SacctCache(home[0]).scan().collect()
    chat = energy_facts(jobs, period.start, period.end, "the period", cluster="jobs")
    assert chat["it_kwh"] == pytest.approx(e.it_kwh)
    assert chat["by_partition"] == e.by_partition.to_dicts()
    assert e.by_partition["energy_kwh"].sum() == pytest.approx(e.jobs_kwh)
    assert e.over_time["it_kwh"].sum() == pytest.approx(e.it_kwh)
    page = section(html, "energy")
    assert f"{e.jobs:,} jobs that ran drew" in page and "kWh" in page
    assert "Modelled, not metered" in page and "PUE 1.3" in page  # the assumptions, on the page
    assert "150 W idle" in page and "(assumed default)" in page
    assert raw_empties(page) == [] and too_precise(page) == []


def test_the_what_ifs_are_the_commands_replays(home, report, html, capsys, monkeypatch, tmp_path):
    rows = report.cluster.whatifs
    assert rows is not None and rows["what_if"].to_list()[:4] == [
        label for label, _ in FIXED_WHATIFS
    ]
    power, predicted, more, fewer = rows.to_dicts()[:4]
    assert power["facility_kwh_after"] < power["facility_kwh_before"]
    assert more["wait_mean_after_h"] <= more["wait_mean_before_h"]
    assert fewer["left_out"] >= 0 and predicted["jobs"] == power["jobs"]
    monkeypatch.setenv("WASS_HOME", str(home[0].parent))
    monkeypatch.setenv("WASS_CONFIG", no_settings_file(tmp_path))
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "no-slurm.conf"))
    settings.cache_clear()
    period = report.analysis.period
    argv = ["whatif", "cluster", "--cluster", "jobs", "--start", period.start.isoformat()]
    argv += ["--end", period.end.isoformat(), "--power-off-after", "30", "--json"]
    capsys.readouterr()
    assert main(argv) == 0
    command = json.loads(capsys.readouterr().out)
    settings.cache_clear()
    assert power["jobs"] == command["baseline"]["jobs"]
    assert power["wait_mean_after_h"] * 3600 == pytest.approx(command["variant"]["waits"]["mean_s"])
    assert power["facility_kwh_after"] == pytest.approx(
        command["variant"]["energy"]["facility_kwh"]
    )
    page = section(html, "whatifs")
    assert "Replayed: the report&#x27;s period" in page
    for label in ("Change in mean wait", "95% CI of the change", "Change in energy"):
        assert f">{label}</th>" in page
    assert "The replay without any change against the record" in page
    assert raw_empties(page) == [] and too_precise(page) == []


def test_markdown_has_both_sections_and_their_tables(report, tmp_path):
    text, _images = render_markdown(report, None)
    energy = text.split("## Energy (modelled from the recorded schedule)", 1)[1]
    assert "### Jobs' energy by partition" in energy and "| Jobs' energy (kWh) |" in energy
    assert "- Modelled, not metered" in energy
    whatifs = text.split("## What-ifs replayed on the jobs of the period", 1)[1]
    assert "| Idle nodes powered off after 30 min (boot 5 min) |" in whatifs


def test_the_flags_skip_or_cap_the_replays(home: tuple[Path, Path]) -> None:
    skipped = build_report_from_cache(*home, START, END, whatifs=WhatIfOptions(enabled=False))
    assert skipped.cluster.energy is not None and skipped.cluster.whatifs is None
    assert "--no-whatifs" in section(render_html(skipped), "whatifs")
    capped = build_report_from_cache(*home, START, END, whatifs=WhatIfOptions(max_jobs=500))
    assert "the last 500 jobs of the report" in capped.cluster.window
    assert capped.cluster.whatifs is not None
    assert (capped.cluster.whatifs["jobs"] <= 500).all()


def test_without_node_lists_both_sections_are_one_line(tmp_path):
    sacct_dir, runs_dir = make_home(tmp_path, with_run=False, replayed=True)
    cache = SacctCache(sacct_dir)
    jobs = cache.scan().collect().with_columns(pl.lit(None, pl.String).alias("node_list"))
    cache.write(jobs)  # the newest row of each job wins: every job now without its nodes
    report = build_report_from_cache(sacct_dir, runs_dir, START, END)
    assert report.cluster.energy is None and report.cluster.absent == NO_NODES
    page = render_html(report)
    energy = section(page, "energy")
    assert energy.count("<p") == 1 and escape(NO_NODES) in energy
    assert "accounting records no node lists" in section(page, "whatifs")


def test_the_cli_default_cap_is_the_chats():
    from wass_chat.cli import report_cmds

    options = report_cmds.report_command.__defaults__ or ()
    assert any(getattr(o, "default", None) == DEFAULT_MAX_JOBS for o in options)


def test_a_baseline_that_is_not_the_site_gives_no_what_if_table(tmp_path):
    """The synthesiser's own record (waits drawn, not scheduled): the unchanged replay misses
    it, so the section says why and shows no table, in HTML and Markdown alike."""
    sacct_dir, runs_dir = make_home(tmp_path, with_run=False)
    report = build_report_from_cache(sacct_dir, runs_dir, START, END)
    cluster = report.cluster
    assert cluster.energy is not None and cluster.whatifs is None
    assert cluster.whatif_absent.startswith("No what-ifs: The unchanged replay waits ")
    assert "no difference is given for the report's what-ifs" in cluster.whatif_absent
    assert "What is missing: the cluster's real description" in cluster.whatif_absent
    page = section(render_html(report), "whatifs")
    assert "<table" not in page and escape(cluster.whatif_absent) in page
    assert cluster.whatif_absent in render_markdown(report, None)[0]
