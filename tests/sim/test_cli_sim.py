"""`wass-chat simulate`, `sim validate` and `sim bench` end to end, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.simgrid_backend import simgrid_available
from tests.support import require
from wass_chat.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_simulate_a_demo_workflow_reports_metrics(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "simulate", "genomics-49", "--scheduler", "eft")
    assert report["tasks"] == 49
    assert report["backend"] == "native"
    assert report["makespan"] >= report["critical_path_bound"] > 0
    assert report["slr"] >= 1.0
    assert 0 < report["mean_utilization"] <= 1


def test_simulate_writes_gantt_charts_and_a_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    png, html, trace = tmp_path / "g.png", tmp_path / "g.html", tmp_path / "t.json"
    report = run_json(
        capsys,
        "simulate",
        "fork-join-20",
        "--scheduler",
        "eft",
        "--network-model",
        "ideal",
        "--gantt",
        str(png),
        "--trace",
        str(trace),
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(trace.read_text())
    assert len(data["tasks"]) == 20
    assert all(t["cores"] >= 1 for t in data["tasks"]) and data["nodes"]
    assert data["makespan"] == report["makespan"]
    run_json(capsys, "simulate", "fork-join-20", "--scheduler", "eft", "--gantt", str(html))
    page = html.read_text()
    assert "Plotly.newPlot" in page
    assert '<script src="http' not in page, "plotly.js must be embedded, not fetched from a CDN"
    svg = tmp_path / "g.svg"
    run_json(capsys, "simulate", "fork-join-20", "--scheduler", "eft", "--gantt", str(svg))
    assert svg.read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["simulate", "genomics-49", "--scheduler", "no-such-policy"], "no-such-policy"),
        (["simulate", "genomics-49", "--gantt", "chart.pdf"], "chart.pdf"),
        (["simulate", "genomics-49", "--network-model", "lossy"], "lossy"),
        (["simulate", "missing-file.json"], "missing-file.json"),
        (["sim", "validate", "--against", "wrench"], "wrench"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert err.count("\n") == 1


def test_simulate_on_simgrid_reports_both_makespans(capsys: pytest.CaptureFixture[str]) -> None:
    require(simgrid_available(), "SimGrid's Python bindings")
    report = run_json(
        capsys, "simulate", "epigenomics-50", "--scheduler", "eft", "--backend", "simgrid"
    )
    assert report["backend"] == "simgrid"
    native = report["native_static_replay_makespan"]
    assert report["simgrid_makespan"] == pytest.approx(native, rel=1e-2)
    assert report["deviation"] <= 1e-2


@pytest.mark.slow
def test_sim_bench_prints_timings(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "sim", "bench", "--tasks", "60", "--nodes", "8", "--runs", "1")
    rows = report["rows"]
    assert {r["mode"] for r in rows} == {"static replay", "dynamic eft"}
    assert {r["network_model"] for r in rows} == {"fair", "ideal"}
    assert all(r["median_ms"] > 0 and r["makespan"] > 0 for r in rows)


@pytest.mark.slow
def test_sim_validate_quick_meets_the_targets(capsys: pytest.CaptureFixture[str]) -> None:
    require(simgrid_available(), "SimGrid's Python bindings")
    report = run_json(capsys, "sim", "validate", "--against", "simgrid", "--quick")
    assert report["all_within_target"]
    assert report["max_deviation_ideal"] <= 1e-6
    assert report["max_deviation_fair"] <= 1e-2
    assert report["instances"] == len(report["rows"]) > 0
