"""The sacct and report commands end to end, through the real CLI entry point."""

from __future__ import annotations

import json

import pytest

from tests.analytics.conftest import FIXTURES
from tests.support import no_settings_file
from wass_chat.cli import main
from wass_chat.config import settings


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_CONFIG", no_settings_file(tmp_path))
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
    assert 0 < result["energy_whatifs_cpu_s"] < result["report_cpu_s"]  # a part of the report
    page = (home / "bench" / "report.html").stat().st_size
    assert 1_500_000 < page < 2_600_000  # plotly.js inline, packed (4.8 MB unpacked)
    assert result["html_mb"] == pytest.approx(page / 2**20)


HB = FIXTURES / "real" / "hb_jobinfo_sacct.txt"
HB_FORMAT = (
    "JobID,JobName,User,Partition,NodeList,NNodes,NCPUs,NTasks,State,Submit,Start,End,Timelimit,"
    "Elapsed,TotalCPU,CPUTime,UserCPU,SystemCPU,ReqMem,MaxRSS,MaxVMSize,ReqTRES,AllocTRES,"
    "TRESUsageInMax,TRESUsageInTot,TRESUsageOutTot,MaxDiskRead,MaxDiskWrite,MaxRSSNode,"
    "MaxRSSTask,MaxVMSizeNode,MaxVMSizeTask,MaxDiskReadNode,MaxDiskReadTask,MaxDiskWriteNode,"
    "MaxDiskWriteTask,Comment"
)


def test_another_sites_export_imports_and_answers_per_job(home, capsys):
    cache = home / "home" / "sacct"
    # headerless: refused in one line, exit 2, nothing written
    assert main(["sacct", "import", "--from-file", str(HB)]) == 2
    assert "name them with --format" in capsys.readouterr().err
    assert not cache.exists() or not any(cache.iterdir())
    record = run_json(capsys, "sacct", "import", "--from-file", str(HB), "--format", HB_FORMAT)
    assert record["rows_written"] == 47 and record["malformed"] == 0
    assert (
        record["source"] == "file:hb_jobinfo_sacct.txt" and "MaxVMSize" in record["unknown_columns"]
    )
    jobs = run_json(capsys, "sacct", "efficiency", "7951797", "7216821", "--no-live")
    assert [j["job_id"] for j in jobs] == ["7951797", "7216821_106"]  # an array id: its tasks
    mpi = jobs[0]
    assert mpi["memory_efficiency_pct"] == pytest.approx(25.5, abs=0.05)
    assert mpi["cpu_efficiency_pct"] == pytest.approx(99.34, abs=0.01)
    assert any(s.startswith("Memory:") for s in mpi["suggestions"])
    # never a suggestion below what the job used
    used = mpi["mem_used_bytes"]
    suggested = int(mpi["suggestions"][0].split("--mem-per-cpu=")[1].split("M")[0]) * 2**20
    assert suggested * mpi["ncpus"] >= used
    assert main(["sacct", "efficiency", "42", "--no-live"]) == 2
    assert "not found in the accounting cache" in capsys.readouterr().err
    by_user = run_json(capsys, "sacct", "efficiency", "--user", "user11")
    assert {j["job_id"] for j in by_user} == {"7818766", "7951797"}  # the pending one is not


def test_an_export_with_nothing_importable_exits_2_and_keeps_the_cache(home, capsys, tmp_path):
    good = run_json(capsys, "sacct", "import", "--from-file", str(FIXTURES / "sacct_22_05.txt"))
    cache = home / "home" / "sacct"
    before = {p: p.read_bytes() for p in cache.rglob("*") if p.is_file()}
    junk = tmp_path / "junk.txt"
    junk.write_text("JobID|State|Elapsed\n|COMPLETED|00:01:00\n")
    assert main(["sacct", "import", "--from-file", str(junk)]) == 2
    assert "nothing imported" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in cache.rglob("*") if p.is_file()} == before
    assert good["rows_written"] == 11


def test_filters_naming_nothing_in_the_cache_are_refused(home, capsys):
    """A misspelt --user/--account/--partition is one line with the nearest name and exit 2,
    not a quiet period; nothing is written."""
    run_json(capsys, "sacct", "import", "--from-file", str(FIXTURES / "sacct_22_05.txt"))
    users = run_json(capsys, "sacct", "summary", "--user", "alice")
    assert users["summary"]["jobs"] > 0
    for argv, line in (
        (["sacct", "summary", "--user", "alcie"], "did you mean alice?"),
        (["sacct", "summary", "--partition", "bacth"], "did you mean batch?"),
        (["sacct", "efficiency", "--account", "physcis"], "did you mean physics?"),
        (["report", "--user", "alcie", "-o", str(home / "audit.html")], "did you mean alice?"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and line in err, err
    assert not (home / "audit.html").exists()
