"""Shared fixtures: the Slurm 22.05 fixture file and a hand-made jobs table with known numbers."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from wass_chat.sacct.parse import schema

FIXTURES = Path(__file__).parent / "fixtures"
DAY = datetime(2024, 3, 1)


def at(hours: float) -> datetime:
    """A time ``hours`` after the start of the hand-made period (2024-03-01 00:00)."""
    return DAY + timedelta(hours=hours)


def make_jobs(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A typed jobs table from partial rows (missing columns get neutral defaults)."""
    defaults: dict[str, Any] = {
        "job_name": "job",
        "account": "acct",
        "partition": "batch",
        "qos": "normal",
        "exit_status": 0,
        "exit_signal": 0,
        "nnodes": 1,
        "ncpus": 1,
        "is_step": False,
        "backfilled": False,
        "timelimit_unlimited": False,
        "timelimit_s": 3600,
    }
    full = []
    for i, row in enumerate(rows):
        record = {name: None for name in schema()} | defaults | row
        record.setdefault("job_id", str(i + 1))
        record["job_id"] = record["job_id"] or str(i + 1)
        record["job_id_raw"] = record["job_id_raw"] or record["job_id"]
        record["eligible"] = record["eligible"] or record["submit"]
        full.append(record)
    return pl.DataFrame(full, schema=schema())


@pytest.fixture
def hand_jobs() -> pl.DataFrame:
    """Ten rows: nine allocations with known waits/states/limits and one step to be ignored."""
    return make_jobs(
        [
            dict(
                user="alice",
                account="A",
                state="COMPLETED",
                submit=at(0),
                start=at(10 / 60),
                end=at(70 / 60),
                elapsed_s=3600,
                timelimit_s=7200,
                node_list="n01",
                flags="SchedMain",
            ),
            dict(
                user="alice",
                account="A",
                state="COMPLETED",
                submit=at(0.5),
                start=at(0.5),
                end=at(0.5 + 1 / 6),
                elapsed_s=600,
                timelimit_s=3600,
                nnodes=2,
                ncpus=8,
                node_list="n[02-03]",
                flags="SchedBackfill",
                backfilled=True,
            ),
            dict(
                user="bob",
                account="B",
                state="FAILED",
                submit=at(1),
                eligible=at(1.5),
                start=at(2),
                end=at(2 + 5 / 60),
                elapsed_s=300,
                node_list="n02",
                flags="SchedMain",
                exit_status=1,
            ),
            dict(
                user="bob",
                account="B",
                state="CANCELLED",
                cancelled_by=1001,
                submit=at(2),
                end=at(3),
                elapsed_s=0,
            ),
            dict(
                user="bob",
                account="B",
                state="TIMEOUT",
                submit=at(3),
                start=at(5),
                end=at(6),
                elapsed_s=3600,
                nnodes=4,
                ncpus=16,
                node_list="n[01-04]",
                flags="SchedBackfill",
                backfilled=True,
            ),
            dict(
                user="carol",
                account="A",
                state="RUNNING",
                submit=at(20),
                start=at(22),
                elapsed_s=3600,
                timelimit_s=86400,
                node_list="n04",
                flags="SchedMain",
            ),
            dict(user="carol", account="A", state="PENDING", submit=at(23), elapsed_s=0),
            dict(
                user="dave",
                account="C",
                state="COMPLETED",
                submit=at(-1),
                start=at(-0.5),
                end=at(0.5),
                elapsed_s=3600,
                node_list="n05",
                flags="SchedMain",
            ),
            dict(
                user="erin",
                account="C",
                state="OUT_OF_MEMORY",
                submit=at(4),
                start=at(4),
                end=at(4 + 1 / 60),
                elapsed_s=60,
                timelimit_s=600,
                node_list="n05",
                flags="SchedMain",
                exit_signal=125,
            ),
            dict(
                job_id="1.batch",
                user=None,
                account="A",
                state="COMPLETED",
                submit=at(10 / 60),
                start=at(10 / 60),
                end=at(70 / 60),
                elapsed_s=3600,
                timelimit_s=None,
                is_step=True,
                node_list="n01",
            ),
        ]
    )
