"""What the written report shows: text not markup, readable axes, percent units, full CSV tables,
an empty period refused, and a page much lighter than plotly.js itself."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from itertools import pairwise

import pytest

from tests.analytics.test_report import make_home
from tests.support import no_settings_file
from wass_chat.analytics.charts import ChartSpec, Trace
from wass_chat.analytics.render_plotly import figure_dict
from wass_chat.cli import main
from wass_chat.config import settings
from wass_chat.report.build import build_report_from_cache
from wass_chat.report.html import render_html
from wass_chat.report.write import write_report


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return make_home(tmp_path_factory.mktemp("report-output"), with_run=False)


@pytest.fixture(scope="module")
def page(home):
    return render_html(build_report_from_cache(*home))


def test_methods_are_text_not_markdown(page):
    methods = page.split('id="methods"', 1)[1]
    assert "**" not in methods and "``" not in methods
    assert "Long waits: started jobs whose queue wait exceeds" in methods


def test_page_is_one_light_file(page):
    assert "<script src" not in page and "cdn.plot.ly" not in page
    assert len(page.encode()) < 2_600_000  # plotly.js alone is 4.8 MB
    assert page.count('id="plotly-gz"') == 1 and "DecompressionStream" in page
    figures = json.loads(
        page.split('id="figures" type="application/json">', 1)[1].split("</script>")[0]
    )
    assert all(len(t["x"]) <= 2000 for f in figures for t in f["data"])
    states = next(f for f in figures if f["id"] == "chart-states-per-user")
    assert all("(others)" not in t["x"] for t in states["data"])
    assert "other" in states["layout"]["title"]["text"]


def test_axes_rates_from_zero_and_log_ticks_at_decades():
    rates = ChartSpec(
        "r", "rates", "x", "%", (Trace("f", ("a", "b"), (3.0, 4.0), "line"),), "", y_from_zero=True
    )
    assert figure_dict(rates)["layout"]["yaxis"]["rangemode"] == "tozero"
    log = ChartSpec(
        "l", "log", "x", "y", (Trace("p", (0.01, 100.0), (1.0, 2.0), "scatter"),), "", log_x=True
    )
    axis = figure_dict(log)["layout"]["xaxis"]
    assert (axis["type"], axis["dtick"], axis["exponentformat"]) == ("log", 1, "none")


def test_png_date_labels_do_not_overlap_and_log_ticks_are_decades():
    import matplotlib

    matplotlib.use("Agg")
    from wass_chat.analytics.render_png import draw

    days = tuple(datetime(2024, 1, 1) + timedelta(days=i) for i in range(90))
    spec = ChartSpec("u", "util", "time", "%", (Trace("u", days, tuple(range(90)), "line"),), "")
    fig = draw(spec)
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert len(boxes) >= 3
    assert all(a.x1 <= b.x0 for a, b in pairwise(boxes))
    log = ChartSpec(
        "l", "log", "x", "y", (Trace("p", (0.01, 100.0), (1.0, 2.0), "scatter"),), "", log_x=True
    )
    fig = draw(log)
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert set(labels) <= {"0.001", "0.01", "0.1", "1", "10", "100", "1000"}


def test_anomaly_tables_written_in_full_as_csv(home, tmp_path):
    sacct_dir, runs_dir = home
    files = write_report(sacct_dir, runs_dir, tmp_path / "r.html", "html")
    report = build_report_from_cache(sacct_dir, runs_dir)
    largest = max(report.analysis.anomalies, key=lambda a: a.count)
    assert largest.count > 10 == largest.examples.height  # more than the page lists
    path = tmp_path / "r_tables" / f"anomaly-{largest.kind}.csv"
    assert str(path) in files
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert len(rows) == largest.count
    assert f'href="r_tables/anomaly-{largest.kind}.csv"' in (tmp_path / "r.html").read_text()


def test_empty_period_is_refused_and_nothing_written(home, tmp_path, monkeypatch, capsys):
    sacct_dir, _ = home
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_CONFIG", no_settings_file(tmp_path))
    settings.cache_clear()
    try:
        (tmp_path / "home").mkdir()
        (tmp_path / "home" / "sacct").symlink_to(sacct_dir, target_is_directory=True)
        out = tmp_path / "r.html"
        code = main(["report", "--start", "2025-01-01", "--capacity-nodes", "10", "-o", str(out)])
        err = capsys.readouterr().err
    finally:
        settings.cache_clear()
    assert code == 2 and not out.exists() and not (tmp_path / "r_tables").exists()
    assert len(err.strip().splitlines()) == 1
    assert "no job was submitted from 2025-01-01 00:00 on" in err and "submitted 2024-01-01" in err


def _cli_report(home, tmp_path, monkeypatch, capsys, *argv: str) -> tuple[int, str]:
    """``wass-chat report`` over ``home``'s cache: the exit code and what it printed on stderr."""
    sacct_dir, _ = home
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_CONFIG", no_settings_file(tmp_path))
    (tmp_path / "home").mkdir(exist_ok=True)
    link = tmp_path / "home" / "sacct"
    if not link.exists():
        link.symlink_to(sacct_dir, target_is_directory=True)
    settings.cache_clear()
    try:
        code = main(["report", "--offline", "--capacity-nodes", "700", *argv])
    finally:
        settings.cache_clear()
    return code, capsys.readouterr().err


def _files_under(root) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("where", ["missing/deeper", "a-file", "read-only"])
def test_unwritable_or_missing_folder_is_one_line_and_nothing_written(
    home, tmp_path, monkeypatch, capsys, where
):
    import os

    out_root = tmp_path / "out"
    out_root.mkdir()
    (out_root / "a-file").write_text("in the way")
    if where == "read-only":
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders; the other cases cover the check")
        (out_root / "read-only").mkdir()
        (out_root / "read-only").chmod(0o500)
    before = _files_under(out_root)
    for fmt in ("html", "md"):
        target = out_root / where / f"x.{fmt}"
        code, err = _cli_report(
            home, tmp_path, monkeypatch, capsys, "--format", fmt, "-o", str(target)
        )
        assert code == 2
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith("error: cannot write")
        assert _files_under(out_root) == before  # no folder, no CSV, no temporary file
    assert not (out_root / "missing").exists()


def test_a_failure_while_writing_leaves_nothing_behind(home, tmp_path, monkeypatch):
    """The disk fills up at the last file (the page): the tables written before it go too."""
    import tempfile

    import sim.atomic_files as atomic

    real_mkstemp = tempfile.mkstemp

    def full_disk(*args, **kwargs):
        if kwargs.get("prefix", "").startswith(".r.html"):
            raise OSError(28, "No space left on device")
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(atomic.tempfile, "mkstemp", full_disk)
    with pytest.raises(atomic.OutputError, match=r"cannot write .*r\.html: No space left"):
        write_report(*home, tmp_path / "r.html", "html")
    assert _files_under(tmp_path) == set()  # no page, no r_tables/, no temporary file


def test_filters_reach_the_written_report(home, tmp_path):
    from wass_chat.analytics.period import JobFilter

    write_report(*home, tmp_path / "g.md", "md", only=JobFilter(partition="gpu"))
    text = (tmp_path / "g.md").read_text()
    assert "Only jobs with partition = gpu." in text
    assert "| Users / accounts / partitions |" in text and " / 1 |" in text
