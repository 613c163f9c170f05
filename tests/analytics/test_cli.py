"""The sacct and report commands end to end, through the real CLI entry point."""

from __future__ import annotations

import json

import pytest

from tests.analytics.conftest import FIXTURES
from wass_chat.cli import main
from wass_chat.config import settings


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_CONFIG", str(tmp_path / "none.toml"))
    settings.cache_clear()
    yield tmp_path
    settings.cache_clear()


def run_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_import_summary_and_report(home, capsys):
    record = run_json(capsys, "sacct", "import", "--from-file", str(FIXTURES / "sacct_22_05.txt"))
    assert record["malformed"] == 3 and record["rows_written"] == 11
    summary = run_json(capsys, "sacct", "summary", "--start", "2024-03-01", "--end", "2024-04-01")
    assert summary["summary"]["jobs"] == 7  # 8 allocations, one with an unreadable Submit
    assert summary["summary"]["cancel_rate"] > 0
    out = home / "audit.md"
    written = run_json(capsys, "report", "--format", "md", "-o", str(out))
    assert out.is_file() and any(f.endswith(".png") for f in written["files"])
    assert "Malformed lines (dropped) | 3" in out.read_text()


def test_synth_to_parquet_and_text(home, capsys):
    result = run_json(
        capsys, "sacct", "synth", "--jobs", "500", "--seed", "1", "-o", str(home / "s.parquet")
    )
    assert result["rows"] == 500 and (home / "s.parquet").is_file()
    run_json(capsys, "sacct", "synth", "--jobs", "500", "-o", str(home / "s.txt"))
    assert len((home / "s.txt").read_text().splitlines()) == 500
    into_cache = run_json(capsys, "sacct", "synth", "--jobs", "200")
    assert into_cache["output"].endswith("sacct")


def test_bad_options_exit_2(home, capsys):
    assert main(["report", "--format", "pdf"]) == 2
    err = capsys.readouterr().err
    assert "--format must be html or md" in err and "-o FILE is required" in err
    assert main(["sacct", "summary", "--start", "yesterday"]) == 2


def test_report_bench_small(home, capsys):
    result = run_json(
        capsys,
        "report",
        "bench",
        "--jobs",
        "2000",
        "--draws",
        "0",
        "--workdir",
        str(home / "bench"),
    )
    assert result["rows_imported"] == 2000 and result["malformed"] == 0
    assert result["import_plus_report_s"] == pytest.approx(result["import_s"] + result["report_s"])
    page = (home / "bench" / "report.html").stat().st_size
    assert 1_500_000 < page < 2_600_000  # plotly.js inline, packed (4.8 MB unpacked)
    assert result["html_mb"] == pytest.approx(page / 2**20)
