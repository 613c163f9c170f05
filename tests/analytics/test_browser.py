"""The report as a person reads it, in one headless Chromium for every check.

Two reports: a synthetic one with a wass-chat run (every section), read at a desktop and a
narrow window, and one from another site's real export (hb-jobinfo, imported with its
--format). On each: every section and chart drawn without a console message, a screenshot that
is not blank, and what the reader sees: no ``None``, no float more precise than its unit needs,
every column header a human label from the columns table, no empty section, and a page no wider
than the window (wide tables scroll inside their own box).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.analytics.conftest import FIXTURES
from tests.analytics.readable import raw_empties, too_precise
from tests.analytics.test_report import CHART_IDS, make_home
from tests.chromium import (
    RenderedPage,
    assert_not_blank,
    assert_rendered,
    render_pages,
    require_chromium,
)
from wass_chat.report.build import ReportData, build_report_from_cache
from wass_chat.report.columns import COLUMNS
from wass_chat.report.html import render_html, shown_sections
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.ingest import ingest_file
from wass_chat.sacct.layout import parse_format

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("chromium")]

HB_FORMAT = (
    "JobID,JobName,User,Partition,NodeList,NNodes,NCPUs,NTasks,State,Submit,Start,End,Timelimit,"
    "Elapsed,TotalCPU,CPUTime,UserCPU,SystemCPU,ReqMem,MaxRSS,MaxVMSize,ReqTRES,AllocTRES,"
    "TRESUsageInMax,TRESUsageInTot,TRESUsageOutTot,MaxDiskRead,MaxDiskWrite,MaxRSSNode,"
    "MaxRSSTask,MaxVMSizeNode,MaxVMSizeTask,MaxDiskReadNode,MaxDiskReadTask,MaxDiskWriteNode,"
    "MaxDiskWriteTask,Comment"
)
NARROW = 800
"""A narrow window (a laptop's half screen): the tables must not widen the page even there."""


def _page(report: ReportData, path: Path) -> Path:
    path.write_text(render_html(report))
    return path


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, tuple[ReportData, RenderedPage]]:
    binary = require_chromium()
    root = tmp_path_factory.mktemp("browser")
    sacct_dir, runs_dir = make_home(tmp_path_factory.mktemp("browser-synthetic"))
    synthetic = build_report_from_cache(
        sacct_dir, runs_dir, datetime(2024, 1, 1), datetime(2030, 1, 1)
    )
    real_cache = SacctCache(root / "real" / "sacct")
    ingest_file(
        real_cache, FIXTURES / "real" / "hb_jobinfo_sacct.txt", None, parse_format(HB_FORMAT)
    )
    real = build_report_from_cache(root / "real" / "sacct", root / "real" / "runs")
    synthetic_page = _page(synthetic, root / "synthetic.html")  # one render, two widths
    pages = [
        (synthetic, synthetic_page, 1280),
        (synthetic, synthetic_page, NARROW),
        (real, _page(real, root / "real.html"), 1280),
    ]
    shown = render_pages(binary, [(page, width) for _, page, width in pages])
    names = ("synthetic", "synthetic-narrow", "real")
    return {n: (r, s) for n, (r, _, _), s in zip(names, pages, shown, strict=True)}


PAGES = ("synthetic", "synthetic-narrow", "real")


@pytest.mark.parametrize("name", PAGES)
def test_every_section_and_chart_renders_without_errors(rendered, name):
    report, page = rendered[name]
    assert page.console == []
    drawable = [c.id for c in report.analysis.charts if c.points]
    assert_rendered(page.dom, shown_sections(report), drawable)
    assert 'data-drawn-ms="' in page.dom  # the page's script finished
    assert '<img class="static-chart"' not in page.dom  # each chart drawn over its PNG
    assert_not_blank(page.screenshot)
    if name == "synthetic":
        assert len(drawable) >= len(CHART_IDS) - 1  # the fixture may have no pending job
        assert shown_sections(report)[-5:-3] == ["runs", "comparison"]


@pytest.mark.parametrize("name", PAGES)
def test_the_page_shows_no_none_and_no_raw_floats(rendered, name):
    text = rendered[name][1].seen["text"]
    assert raw_empties(text) == []
    assert too_precise(text) == []


def test_the_precision_rule_itself():
    assert too_precise("91.46662444966434 | 161.76 h | 242,077.6 | 1.25%") == [
        "91.46662444966434",
        "161.76",
        "242,077.6",
        "1.25%",
    ]
    assert (
        too_precise("14.4 h, 0.35, 0.047, 48.6%, 100.0%, 2.87x, 2024-01-01 00:03, 1,106,109") == []
    )


@pytest.mark.parametrize("name", PAGES)
def test_every_header_is_a_human_label(rendered, name):
    labels = {c.label for c in COLUMNS.values()}
    headers = rendered[name][1].seen["headers"]
    assert headers and set(headers) <= labels, sorted(set(headers) - labels)
    assert not [h for h in headers if "_" in h]


@pytest.mark.parametrize("name", PAGES)
def test_no_empty_section_and_the_nav_lists_what_is_there(rendered, name):
    report, page = rendered[name]
    sections = page.seen["sections"]
    assert list(sections) == shown_sections(report) == page.seen["nav"]
    assert all(chars > 40 for chars in sections.values()), sections
    for empty in ("No data to draw", "None found", "nothing to compare"):
        assert empty not in page.seen["text"]
    if name == "real":  # no wass-chat run in another site's data: no run sections at all
        assert "runs" not in sections and "comparison" not in sections


@pytest.mark.parametrize("name", PAGES)
def test_the_page_is_no_wider_than_the_window(rendered, name):
    seen = rendered[name][1].seen
    assert seen["viewportWidth"] == rendered[name][1].width
    assert seen["pageWidth"] <= seen["viewportWidth"]


def test_the_charts_show_without_javascript_as_a_mailed_or_printed_page_would(rendered, tmp_path):
    """Issue #41: the charts were blank in a static screenshot (drawn by JavaScript only).
    Each chart also carries a PNG of itself, shown with scripts off."""
    import base64
    import io
    import re

    import numpy as np
    from PIL import Image

    from tests.chromium import run_chromium

    report, shown = rendered["synthetic"]
    html = shown.page.read_text()
    drawable = [c.id for c in report.analysis.charts if c.points]
    for chart_id in drawable:
        start = html.index(f'<div id="{chart_id}" class="plot">')
        found = re.match(
            r'<div id="[^"]+" class="plot"><img class="static-chart" alt="[^"]+" '
            r'src="data:image/png;base64,([^"]+)">',
            html[start:],
        )
        assert found, f"{chart_id} has no static image"
        pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(found[1]))).convert("L"))
        assert pixels.shape[1] >= 600 and pixels.std() > 10, f"{chart_id}'s image is blank"
    # The page as a mail reader shows it: no script runs. (Chromium's --screenshot writes
    # nothing with scripts disabled, so the copy has its scripts taken out instead.)
    static = tmp_path / "no-script.html"
    static.write_text(re.sub(r"<script\b.*?</script>", "", html, flags=re.DOTALL))
    assert "<script" not in static.read_text()
    shot = tmp_path / "no-script.png"
    run_chromium(require_chromium(), static, tmp_path / "profile", f"--screenshot={shot}")
    assert_not_blank(shot)
    # The charts' images are ink a text-only page lacks: the same copy without them has
    # about a third less (0.11 against 0.17 of the pixels on this page).
    without = tmp_path / "no-images.html"
    without.write_text(re.sub(r'<img class="static-chart"[^>]*>', "", static.read_text()))
    bare = tmp_path / "no-images.png"
    run_chromium(require_chromium(), without, tmp_path / "profile2", f"--screenshot={bare}")
    ink = [(np.asarray(Image.open(p).convert("L")) < 250).mean() for p in (shot, bare)]
    assert ink[0] > 1.3 * ink[1], ink


def test_the_gpu_section_of_a_site_that_records_gpu_use(rendered):
    """hb-jobinfo's export records gres/gpuutil on its V100 and A100 jobs' steps: the GPU
    section is shown, with the headline and the per-type table a reader sees."""
    report, page = rendered["real"]
    assert report.analysis.gpu_use is not None and "gpus" in page.seen["sections"]
    text = page.seen["text"]
    assert "2 finished GPU jobs held 15.5 GPU-hours" in text and "90.0%" in text
    assert "Wasted GPU-hours" in page.seen["headers"] and "GPU type" in page.seen["headers"]
