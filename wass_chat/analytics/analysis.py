"""One call from a jobs table and a period to every statistic, chart, anomaly and insight."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from wass_chat.analytics import breakdowns as bd
from wass_chat.analytics import efficiency as eff
from wass_chat.analytics import figures as fig
from wass_chat.analytics import resources, waits
from wass_chat.analytics.anomalies import Anomaly, find_anomalies
from wass_chat.analytics.capacity import Capacity, fallback_capacity
from wass_chat.analytics.charts import ChartSpec
from wass_chat.analytics.efficiency_charts import efficiency_chart, wasted_chart
from wass_chat.analytics.findings import Finding, find_findings
from wass_chat.analytics.gpu_waste import (
    GpuUseSummary,
    gpu_tables,
    period_gpu_table,
    summarize_gpu_use,
)
from wass_chat.analytics.period import JobFilter, Period, load_period, period_of
from wass_chat.analytics.summary import PeriodSummary, summarize
from wass_chat.analytics.utilisation import (
    node_intervals,
    partition_utilisation,
    utilisation_over_time,
)


@dataclass(frozen=True)
class Analysis:
    """Everything the report shows about accounting data for one period."""

    period: Period
    summary: PeriodSummary
    nodes_seen: int
    charts: tuple[ChartSpec, ...]
    anomalies: tuple[Anomaly, ...]
    node_usage: pl.DataFrame
    tables: dict[str, pl.DataFrame]
    """The aggregated table behind each chart or view, by name."""
    capacity: Capacity = field(default_factory=lambda: fallback_capacity(0))
    """The utilisation denominator and its source (a labelled fallback when none was known)."""
    filters: dict[str, str] = field(default_factory=dict)
    """user / account / partition filters applied, if any."""
    previous: PeriodSummary | None = None
    """The same statistics for the period of equal length just before, when it has jobs."""
    findings: tuple[Finding, ...] = ()
    """The cross-chart summary: observations with recommendations, numbers from the tables."""
    efficiency: eff.EfficiencySummary = field(
        default_factory=lambda: eff.summarize_efficiency(pl.DataFrame())
    )
    """CPU and memory efficiency of the period's finished jobs (TotalCPU, MaxRSS)."""
    gpu_use: GpuUseSummary | None = None
    """GPU use and waste of the period's finished GPU jobs (:mod:`.gpu_waste`); None when no
    job held a GPU. Its tables are ``gpu_*`` in :attr:`tables`."""
    sources: dict[str, int] = field(default_factory=dict)
    """The period's jobs by where their rows came from (``sacct``, ``file:<name>``,
    ``synthetic``; ``unknown`` for rows imported before sources were recorded), most first."""


def analyze(
    jobs: pl.LazyFrame,
    start: datetime | None = None,
    end: datetime | None = None,
    user: str | None = None,
    *,
    account: str | None = None,
    partition: str | None = None,
    capacity: Capacity | None = None,
    compare: bool = True,
) -> Analysis:
    """Load the period from ``jobs`` (the cache's lazy frame) and compute the whole analysis.

    ``capacity`` is the cluster's configured size; without it, utilisation is measured against
    the distinct nodes seen in accounting and the report says so. ``compare`` adds the previous
    period's summary (one more pass over the cache).
    """
    only = JobFilter(user, account, partition)
    filters = vars(only)
    period = period_of(jobs, start, end)
    loaded = load_period(jobs, period, **filters)
    summary = summarize(loaded)
    intervals = node_intervals(loaded)
    nodes = intervals.per_node
    nodes_seen = nodes.height
    capacity = _partition_capacity(capacity, partition) or fallback_capacity(nodes_seen)
    pending = waits.pending_at_end(loaded, period)
    gpu_jobs = resources.gpu_jobs(loaded)
    tables: dict[str, pl.DataFrame] = {
        "states_per_user": bd.states_per_user(loaded),
        "wait_by_state": bd.wait_by_state(loaded),
        "utilisation": utilisation_over_time(loaded, period, capacity, intervals),
        "partition_utilisation": partition_utilisation(loaded, period, capacity, intervals),
        "top_users": bd.top_entities(loaded, "user"),
        "top_accounts": bd.top_entities(loaded, "account"),
        "rates": bd.rates_over_time(loaded, period),
        "wait_by_partition": waits.wait_by(loaded, "partition", "partition"),
        "wait_by_qos": waits.wait_by(loaded, "qos", "qos"),
        "wait_by_size": waits.wait_by_size(loaded),
        "pending_reasons": waits.pending_reasons(pending),
        "queue_age": waits.queue_age(pending),
        "backfill": bd.backfill_over_time(loaded, period),
        "gpu_by_partition": resources.gpu_by(gpu_jobs, "partition"),
        "gpu_by_user": resources.gpu_by(gpu_jobs, "user", resources.TOP_GPU_USERS),
        "gpu_by_account": resources.gpu_by(gpu_jobs, "account"),
    }
    gpu_per_job = period_gpu_table(loaded, jobs, period)
    gpu_use = summarize_gpu_use(gpu_per_job)
    if gpu_use is not None:
        tables |= gpu_tables(gpu_per_job, period)
    per_job = eff.job_efficiency(loaded, eff.step_usage(jobs, period.start).collect())
    efficiency = eff.summarize_efficiency(per_job)
    tables["efficiency_histogram"] = eff.efficiency_histogram(per_job)
    for column in ("user", "account", "partition"):
        tables[f"efficiency_by_{column}"] = eff.efficiency_by(per_job, column)
    walltime, measured = bd.walltime_requested_vs_used(loaded)
    scatter, started = bd.nodes_vs_elapsed(loaded)
    tables["walltime"] = walltime
    tables["nodes_vs_elapsed"] = scatter
    charts = (
        fig.states_chart(tables["states_per_user"], summary),
        fig.wait_chart(tables["wait_by_state"], summary),
        fig.walltime_chart(walltime, measured, summary),
        fig.nodes_chart(scatter, started),
        fig.utilisation_chart(tables["utilisation"], capacity, period),
        fig.top_chart(tables["top_users"], "user", summary),
        fig.top_chart(tables["top_accounts"], "account", summary),
        fig.rates_chart(tables["rates"], period),
        fig.wait_by_partition_chart(tables["wait_by_partition"]),
        fig.pending_chart(tables["pending_reasons"], pending.height, period),
        fig.backfill_chart(tables["backfill"], period),
        efficiency_chart(tables["efficiency_histogram"], efficiency),
        wasted_chart(tables["efficiency_by_user"].head(eff.TOP_WASTERS), efficiency),
    )
    anomalies = tuple(find_anomalies(loaded, summary, nodes))
    previous = None
    if compare:
        before = summarize(load_period(jobs, period.previous(), **filters))
        previous = before if before.jobs else None
    findings = find_findings(summary, previous, tables, anomalies, efficiency)
    sources = (
        loaded.filter(pl.col("in_period"))
        .group_by(pl.col("source").fill_null("unknown"))
        .len()
        .sort("len", "source", descending=[True, False])
    )
    return Analysis(
        period,
        summary,
        nodes_seen,
        charts,
        anomalies,
        nodes,
        tables,
        capacity,
        only.applied(),
        previous,
        findings,
        efficiency,
        gpu_use,
        dict(sources.rows()),
    )


def _partition_capacity(capacity: Capacity | None, partition: str | None) -> Capacity | None:
    """With a partition filter, that partition's configured size when the capacity knows it."""
    part = capacity.partition(partition) if capacity and partition else None
    if capacity is None or part is None:
        return capacity
    return Capacity(part.nodes, part.cpus, f"{capacity.source}, partition {part.name}", (part,))
