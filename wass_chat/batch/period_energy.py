"""The energy a recorded period drew, from the accounting table and a power model.

Every node is counted on and idle for the whole period (the record has no power saving), and
each job adds its dynamic power over the part of its run inside the period; a job is priced
on the first node of its partition, and holds the idle power of the share of its nodes it
uses (:func:`sim.batch.energy.share_watts`, the formula the replays price jobs with). So the
jobs' energy plus the idle energy no job held is the period's IT energy, and the facility's is
that times the PUE. These are modelled figures, not meter readings: the power model's
assumptions go wherever a figure is shown (:func:`assumptions`).

One function for the chat's energy answers and the audit report's energy view, so both give
the same kWh for the same period.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import polars as pl

from sim.batch.energy import (
    PowerModel,
    energy_before_j,
    first_nodes,
    node_watts,
    profiles_in_use,
    share_watts,
)
from sim.batch.model import BatchCluster
from wass_chat.batch.sacct_workload import gpus

J_PER_KWH = 3.6e6


@dataclass(frozen=True)
class PeriodEnergy:
    """Energy of ``[start, end)``: totals, and the jobs' energy by partition, user and time."""

    start: datetime
    end: datetime
    jobs: int
    """Jobs that ran during the period and were priced."""
    unpriced_jobs: int
    """Jobs of a partition the cluster does not have (not priced)."""
    nodes: int
    it_kwh: float
    facility_kwh: float
    jobs_kwh: float
    pue: float
    by_partition: pl.DataFrame
    """partition, jobs, energy_kwh, share_pct (of all jobs' energy), largest first."""
    by_user: pl.DataFrame
    """user, jobs, energy_kwh, share_pct, largest first."""
    over_time: pl.DataFrame
    """from (bucket start), it_kwh, facility_kwh, jobs_kwh."""
    profiles: list[dict[str, Any]] = field(default_factory=list)
    cluster: str = ""
    """Where the cluster came from (live, a platform file, or inferred from the jobs)."""
    clamped: bool = False
    """The period asked for reached beyond the records (or now): it was cut to them."""
    overheld_intervals: int = 0
    """Intervals of ``over_time`` in which the jobs held more nodes than the cluster has: their
    nodes' idle power is counted instead of the cluster's, so the jobs never exceed the total."""

    @property
    def idle_kwh(self) -> float:
        """IT energy no job held: idle nodes and the idle power of node shares left free
        (never below 0: float sums of equal parts can differ in the last bit)."""
        return max(self.it_kwh - self.jobs_kwh, 0.0)


def recorded_span(jobs: pl.DataFrame | pl.LazyFrame) -> tuple[datetime, datetime] | None:
    """From the first submission to just after the last submission, start or end ``jobs``
    records (None for no job): idle power outside it is not known, so not counted."""
    first, last = (
        jobs.lazy()
        .filter(~pl.col("is_step"))
        .select(
            pl.col("submit").min().alias("first"),
            pl.max_horizontal(
                pl.col("submit").max(), pl.col("start").max(), pl.col("end").max()
            ).alias("last"),
        )
        .collect()
        .row(0)
    )
    return None if first is None else (first, last + timedelta(seconds=1))


def period_energy(
    jobs: pl.DataFrame | pl.LazyFrame,
    start: datetime | None,
    end: datetime | None,
    cluster: BatchCluster,
    model: PowerModel,
    cluster_label: str = "",
    bucket_s: int | None = None,
) -> PeriodEnergy:
    """The energy of ``[start, end)`` from ``jobs`` (the parsed sacct table), cut to what the
    table records (:func:`recorded_span`) and to now; ``clamped`` says when it was cut."""
    asked = (start, end)
    span = recorded_span(jobs)
    if span is not None:
        start = max(start or span[0], span[0])
        end = min(end or span[1], span[1], datetime.now())
    start = start or datetime.now()
    end = max(end or start, start)
    window_s = max(int((end - start).total_seconds()), 1)
    run_end = pl.coalesce(
        pl.col("end"), pl.col("start") + pl.duration(seconds=pl.col("elapsed_s").fill_null(0))
    )
    nnodes = pl.col("nnodes").fill_null(1).clip(1)
    ran = (
        jobs.lazy()
        .filter(~pl.col("is_step") & pl.col("start").is_not_null() & (pl.col("start") < end))
        .filter(run_end > start)
        .select(
            pl.col("partition").fill_null("unknown").str.split(",").list.first(),
            pl.col("user").fill_null("unknown"),
            nnodes.cast(pl.Int64).alias("nnodes"),
            (pl.col("ncpus").fill_null(1).clip(1) / nnodes).ceil().alias("cpus"),
            (pl.coalesce(gpus("alloc_tres"), gpus("req_tres"), pl.lit(0)) / nnodes)
            .ceil()
            .alias("gpus"),
            ((pl.max_horizontal("start", pl.lit(start)) - pl.lit(start)).dt.total_seconds())
            .cast(pl.Float64)
            .alias("from_s"),
            ((pl.min_horizontal(run_end, pl.lit(end)) - pl.lit(start)).dt.total_seconds())
            .cast(pl.Float64)
            .alias("to_s"),
        )
        .collect()
    )
    partitions = ran["partition"].unique().sort().to_list()
    first = first_nodes(cluster, partitions)
    codes = ran["partition"].cast(pl.Enum(partitions)).to_physical().to_numpy()
    node = first[codes.astype(np.int64)]
    priced = node >= 0
    cpus, node_gpus, idle, cpu, gpu = node_watts(cluster, model)
    at = np.where(priced, node, 0)
    idle_part, dynamic = share_watts(
        ran["nnodes"].to_numpy(),
        ran["cpus"].to_numpy(),
        ran["gpus"].to_numpy(),
        cpus[at],
        node_gpus[at],
        (idle[at], cpu[at], gpu[at]),
    )
    begin, finish = ran["from_s"].to_numpy(), ran["to_s"].to_numpy()
    seconds = np.where(priced, np.maximum(finish - begin, 0.0), 0.0)
    job_j = (idle_part + dynamic) * seconds
    idle_w = float(idle.sum())
    per_job = ran.select("partition", "user").with_columns(
        pl.Series("energy_kwh", job_j / J_PER_KWH), pl.Series("priced", priced)
    )
    jobs_kwh = float(job_j.sum()) / J_PER_KWH
    step = bucket_s or _bucket_s(window_s)
    edges = np.append(np.arange(0, window_s, step, dtype=np.float64), float(window_s))
    held = np.where(priced, idle_part + dynamic, 0.0)
    drawn = np.where(priced, dynamic, 0.0)
    held_idle = np.where(priced, idle_part, 0.0)
    before = energy_before_j(begin, finish, np.stack([held, drawn, held_idle], axis=1), edges)
    jobs_edges, dynamic_edges, held_idle_edges = before[:, 0], before[:, 1], before[:, 2]
    idle_buckets, held_idle_buckets = idle_w * np.diff(edges), np.diff(held_idle_edges)
    # Accounting may run more at once than the modelled cluster holds (an inferred or smaller
    # cluster): then the jobs held more idle power than its nodes have, and the nodes they held
    # were on. Counting only the cluster's idle power would leave the jobs above 100% of the IT
    # energy and the idle part negative; count the larger of the two in each interval instead.
    overheld = held_idle_buckets > idle_buckets * (1 + 1e-9)
    it_buckets = np.maximum(idle_buckets, held_idle_buckets) + np.diff(dynamic_edges)
    it_j = float(it_buckets.sum())
    over_time = pl.DataFrame(
        {
            "from": [start + timedelta(seconds=float(t)) for t in edges[:-1]],
            "it_kwh": it_buckets / J_PER_KWH,
            "facility_kwh": it_buckets * model.pue / J_PER_KWH,
            "jobs_kwh": np.diff(jobs_edges) / J_PER_KWH,
        }
    )
    return PeriodEnergy(
        start=start,
        end=end,
        jobs=int(priced.sum()),
        unpriced_jobs=int((~priced).sum()),
        nodes=len(cluster.nodes),
        it_kwh=it_j / J_PER_KWH,
        facility_kwh=it_j * model.pue / J_PER_KWH,
        jobs_kwh=jobs_kwh,
        pue=model.pue,
        by_partition=_ranked(per_job, "partition", jobs_kwh),
        by_user=_ranked(per_job, "user", jobs_kwh),
        over_time=over_time,
        profiles=profiles_in_use(cluster, model),
        cluster=cluster_label,
        clamped=(start, end) != asked,
        overheld_intervals=int(overheld.sum()),
    )


def _bucket_s(window_s: int) -> int:
    """Hourly up to two days, daily up to 92 days, then weekly (the report's resolutions)."""
    if window_s <= 2 * 86400:
        return 3600
    return 86400 if window_s <= 92 * 86400 else 7 * 86400


def _ranked(per_job: pl.DataFrame, by: str, total_kwh: float) -> pl.DataFrame:
    return (
        per_job.filter(pl.col("priced"))
        .group_by(by)
        .agg(pl.len().cast(pl.Int64).alias("jobs"), pl.col("energy_kwh").sum())
        .with_columns((100 * pl.col("energy_kwh") / max(total_kwh, 1e-12)).alias("share_pct"))
        .sort(["energy_kwh", by], descending=[True, False])
    )


def assumptions(energy: PeriodEnergy) -> list[str]:
    """The power model's assumptions, one sentence each: shown next to every energy figure."""
    lines = [
        "Modelled, not metered: each node type draws an assumed power (below) unless a platform "
        "file gives the site's own; accounting's ConsumedEnergy is not used.",
        "Every node is counted on and idle for the whole period (the recorded schedule had no "
        "power saving); a job adds its CPUs' share of the CPU power and its GPUs' power, and "
        "holds the idle power of the share of its nodes it uses.",
        "A job is priced on its partition's first node type"
        + (f"; the cluster is {energy.cluster}." if energy.cluster else "."),
        f"Facility energy is IT energy x a PUE of {energy.pue:g}.",
    ]
    for p in energy.profiles:
        gpus = p["gpus_per_node"]
        gpu_text = f", +{p['gpu_w']:g} W per busy GPU ({gpus} per node)" if gpus else ""
        origin = "assumed default" if p["assumed"] else "from the platform file"
        lines.append(
            f"{p['node_type']} nodes ({p['nodes']:,}): {p['idle_w']:g} W idle, "
            f"+{p['cpu_w']:g} W at full CPU load{gpu_text}; {p['off_w']:g} W off, "
            f"{p['boot_w']:g} W booting ({origin})."
        )
    if energy.overheld_intervals:
        lines.append(
            f"In {energy.overheld_intervals:,} intervals the accounting shows more nodes busy "
            "than the cluster has: there the busy nodes' idle power is counted, so the jobs' "
            "energy never exceeds the total."
        )
    if energy.unpriced_jobs:
        lines.append(
            f"{energy.unpriced_jobs:,} jobs ran in partitions the cluster does not have and "
            "are not priced."
        )
    return lines
