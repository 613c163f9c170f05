"""The report in a real headless Chromium: not blank, every section and chart drawn, no errors."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from tests.analytics.test_report import CHART_IDS, make_home
from tests.support import require
from wass_chat.report.build import build_report_from_cache
from wass_chat.report.html import SECTIONS, render_html

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=8000",
    "--window-size=1280,6000",
)


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run_chromium(
    binary: str, page: Path, profile: Path, *action: str
) -> subprocess.CompletedProcess[str]:
    argv = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *action, page.as_uri()]
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, check=True)


def console_messages(stderr: str) -> list[str]:
    """Lines Chromium logs for the page's console (errors, uncaught exceptions, warnings)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.fixture
def binary() -> str:
    """The Chromium executable (skips locally, fails in CI, when absent)."""
    found = chromium()
    require(found is not None, "headless Chromium (Debian's chromium) not installed")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    sacct_dir, runs_dir = make_home(root)
    page = root / "report.html"
    page.write_text(
        render_html(
            build_report_from_cache(sacct_dir, runs_dir, datetime(2024, 1, 1), datetime(2030, 1, 1))
        )
    )
    return page


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.xdist_group("chromium")
def test_every_section_and_chart_renders_without_errors(binary, report_page, tmp_path):
    done = run_chromium(binary, report_page, tmp_path / "profile-dom", "--dump-dom")
    dom = done.stdout
    assert console_messages(done.stderr) == []
    for section_id, _ in SECTIONS:
        assert f'id="{section_id}"' in dom
    for chart_id in CHART_IDS:
        start = dom.index(f'id="{chart_id}"')
        following = dom[start : dom.find("</figure>", start)]
        assert 'class="main-svg"' in following, f"{chart_id} has no plotly svg"
        assert re.search(r'class="(trace|scatterlayer|barlayer)', following), (
            f"{chart_id} drew no trace"
        )


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.xdist_group("chromium")
def test_screenshot_is_not_blank(binary, report_page, tmp_path):
    shot = tmp_path / "report.png"
    done = run_chromium(binary, report_page, tmp_path / "profile-shot", f"--screenshot={shot}")
    assert console_messages(done.stderr) == []
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert pixels.shape[0] >= 1000
    assert pixels.std() > 10  # a blank or single-colour page has ~0 variance
    rows_with_ink = (pixels < 200).any(axis=1).mean()
    assert rows_with_ink > 0.2
