"""`wass-chat whatif ...` end to end through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.batch.replayed_record import with_replayed_starts
from tests.support import no_settings_file
from wass_chat.cli import main
from wass_chat.config import settings

DATA = Path(__file__).parent / "data"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_CONFIG", no_settings_file(tmp_path))
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "no-slurm.conf"))  # never the live cluster
    settings.cache_clear()
    yield tmp_path
    settings.cache_clear()


@pytest.fixture
def synthetic(home, capsys) -> Path:
    path = home / "jobs.parquet"
    assert main(["sacct", "synth", "--jobs", "3000", "--days", "1", "-o", str(path), "--json"]) == 0
    capsys.readouterr()
    with_replayed_starts(pl.read_parquet(path)).write_parquet(path)  # a baseline that matches
    return path


def run_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_removing_nodes_lengthens_waits(synthetic, capsys):
    report = run_json(
        capsys,
        "whatif",
        "cluster",
        "--sacct",
        str(synthetic),
        "--cluster",
        "jobs",
        "--remove-nodes",
        "batch:400",
    )
    assert report["changes"] == ["-400 nodes in batch"]
    assert report["left_out_unfit_after_change"] > 0  # wider than the 112 nodes left
    before, after = report["baseline"], report["variant"]
    assert (
        after["waits_by_partition"]["batch"]["mean_s"]
        > before["waits_by_partition"]["batch"]["mean_s"]
    )
    low, high = report["difference"]["wait_mean_ci95_s"]
    assert low <= report["difference"]["wait_mean_s"] <= high
    assert report["source"]["cluster"].startswith("inferred")


def test_power_saving_and_predictions(synthetic, capsys):
    report = run_json(
        capsys,
        "whatif",
        "cluster",
        "--sacct",
        str(synthetic),
        "--cluster",
        "jobs",
        "--power-off-after",
        "30",
        "--boot-time",
        "120",
    )
    assert report["difference"]["energy_facility_kwh"] < 0
    assert report["variant"]["nodes_off_share"] > 0
    report = run_json(
        capsys,
        "whatif",
        "cluster",
        "--sacct",
        str(synthetic),
        "--cluster",
        "jobs",
        "--predict-walltime",
    )
    assert report["prediction_accuracy"]["predicted"] > 0


def test_swf_trace(tmp_path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text(
        "; MaxProcs: 4\n"
        "1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n"
        "2 1 9 5 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n"
    )
    report = run_json(
        capsys, "whatif", "cluster", "--swf", str(trace), "--compare-scheduler", "fifo"
    )
    assert report["baseline"]["jobs"] == 2 and report["baseline"]["waits"]["mean_s"] == 4.5
    recorded = report["baseline_vs_recorded"]  # job 2 waited 9 s for job 1, as recorded
    assert recorded["within_tolerance"] == 1.0 and recorded["error_mean_s"] == 0


def test_the_table_names_the_scheduler_in_words(tmp_path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n")
    for scheduler, words in (
        ("fifo", "scheduler: fifo order, no backfill"),
        ("easy", "with backfill (reservation depth 1, a pass every"),
    ):
        argv = ["whatif", "cluster", "--swf", str(trace), "--scheduler", scheduler]
        assert main(argv) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert words in out and "{" not in out, out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--add-nodes", "batch"], "--add-nodes takes PARTITION:NUMBER"),
        (["--compare-scheduler", "lottery"], "unknown scheduler 'lottery'"),
        (["--add-nodes", "nope:3"], "no partition nope"),
        (["--weights", "luck=3"], "--weights item 'luck=3'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(synthetic, capsys, argv, message):
    assert main(["whatif", "cluster", "--sacct", str(synthetic), "--cluster", "jobs", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_missing_files_exit_2(home, capsys):
    assert main(["whatif", "cluster", "--swf", str(home / "none.swf")]) == 2
    assert main(["whatif", "validate-slurm", "--replay", str(home / "none.json")]) == 2
    assert "not a readable recording" in capsys.readouterr().err


def test_learn_gat_evaluates_the_shipped_policy_and_refuses_an_unknown_one(home, capsys):
    argv = ["whatif", "learn", "--jobs-per-week", "150", "--train-weeks", "1", "--test-weeks", "1"]
    report = run_json(capsys, *argv, "--policy", "gat")
    assert report["policy"] == "gat" and report["checkpoint"].endswith("gat.pt")
    compared = report["held_out"]["learned_vs"]
    assert set(compared) == {"fifo", "sjf", "easy", "cem", "random"}
    assert all(
        c["wait"]["wins"] + c["wait"]["ties"] + c["wait"]["losses"] == 2 for c in compared.values()
    )
    trained = run_json(capsys, *argv, "--policy", "gat", "--train", "--imitation", "1")
    assert trained["training"]["updates"] == 0 and trained["training"]["imitation"]["decisions"]
    assert trained["checkpoint"] == "trained now, not saved"
    assert main([*argv, "--policy", "lottery"]) == 2
    assert "'lottery' is not cem or gat" in capsys.readouterr().err
    assert main([*argv, "--policy", "gat", "--checkpoint", str(home / "none.pt")]) == 2
