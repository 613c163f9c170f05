"""The sacct -P parser on Slurm 22.05's exact output formats, and what it does with bad lines."""

from __future__ import annotations

from datetime import datetime

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.analytics.conftest import FIXTURES
from wass_chat.sacct.fields import FIELD_NAMES
from wass_chat.sacct.parse import (
    duration_seconds,
    parse_sacct_file,
    parse_sacct_text,
    schema,
)
from wass_chat.sacct.render import render_sacct_lines
from wass_chat.sacct.synth import synthesize


@pytest.fixture(scope="module")
def parsed():
    return parse_sacct_file(FIXTURES / "sacct_22_05.txt")


def row(result, job_id: str) -> dict:
    return result.jobs.filter(pl.col("job_id") == job_id).to_dicts()[0]


def test_malformed_lines_are_counted_with_examples_not_fatal(parsed):
    assert parsed.lines == 14
    assert parsed.malformed == 3
    assert parsed.jobs.height == 11
    reasons = " ".join(parsed.malformed_examples)
    assert "line 7: 9 fields, expected 26" in reasons
    assert "line 10: 28 fields" in reasons  # a '|' inside JobName
    assert "line 14: no JobID" in reasons


def test_unreadable_value_becomes_null_and_is_counted(parsed):
    assert parsed.bad_values == {"submit": 1}
    assert parsed.bad_value_examples["submit"] == "Submit='yesterday'"
    bad = row(parsed, "130")
    assert bad["submit"] is None and bad["state"] == "NODE_FAIL"
    assert bad["elapsed_s"] == 300 and bad["timelimit_s"] == 1800  # MM:SS forms


def test_job_and_steps(parsed):
    job = row(parsed, "123")
    assert job["start"] == datetime(2024, 3, 4, 10, 0, 5)
    assert job["elapsed_s"] == 720 and job["timelimit_s"] == 3600
    assert job["req_mem_bytes"] == 4000 * 2**20
    assert job["exit_status"] == 0 and job["exit_signal"] == 0
    assert job["comment"] == "wass:task=mProject_1;node=node01"
    assert not job["is_step"] and not job["backfilled"]
    steps = parsed.jobs.filter(pl.col("is_step"))["job_id"].to_list()
    assert steps == ["123.batch", "123.extern", "124.0"]
    assert row(parsed, "124.0")["exit_signal"] == 15
    assert row(parsed, "123.batch")["user"] is None


def test_cancelled_by_unknown_times_and_unlimited(parsed):
    job = row(parsed, "125")
    assert job["state"] == "CANCELLED" and job["cancelled_by"] == 0
    assert job["start"] is None  # "None"
    assert job["timelimit_s"] is None and job["timelimit_unlimited"]
    assert job["req_mem_bytes"] == 2000 * 2**20 * 1  # 2000Mc x 1 CPU
    assert job["node_list"] is None  # "None assigned"
    pending = row(parsed, "45_[2-3]")
    assert pending["start"] is None and pending["end"] is None  # "Unknown"
    assert pending["timelimit_unlimited"]  # Partition_Limit
    assert pending["array_job_id"] == 45


def test_arrays_days_memory_units_and_backfill(parsed):
    task = row(parsed, "45_1")
    assert task["job_id_raw"] == "46" and task["array_job_id"] == 45
    assert task["timelimit_s"] == 86400  # 1-00:00:00
    assert task["req_mem_bytes"] == 500 * 2**20  # 500Mn x 1 node
    assert task["exit_status"] == 1
    running = row(parsed, "126")
    assert running["elapsed_s"] == 2 * 86400 + 3 * 3600 + 4 * 60 + 5
    assert running["timelimit_s"] == 7 * 86400
    assert running["req_mem_bytes"] == 2**40
    assert running["end"] is None
    assert row(parsed, "124")["backfilled"] and row(parsed, "124")["req_mem_bytes"] == 64 * 2**30
    assert row(parsed, "129")["req_mem_bytes"] == int(1.5 * 2**30)
    assert row(parsed, "129")["state"] == "OUT_OF_MEMORY"


def test_header_line_sets_column_order():
    header = "JobID|State|Elapsed"
    result = parse_sacct_text(f"{header}\n7|COMPLETED|00:01:00\n8|FAILED\n")
    assert result.malformed == 1
    assert result.jobs.select("job_id", "state", "elapsed_s").rows() == [("7", "COMPLETED", 60)]
    assert result.jobs["submit"].null_count() == 1  # fields the header lacks are null


def test_empty_input_and_crlf():
    assert parse_sacct_text("").jobs.schema == schema()
    line = "|".join(
        ["9", "9", "x", "u", "a", "p", "q"]
        + ["Unknown"] * 4
        + ["00:00:00"] * 2
        + ["COMPLETED", "0:0", "1", "1"]
        + [""] * (len(FIELD_NAMES) - 17)
    )
    assert len(line.split("|")) == len(FIELD_NAMES)
    result = parse_sacct_text(line + "\r\n")
    assert result.malformed == 0 and result.jobs["job_id"].to_list() == ["9"]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("00:00:00", 0),
        ("23:59:59", 86399),
        ("1-00:00:00", 86400),
        ("12-01:02:03", 12 * 86400 + 3723),
        ("05:07", 307),
        ("05:07.250", 307),
        ("UNLIMITED", None),
        ("1-2-3", None),
        ("abc", None),
    ],
)
def test_duration_formats(text, seconds):
    value = pl.select(duration_seconds(pl.lit(text))).item()
    assert value == seconds


def test_render_parse_round_trip_with_steps_and_arrays():
    jobs = synthesize(3000, seed=5, with_steps=True)
    assert jobs["array_job_id"].is_not_null().any() and jobs["is_step"].any()
    result = parse_sacct_text("\n".join(render_sacct_lines(jobs).to_list()))
    assert result.malformed == 0 and result.bad_values == {}
    assert_frame_equal(result.jobs, jobs)
