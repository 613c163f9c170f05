"""The report in a real headless Chromium: not blank, every section and chart drawn, no errors."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.analytics.test_report import CHART_IDS, make_home
from tests.chromium import (
    assert_not_blank,
    assert_rendered,
    console_messages,
    require_chromium,
    run_chromium,
)
from wass_chat.report.build import ReportData, build_report_from_cache
from wass_chat.report.html import SECTIONS, render_html


@pytest.fixture
def binary() -> str:
    return require_chromium()


@pytest.fixture(scope="module")
def report_and_page(tmp_path_factory) -> tuple[ReportData, Path]:
    root = tmp_path_factory.mktemp("browser")
    sacct_dir, runs_dir = make_home(root)
    page = root / "report.html"
    report = build_report_from_cache(
        sacct_dir, runs_dir, datetime(2024, 1, 1), datetime(2030, 1, 1)
    )
    page.write_text(render_html(report))
    return report, page


@pytest.fixture(scope="module")
def report_page(report_and_page) -> Path:
    return report_and_page[1]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.xdist_group("chromium")
def test_every_section_and_chart_renders_without_errors(binary, report_and_page, tmp_path):
    report, page = report_and_page
    done = run_chromium(binary, page, tmp_path / "profile-dom", "--dump-dom")
    assert console_messages(done.stderr) == []
    drawable = [c.id for c in report.analysis.charts if c.points]
    assert len(drawable) >= len(CHART_IDS) - 1  # the fixture may have no pending job
    assert_rendered(done.stdout, [i for i, _ in SECTIONS], drawable)
    assert 'data-drawn-ms="' in done.stdout  # the page's script finished


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.xdist_group("chromium")
def test_screenshot_is_not_blank(binary, report_page, tmp_path):
    shot = tmp_path / "report.png"
    done = run_chromium(binary, report_page, tmp_path / "profile-shot", f"--screenshot={shot}")
    assert console_messages(done.stderr) == []
    assert_not_blank(shot)
