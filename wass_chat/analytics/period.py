"""Which jobs a report period covers, and the derived columns every statistic uses.

A job *belongs* to the period ``[start, end)`` when it was **submitted** in it: each job is
counted in exactly one period. Jobs submitted earlier that still ran during the period are loaded
too (flag ``in_period`` false) because utilisation and node usage count busy time inside the
period, whoever submitted it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import polars as pl

ACTIVE_STATES = ("PENDING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED")
"""States of jobs that have not finished; excluded from rate denominators."""
FAILURE_STATES = ("FAILED", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL")
"""Ends counted as failures. TIMEOUT and CANCELLED have rates of their own."""
REFUSED = "REFUSED"
"""The state :func:`load_period` gives a submission Slurm refused (see :func:`refused_at_submit`):
no job ran, so it is neither a failure nor a finished job."""


def refused_at_submit() -> pl.Expr:
    """Rows of submissions Slurm refused: sacct records them ``FAILED`` with exit ``1:0``, a
    Start equal to the submission, 0 s elapsed and ``NodeList=None assigned`` (seen on Slurm
    22.05 for ``sbatch --mem=64G`` on a cluster whose largest node has 8000 MB: sbatch said
    "Requested node configuration is not available"). A job that ran has a node."""
    return (
        (pl.col("state") == "FAILED")
        & pl.col("node_list").is_null()
        & (pl.col("elapsed_s").fill_null(0) == 0)
    )


@dataclass(frozen=True)
class JobFilter:
    """Keep only the jobs of this user, account and/or partition (None: any)."""

    user: str | None = None
    account: str | None = None
    partition: str | None = None

    def applied(self) -> dict[str, str]:
        """The filters in use, by column name."""
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclass(frozen=True)
class Period:
    """A half-open reporting window ``[start, end)`` in the cluster's local time."""

    start: datetime
    end: datetime
    origin: str = "as requested"
    """How the bounds were chosen, stated in the report (defaults come from the data)."""

    @property
    def seconds(self) -> int:
        return int((self.end - self.start).total_seconds())

    @property
    def bucket(self) -> str:
        """Time-series resolution: per minute up to 2 hours (a test cluster's short runs),
        per 10 minutes up to 12 hours, hourly up to 2 days, daily up to 92 days, else weekly."""
        if self.seconds <= 2 * 3600:
            return "1m"
        if self.seconds <= 12 * 3600:
            return "10m"
        if self.seconds <= 2 * 86400:
            return "1h"
        if self.seconds <= 92 * 86400:
            return "1d"
        return "1w"

    def label(self) -> str:
        return f"{self.start:%Y-%m-%d %H:%M} to {self.end:%Y-%m-%d %H:%M}"

    def previous(self) -> Period:
        """The period of the same length just before this one (for the comparison table)."""
        length = self.end - self.start
        return Period(self.start - length, self.start, "the same length just before")


def period_of(jobs: pl.LazyFrame, start: datetime | None, end: datetime | None) -> Period:
    """The requested period; missing bounds come from the span of submissions.

    The default runs from the first submission to just after the last submission or start,
    not to the last end: the days in which only the last jobs finish would otherwise pull
    every mean (utilisation above all) towards zero.
    """
    if start is not None and end is not None:
        return Period(start, end)
    bounds = (
        jobs.filter(~pl.col("is_step"))
        .select(
            pl.col("submit").min().alias("first"),
            pl.max_horizontal(pl.col("submit").max(), pl.col("start").max()).alias("last"),
        )
        .collect()
    )
    first, last = bounds.row(0)
    origin = "default: from the first submission to the last submission or start"
    if start is not None:
        origin = "--start as given; end: the last submission or start"
    elif end is not None:
        origin = "start: the first submission; --end as given"
    first = start or first or datetime(1970, 1, 1)
    last = end or ((last + timedelta(seconds=1)) if last else first + timedelta(days=1))
    return Period(first, max(last, first + timedelta(seconds=1)), origin)


def submission_span(jobs: pl.LazyFrame) -> tuple[datetime | None, datetime | None, int]:
    """First and last submission and the number of allocations in ``jobs`` (the whole cache)."""
    row = (
        jobs.filter(~pl.col("is_step"))
        .select(
            pl.col("submit").min().alias("first"), pl.col("submit").max().alias("last"), pl.len()
        )
        .collect()
        .row(0)
    )
    return row[0], row[1], int(row[2])


def load_period(
    jobs: pl.LazyFrame, period: Period, user: str | None = None, **filters: str | None
) -> pl.DataFrame:
    """Allocations (no steps) submitted in, or running during, ``period``, plus derived columns.

    ``user`` and ``filters`` (``account=``, ``partition=``) keep only matching jobs. Derived
    columns: ``in_period`` (submitted in the period), ``finished`` (has an end and an
    end state), ``wait_s`` (start - eligible, for started jobs), ``run_start``/``run_end``
    (the busy interval clipped to the period, as seconds from its start), ``node_seconds``
    (busy seconds inside the period x nodes), and ``pending_at_end`` / ``running_at_end``
    (the one definition of the queue at the period's end, for the summary and the pending
    table alike). A refused submission (:func:`refused_at_submit`) gets the state
    :data:`REFUSED` and no start: it never ran, waited or failed.
    """
    refused = refused_at_submit()
    allocations = jobs.filter(~pl.col("is_step")).with_columns(
        pl.when(refused).then(pl.lit(REFUSED)).otherwise(pl.col("state")).alias("state"),
        pl.when(refused).then(None).otherwise(pl.col("start")).alias("start"),
    )
    for column, value in {"user": user, **filters}.items():
        if value is not None:
            allocations = allocations.filter(pl.col(column) == value)
    run_end_time = pl.coalesce(
        pl.col("end"), pl.col("start") + pl.duration(seconds=pl.col("elapsed_s").fill_null(0))
    )
    ran_during = (
        pl.col("start").is_not_null()
        & (pl.col("start") < period.end)
        & (run_end_time > period.start)
    )
    submitted = (pl.col("submit") >= period.start) & (pl.col("submit") < period.end)
    origin = pl.lit(period.start)
    clip_start = pl.max_horizontal(pl.col("start"), origin)
    clip_end = pl.min_horizontal(run_end_time, pl.lit(period.end))
    loaded = allocations.filter(submitted | ran_during).with_columns(
        submitted.alias("in_period"),
        (
            pl.col("end").is_not_null()
            & ~pl.col("state").is_in(ACTIVE_STATES)
            & (pl.col("state") != REFUSED)
        ).alias("finished"),
        (pl.col("start") - pl.coalesce("eligible", "submit"))
        .dt.total_seconds()
        .clip(lower_bound=0)
        .alias("wait_s"),
        pl.when(ran_during).then((clip_start - origin).dt.total_seconds()).alias("run_start"),
        pl.when(ran_during).then((clip_end - origin).dt.total_seconds()).alias("run_end"),
    )
    end = pl.lit(period.end)
    not_ended = pl.col("end").is_null() | (pl.col("end") >= end)
    loaded = loaded.with_columns(
        ((pl.col("run_end") - pl.col("run_start")) * pl.col("nnodes"))
        .fill_null(0)
        .alias("node_seconds"),
        (
            pl.col("in_period")
            & (pl.col("state") != REFUSED)
            & (pl.col("start").is_null() | (pl.col("start") >= end))
            & not_ended
        ).alias("pending_at_end"),
        (pl.col("in_period") & (pl.col("start") < end) & not_ended)
        .fill_null(False)
        .alias("running_at_end"),
    )
    return loaded.collect()


def pretty_period(words: str) -> str:
    """``2024-04`` -> ``April 2024``; other period words as they are."""
    try:
        return datetime.strptime(words, "%Y-%m").strftime("%B %Y")
    except ValueError:
        return words
