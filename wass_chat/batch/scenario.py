"""What a whole-cluster replay starts from: the jobs, the cluster they ran on, its scheduler.

One place for ``wass-chat whatif cluster``, the chat's cluster what-ifs and the audit report's
what-if section, so the three replay the same workload on the same cluster for the same
period. The jobs come from the parsed sacct table (the cache, or an export) or a Standard
Workload Format trace; the cluster (:func:`cluster_for`) from the live Slurm, a platform file,
or the nodes the jobs ran on (a lower bound, labelled so).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.batch.config import SchedulerConfig, scheduler_preset
from sim.batch.energy import PowerModel
from sim.batch.engine import unfit_jobs
from sim.batch.model import BatchCluster
from sim.errors import InputError, ServiceUnavailable
from wass_chat.batch.whatif import Scenario

INFERRED = "inferred from the nodes jobs ran on (capacity is a lower bound)"
"""How a cluster read from the jobs is labelled wherever its figures are shown."""


@dataclass(frozen=True)
class LoadedScenario:
    """A replay's starting point, the power model to price it, and where each part came from."""

    scenario: Scenario
    power_model: PowerModel
    source: dict[str, Any] = field(default_factory=dict)


def cluster_for(
    choice: str, jobs: pl.DataFrame | None
) -> tuple[BatchCluster, SchedulerConfig | None, PowerModel, str]:
    """The cluster of ``choice``: ``auto`` (the live cluster when Slurm answers, else the jobs'
    nodes), ``live``, ``jobs``, or a platform file; with its scheduler settings (live only),
    power model and a label saying where it came from."""
    from sim.batch.cluster_file import load_cluster_file
    from wass_chat.batch.cluster_source import cluster_from_jobs
    from wass_chat.slurm.scontrol_cluster import live_cluster

    if choice in ("auto", "live"):
        try:
            live, config = live_cluster()
            return live, config, PowerModel(), "live (scontrol)"
        except ServiceUnavailable:
            if choice == "live":
                raise
    if choice in ("auto", "jobs"):
        if jobs is None:
            raise InputError("--cluster", ["'jobs' needs a sacct workload"])
        return cluster_from_jobs(jobs), None, PowerModel(), INFERRED
    cluster, power = load_cluster_file(Path(choice))
    return cluster, None, power, choice


def load_scenario(
    jobs: pl.DataFrame | None,
    swf: Path | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    cluster: str = "auto",
    scheduler: str | None = None,
    bf_depth: int | None = None,
    workload_label: str = "sacct cache",
    known_cluster: tuple[BatchCluster, str] | None = None,
) -> LoadedScenario:
    """The jobs of ``jobs`` (the parsed sacct table) submitted in ``[start, end)``, or the
    trace ``swf``, on the cluster ``cluster`` under ``scheduler`` (default: the live
    configuration's, else EASY backfill). Jobs no node of the cluster can host are left out
    and counted. ``known_cluster`` (a cluster already read, and its label) saves reading it
    again from the jobs."""
    from sim.batch.swf import read_swf
    from wass_chat.batch.sacct_workload import workload_from_jobs

    power_model = PowerModel()
    source: dict[str, Any] = {}
    config = None
    if swf is not None:
        trace = read_swf(swf)
        workload, batch_cluster = trace.workload, trace.cluster
        if not workload.job_ids:  # a replay of nothing would print confident zeros
            raise InputError(
                str(swf),
                [
                    f"no job to replay ({trace.skipped_no_run} lines "
                    "without a run time or processor count)"
                ],
            )
        source.update(
            workload=str(swf),
            skipped_without_run=trace.skipped_no_run,
            cluster="the trace's processor pool",
        )
        if cluster not in ("auto", "jobs", "live"):
            batch_cluster, config, power_model, source["cluster"] = cluster_for(cluster, None)
    else:
        if jobs is None:
            raise InputError("workload", ["no jobs: give a sacct table or an SWF trace"])
        loaded = workload_from_jobs(jobs, start, end)
        workload = loaded.workload
        source.update(
            workload=workload_label,
            never_started=loaded.never_started,
            still_running=loaded.still_running,
        )
        if known_cluster is not None:
            batch_cluster, source["cluster"] = known_cluster
        else:
            batch_cluster, config, power_model, source["cluster"] = cluster_for(cluster, jobs)
    sched = scheduler_preset(scheduler) if scheduler else (config or scheduler_preset("easy"))
    if config is not None and scheduler:
        sched = replace(
            sched,
            weights=config.weights,
            bf_interval_s=config.bf_interval_s,
            bf_window_s=config.bf_window_s,
        )
    if bf_depth is not None:
        sched = replace(sched, reservation_depth=bf_depth)
    if len(workload):  # a partition removed since (still in the accounting): its jobs go
        known = set(batch_cluster.partition_names())
        names = np.array(workload.partitions, dtype=object)[workload.partition]
        gone = np.flatnonzero(~np.isin(names, list(known)))
        if len(gone):
            workload = workload.take(np.setdiff1d(np.arange(len(workload)), gone))
            source["left_out_partition_gone"] = len(gone)
            source["partitions_gone"] = sorted(set(names[gone].tolist()))
    bad = unfit_jobs(batch_cluster, workload)
    if len(bad):
        workload = workload.take(np.setdiff1d(np.arange(len(workload)), bad))
        source["left_out_fit_nowhere"] = len(bad)
    source["jobs"] = len(workload)
    source["scheduler"] = {
        "order": sched.order,
        "backfill": sched.backfill,
        "reservation_depth": sched.reservation_depth,
        "bf_interval_s": sched.bf_interval_s,
    }
    return LoadedScenario(Scenario(batch_cluster, workload, sched), power_model, source)


DEFAULT_DAYS = 14
"""A replay asked for without a period (a chat question, the report's what-ifs) covers the
last two weeks of accounting..."""
DEFAULT_MAX_JOBS = 20_000
"""...or its last 20,000 jobs when those weeks hold more: two replays of 20,000 jobs take
about 1.5 s of CPU, fast enough for a chat (``wass-chat whatif cluster`` has no cap)."""


@dataclass(frozen=True)
class ReplayWindow:
    """The submissions a replay covers, and why it is no longer (asked, or capped)."""

    start: datetime
    end: datetime
    jobs: int
    asked: bool
    """The period was asked for (else: the default, the last :data:`DEFAULT_DAYS` days)."""
    capped: bool
    """The period held more than the cap: only its last jobs are replayed."""

    def words(self, cap: int, asked_as: str = "the period asked for") -> str:
        """How the answer or the page says what was replayed."""
        span = f"{self.start:%Y-%m-%d %H:%M} to {self.end:%Y-%m-%d %H:%M}"
        what = asked_as if self.asked else f"the last {DEFAULT_DAYS} days of accounting"
        if self.capped:
            return (
                f"the last {self.jobs:,} jobs of {what} (submitted {span}; replays are capped "
                f"at {cap:,} jobs to stay quick)"
            )
        return f"{what}: {self.jobs:,} jobs submitted {span}"


def replay_window(
    jobs: pl.DataFrame,
    start: datetime | None = None,
    end: datetime | None = None,
    max_jobs: int | None = DEFAULT_MAX_JOBS,
) -> ReplayWindow | None:
    """``[start, end)``, by default the last :data:`DEFAULT_DAYS` days up to just after the
    last submission, moved later if needed so that it holds at most ``max_jobs`` jobs (the
    latest; ``None``: no cap). None when no job was submitted in it."""
    allocations = jobs.filter(~pl.col("is_step") & pl.col("submit").is_not_null())
    asked = start is not None or end is not None
    if end is None:
        last = allocations.select(pl.col("submit").max()).item()
        if last is None:
            return None
        end = last + timedelta(seconds=1)
    if start is None:
        start = end - timedelta(days=DEFAULT_DAYS) if not asked else datetime(1970, 1, 1)
    submits = allocations.filter((pl.col("submit") >= start) & (pl.col("submit") < end))[
        "submit"
    ].sort()
    if submits.is_empty():
        return None
    capped = max_jobs is not None and len(submits) > max_jobs
    if capped:
        # Jobs sharing the cut's submit second are all in or all out, never more than the cap
        # (array tasks share one); only when the whole tail shares it is the cap exceeded.
        latest = submits.filter(submits > submits[len(submits) - int(max_jobs or 0) - 1])
        if latest.is_empty():
            latest = submits.filter(submits >= submits[len(submits) - int(max_jobs or 0)])
        start, submits = latest[0], latest
    return ReplayWindow(start, end, len(submits), asked, capped)
