"""Training data and held-out periods for the learned job scheduler (sim/batch/learn.py).

Two workloads by default, both synthetic (``sacct synth``, docs/analytics.md): site A at the
generator's default load and site B at a higher one, each split into weeks; the first
``train_weeks`` of each train the policy, the next ``test_weeks`` are held out. With
``jobs``, a site's own accounting table is split the same way (one workload).
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import polars as pl

from sim.batch.engine import unfit_jobs
from sim.batch.learn import Period
from sim.batch.model import BatchCluster
from sim.errors import InputError
from wass_chat.batch.cluster_source import cluster_from_jobs
from wass_chat.batch.sacct_workload import workload_from_jobs
from wass_chat.sacct.synth import synthesize

SITES = (("A", 11, 0.7), ("B", 12, 0.9))
"""(name, seed, target utilisation) of the two synthetic workloads."""


def weekly_periods(
    jobs: pl.DataFrame, cluster: BatchCluster, name: str, weeks: int
) -> list[Period]:
    """The first ``weeks`` whole weeks of ``jobs`` (by submission), one period each."""
    first = jobs.filter(~pl.col("is_step"))["submit"].min()
    if first is None:
        raise InputError("jobs", ["no job with a submission time"])
    periods = []
    for k in range(weeks):
        start = first + timedelta(days=7 * k)  # type: ignore[operator]
        try:
            loaded = workload_from_jobs(jobs, start, start + timedelta(days=7))
        except InputError:
            continue
        w = loaded.workload
        bad = unfit_jobs(cluster, w)
        if len(bad):
            w = w.take(np.setdiff1d(np.arange(len(w)), bad))
        periods.append(Period(f"{name} week {k + 1}", cluster, w))
    return periods


def synthetic_periods(
    jobs_per_week: int, train_weeks: int, test_weeks: int
) -> tuple[list[Period], list[Period]]:
    """(training, held-out) periods of the two synthetic sites."""
    weeks = train_weeks + test_weeks
    train, test = [], []
    for name, seed, load in SITES:
        table = synthesize(jobs_per_week * weeks, seed, days=7.0 * weeks, utilisation=load)
        periods = weekly_periods(table, cluster_from_jobs(table), f"site {name}", weeks)
        train += periods[:train_weeks]
        test += periods[train_weeks:]
    return train, test


def own_periods(
    jobs: pl.DataFrame, cluster: BatchCluster | None, train_weeks: int, test_weeks: int
) -> tuple[list[Period], list[Period]]:
    """(training, held-out) weeks of a site's own accounting table."""
    cluster = cluster or cluster_from_jobs(jobs)
    periods = weekly_periods(jobs, cluster, "site", train_weeks + test_weeks)
    if len(periods) < train_weeks + 1:
        raise InputError(
            "jobs", [f"{len(periods)} weeks with jobs; need at least {train_weeks + 1}"]
        )
    return periods[:train_weeks], periods[train_weeks:]
