"""Synthetic data (deterministic, realistic) and the month-partitioned Parquet cache."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.analytics.conftest import FIXTURES
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.ingest import ingest_file
from wass_chat.sacct.parse import schema
from wass_chat.sacct.synth import synthesize


@pytest.fixture(scope="module")
def synthetic() -> pl.DataFrame:
    return synthesize(20_000, seed=11)


def test_synth_is_deterministic_and_has_the_parsed_schema(synthetic):
    assert synthetic.schema == schema()
    assert_frame_equal(synthesize(20_000, seed=11), synthetic)
    assert not synthesize(20_000, seed=12).equals(synthetic)


def test_synth_realism(synthetic):
    ran = synthetic.filter(pl.col("elapsed_s") > 0)
    runtime = ran["elapsed_s"].to_numpy()
    assert np.percentile(runtime, 99) / np.median(runtime) > 20  # heavy tail
    completed = synthetic.filter((pl.col("state") == "COMPLETED") & (pl.col("elapsed_s") > 0))
    ratio = completed["timelimit_s"].sum() / completed["elapsed_s"].sum()
    assert ratio > 1.5  # users over-request walltime
    assert (completed["timelimit_s"] >= completed["elapsed_s"]).all()
    wait = (synthetic["start"] - synthetic["eligible"]).dt.total_seconds().drop_nulls().to_numpy()
    assert np.percentile(wait, 99) > 20 * max(np.median(wait), 1)
    states = set(synthetic["state"])
    assert {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "RUNNING"} <= states
    assert 0.2 < synthetic.filter(pl.col("start").is_not_null())["backfilled"].mean() < 0.7
    per_user = synthetic.group_by("user").len()["len"]
    assert per_user.n_unique() > 10 and per_user.max() > 20 * per_user.median()  # Zipf-like
    assert synthetic["partition"].n_unique() == 5
    assert synthetic["cancelled_by"].drop_nulls().is_in([0]).any()
    assert synthetic["job_id_raw"].n_unique() == synthetic.height


def test_cache_partitions_by_month_and_dedupes_on_reimport(tmp_path):
    cache = SacctCache(tmp_path)
    jobs = synthesize(3000, seed=3, start=datetime(2024, 1, 20), days=20)
    cache.write(jobs)
    assert cache.months() == ["2024-01", "2024-02"]
    changed = jobs.head(10).with_columns(pl.lit("FAILED").alias("state"))
    cache.write(changed)
    stored = cache.scan().collect()
    assert stored.height == jobs.height
    first_ten = stored.filter(pl.col("job_id").is_in(changed["job_id"].implode()))
    assert set(first_ten["state"]) == {"FAILED"}  # the newer import wins
    assert not list(tmp_path.rglob("*.tmp"))
    assert cache.scan(until=datetime(2024, 1, 31)).collect()["submit"].max() < datetime(2024, 2, 1)


def test_ingest_file_logs_malformed_counts(tmp_path):
    cache = SacctCache(tmp_path)
    record = ingest_file(cache, FIXTURES / "sacct_22_05.txt")
    assert (record.lines, record.malformed, record.rows_written) == (14, 3, 11)
    again = ingest_file(cache, FIXTURES / "sacct_22_05.txt")
    assert again.malformed == 3
    assert [r.malformed for r in cache.imports()] == [3, 3]
    assert cache.scan().collect().height == 11
    assert cache.months() == ["2024-03"]  # unreadable Submit: filed by its Eligible time


def test_pending_jobs_wait_for_several_reasons():
    """The pending-reasons view needs more than Priority and Dependency to show anything."""
    from wass_chat.sacct.synth import PENDING_REASONS, synthesize

    pending = synthesize(200_000, seed=3).filter(pl.col("state") == "PENDING")
    reasons = set(pending["reason"].drop_nulls())
    assert {"Priority", "Resources", "Dependency"} <= reasons
    assert reasons <= {name for name, _ in PENDING_REASONS} | {"Dependency"}
