"""The baseline rule: a what-if's difference is shown only when the unchanged replay waits as
the record did (within 25% of its mean wait), after at most one calibration from the record.

The site: 3,000 synthetic jobs over ten days whose record is their own replay on the nodes they
ran on (tests/batch/replayed_record.py), then that record bent three ways: left as it is (the
replay matches it exactly), every start 10 minutes later (a launch latency the calibration
finds: the shortest recorded wait), and every wait ten times longer (no calibration the record
supports reaches it)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest

from tests.batch.replayed_record import with_replayed_starts
from tests.support import no_settings_file
from wass_chat.batch.baseline_match import (
    BASELINE_FLOOR_S,
    BASELINE_TOLERANCE,
    baseline_gap,
    checked_compare,
)
from wass_chat.batch.scenario import load_scenario
from wass_chat.batch.whatif import Changes
from wass_chat.cli import main
from wass_chat.config import settings
from wass_chat.sacct.synth import synthesize

ADD = Changes(add_nodes=(("batch", 8),))


@pytest.fixture(scope="module")
def record() -> pl.DataFrame:
    return with_replayed_starts(synthesize(3000, seed=7, start=datetime(2024, 1, 1), days=10))


def shifted(jobs: pl.DataFrame, seconds: int) -> pl.DataFrame:
    """Every allocation started ``seconds`` later than recorded."""
    later = pl.duration(seconds=seconds)
    allocation = ~pl.col("is_step")
    return jobs.with_columns(
        pl.when(allocation).then(pl.col("start") + later).otherwise(pl.col("start")).alias("start"),
        pl.when(allocation).then(pl.col("end") + later).otherwise(pl.col("end")).alias("end"),
    )


def stretched(jobs: pl.DataFrame, factor: int) -> pl.DataFrame:
    """Every allocation's wait ``factor`` times the recorded one."""
    wait = pl.col("start") - pl.col("submit")
    start = pl.when(~pl.col("is_step")).then(pl.col("submit") + wait * factor)
    return jobs.with_columns(
        start.otherwise(pl.col("start")).alias("start"),
        pl.when(~pl.col("is_step"))
        .then(pl.col("end") + wait * (factor - 1))
        .otherwise(pl.col("end"))
        .alias("end"),
    )


def whatif(jobs: pl.DataFrame) -> dict:
    return checked_compare(load_scenario(jobs, cluster="jobs"), ADD, jobs)


def test_the_tolerance_is_a_share_of_the_recorded_mean_with_a_floor() -> None:
    rec = {"jobs": 10, "recorded_wait_mean_s": 1000.0, "simulated_wait_mean_s": 1240.0}
    assert baseline_gap(rec)["matches"] and BASELINE_TOLERANCE == 0.25
    assert not baseline_gap({**rec, "simulated_wait_mean_s": 1260.0})["matches"]
    assert not baseline_gap({**rec, "simulated_wait_mean_s": 740.0})["matches"]
    tiny = {
        "jobs": 10,
        "recorded_wait_mean_s": 10.0,
        "simulated_wait_mean_s": 10 + BASELINE_FLOOR_S,
    }
    assert baseline_gap(tiny)["matches"]  # 3x of 10 s is no disagreement worth refusing
    assert not baseline_gap({**tiny, "simulated_wait_mean_s": 41.0})["matches"]
    assert baseline_gap({"jobs": 0})["checked"] is False


def test_a_baseline_that_matches_gives_the_difference(record: pl.DataFrame) -> None:
    report = whatif(record)
    check = report["baseline_check"]
    assert check["matches"] and check["calibration"] == []
    assert check["replayed_wait_mean_s"] == pytest.approx(check["recorded_wait_mean_s"])
    assert report["difference"]["wait_mean_s"] < 0  # 8 more nodes: shorter waits


def test_a_launch_latency_is_calibrated_from_the_shortest_wait(record: pl.DataFrame) -> None:
    report = whatif(shifted(record, 600))
    check = report["baseline_check"]
    assert check["matches"] and "difference" in report
    # the uncalibrated replay missed (a calibration was needed); holding every job 600 s did it
    assert (
        "every job held at least 600 s after it became eligible, the shortest recorded"
        in check["calibration"]
    )
    assert abs(check["replayed_wait_mean_s"] - check["recorded_wait_mean_s"]) <= check["allowed_s"]


def test_a_baseline_far_from_the_record_gives_no_difference(record: pl.DataFrame) -> None:
    report = whatif(stretched(record, 10))
    check = report["baseline_check"]
    assert not check["matches"]
    assert "difference" not in report and "variant" not in report
    assert check["ratio"] < 1 - BASELINE_TOLERANCE
    assert "--cluster live" in check["missing"] and "platform file" in check["missing"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_CONFIG", no_settings_file(tmp_path))
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "no-slurm.conf"))
    settings.cache_clear()
    yield tmp_path
    settings.cache_clear()


def test_the_command_prints_no_delta_table_and_exits_0(
    record: pl.DataFrame, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    far = home / "far.parquet"
    stretched(record, 10).write_parquet(far)
    argv = ["whatif", "cluster", "--sacct", str(far), "--cluster", "jobs", "--add-nodes", "batch:8"]
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "What-if:" not in out and "95% CI" not in out
    assert "no difference is given for +8 nodes in batch" in out
    assert "What is missing: the cluster's real description" in out
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["baseline_check"]["matches"] is False and "difference" not in report
    near = home / "near.parquet"
    record.write_parquet(near)
    assert main([*argv[:3], str(near), *argv[4:]]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "What-if: +8 nodes in batch" in out and "95% CI" in out
    assert "Baseline check: the unchanged replay waits" in out


def test_jobs_of_a_partition_the_cluster_no_longer_has_are_left_out_and_said() -> None:
    """A partition removed since is still in the accounting (the live test cluster met one a
    test had made and dropped): the replay on the cluster as it is now leaves its jobs out
    and says so, where it failed with 'partition ... is not in the cluster'."""

    from wass_chat.batch.cluster_source import cluster_from_jobs
    from wass_chat.sacct.synth import synthesize

    jobs = synthesize(400, seed=4)
    first = jobs["partition"].drop_nulls()[0]
    cluster = cluster_from_jobs(jobs.filter(pl.col("partition") != first))
    loaded = load_scenario(jobs, known_cluster=(cluster, "live (scontrol)"))
    gone = jobs.filter(~pl.col("is_step") & (pl.col("partition") == first))
    assert loaded.source["partitions_gone"] == [first]
    assert 0 < loaded.source["left_out_partition_gone"] <= gone.height
    assert first not in {
        loaded.scenario.workload.partitions[i]
        for i in set(loaded.scenario.workload.partition.tolist())
    }
