"""Headline statistics of a period: counts, rates, waits, walltime accuracy, backfill share.

Each field is one polars aggregation over the table from :func:`.period.load_period`; the
definitions are in :mod:`.methods` (and the report's methods section).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl

from wass_chat.analytics.period import FAILURE_STATES, REFUSED

WAIT_QUANTILE_METHOD = "linear"
"""Quantile interpolation (numpy's default), so every quantile is checkable with numpy."""


NO_LIMIT_S = 365 * 86400
"""A job that started without a time limit is recorded with ``Timelimit=365-00:00:00``
(slurmctld gives it a year; seen with Slurm 22.05 on ``scripts/slurm-cluster``, whose
partitions have ``MaxTime=INFINITE``): such a limit is no request to measure."""


def over_request_jobs() -> pl.Expr:
    """Jobs whose walltime accuracy is measured: completed, in period, finite limit, ran > 0 s."""
    return (
        pl.col("in_period")
        & (pl.col("state") == "COMPLETED")
        & pl.col("timelimit_s").is_not_null()
        & (pl.col("timelimit_s") < NO_LIMIT_S)
        & (pl.col("elapsed_s") > 0)
    )


@dataclass(frozen=True)
class PeriodSummary:
    """The period's headline numbers (None where no job qualifies)."""

    jobs: int
    users: int
    accounts: int
    partitions: int
    finished: int
    pending: int
    """Jobs still waiting at the period's end (the pending table's count)."""
    running: int
    """Jobs running at the period's end."""
    refused: int
    """Submissions Slurm refused (:func:`~wass_chat.analytics.period.refused_at_submit`): no
    job ran, so they are in no rate."""
    started: int
    state_counts: dict[str, int]
    failure_rate: float | None
    timeout_rate: float | None
    cancel_rate: float | None
    wait_mean_s: float | None
    wait_median_s: float | None
    wait_p90_s: float | None
    wait_max_s: float | None
    node_hours: float
    core_hours: float
    over_request_jobs: int
    over_request_ratio: float | None
    """Sum of requested walltime over sum of used walltime."""
    over_request_median: float | None
    """Median per-job requested/used ratio."""
    under_half_share: float | None
    """Share of measured jobs that used less than half of their request."""
    backfill_share: float | None
    ended_badly: dict[str, list[str]] = field(default_factory=dict)
    """Finished jobs that failed or timed out, by state, the latest first (at most
    :data:`ENDED_BADLY_SHOWN` ids each): "which jobs failed today?" names them."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(loaded: pl.DataFrame) -> PeriodSummary:
    """The :class:`PeriodSummary` of the jobs submitted in the period."""
    jobs = loaded.filter(pl.col("in_period"))
    finished = pl.col("finished")
    started = pl.col("start").is_not_null()
    wait = pl.col("wait_s").filter(started)
    measured = over_request_jobs()
    ratio = (pl.col("timelimit_s") / pl.col("elapsed_s")).filter(measured)

    def rate(condition: pl.Expr) -> pl.Expr:
        return (condition & finished).sum() / finished.sum()

    row = jobs.select(
        pl.len().alias("jobs"),
        pl.col("user").n_unique().alias("users"),
        pl.col("account").n_unique().alias("accounts"),
        pl.col("partition").n_unique().alias("partitions"),
        finished.sum().alias("finished"),
        pl.col("pending_at_end").sum().alias("pending"),
        pl.col("running_at_end").sum().alias("running"),
        (pl.col("state") == REFUSED).sum().alias("refused"),
        started.sum().alias("started"),
        rate(pl.col("state").is_in(FAILURE_STATES)).alias("failure_rate"),
        rate(pl.col("state") == "TIMEOUT").alias("timeout_rate"),
        rate(pl.col("state") == "CANCELLED").alias("cancel_rate"),
        wait.mean().alias("wait_mean_s"),
        wait.quantile(0.5, WAIT_QUANTILE_METHOD).alias("wait_median_s"),
        wait.quantile(0.9, WAIT_QUANTILE_METHOD).alias("wait_p90_s"),
        wait.max().cast(pl.Float64).alias("wait_max_s"),
        ((pl.col("elapsed_s") * pl.col("nnodes")).sum() / 3600).alias("node_hours"),
        ((pl.col("elapsed_s") * pl.col("ncpus")).sum() / 3600).alias("core_hours"),
        measured.sum().alias("over_request_jobs"),
        (
            pl.col("timelimit_s").filter(measured).sum()
            / pl.col("elapsed_s").filter(measured).sum()
        ).alias("over_request_ratio"),
        ratio.quantile(0.5, WAIT_QUANTILE_METHOD).alias("over_request_median"),
        (ratio > 2).mean().alias("under_half_share"),
        pl.col("backfilled").filter(started).mean().alias("backfill_share"),
    ).to_dicts()[0]
    counts = jobs.group_by("state").len().sort("len", descending=True)
    values: dict[str, Any] = {k: (None if _missing(v) else v) for k, v in row.items()}
    values = {k: 0 if v is None and k in _INT_FIELDS else v for k, v in values.items()}
    states = dict(zip(counts["state"].to_list(), counts["len"].to_list(), strict=True))
    return PeriodSummary(state_counts=states, ended_badly=_ended_badly(jobs), **values)


ENDED_BADLY_SHOWN = 8


def _ended_badly(jobs: pl.DataFrame) -> dict[str, list[str]]:
    bad = jobs.filter(
        pl.col("finished") & pl.col("state").is_in([*FAILURE_STATES, "TIMEOUT"])
    ).sort(["end", "job_id"], descending=True, nulls_last=True)
    out: dict[str, list[str]] = {}
    for state, job_id in zip(bad["state"].to_list(), bad["job_id"].to_list(), strict=True):
        ids = out.setdefault(state, [])
        if len(ids) < ENDED_BADLY_SHOWN:
            ids.append(str(job_id))
    return out


_INT_FIELDS = {
    "jobs",
    "users",
    "accounts",
    "partitions",
    "finished",
    "pending",
    "running",
    "refused",
    "started",
    "over_request_jobs",
    "node_hours",
    "core_hours",
}


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)
