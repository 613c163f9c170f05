"""The report's energy view and what-if section, from the code the chat and `wass-chat whatif
cluster` use.

**Energy** (:func:`~wass_chat.batch.period_energy.period_energy`): the period's IT and facility
energy from the recorded schedule, the jobs' energy by partition, user and time, with the power
model's assumptions on the page (the figures are modelled, not metered).

**What-ifs** (:func:`~wass_chat.batch.whatif.compare`, one baseline replay shared): the
period's jobs replayed, each against the same replay without the change, under the what-ifs of
:mod:`wass_chat.report.whatif_choices`: idle nodes powered off after 30 minutes, walltimes
predicted from each user's history, 10% more and 10% fewer nodes in every partition, and three
chosen from the period (a partition's time limit, the priority weights, nodes where the waits
are; one line instead for each the period cannot make meaningful). The replays cover the
period's last :data:`~wass_chat.batch.scenario.DEFAULT_MAX_JOBS` jobs by default, so the
report stays quick on a large site; ``--whatif-jobs 0`` replays the whole period,
``--no-whatifs`` skips them.

Both need the cluster's nodes, read from the node lists of the period's jobs (a lower bound);
when the accounting has no node lists both are omitted with one line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from sim.batch.energy import PowerModel
from sim.errors import PlatformError
from wass_chat.analytics.period import Period
from wass_chat.batch.baseline_match import checked_baseline, matched_words, unmatched_words
from wass_chat.batch.period_energy import PeriodEnergy, period_energy
from wass_chat.batch.scenario import (
    DEFAULT_MAX_JOBS,
    INFERRED,
    LoadedScenario,
    load_scenario,
    replay_window,
)
from wass_chat.batch.whatif import Baseline, compare
from wass_chat.batch.whatif_answer import ChangeRequest, resolve
from wass_chat.batch.whatif_verdict import signed
from wass_chat.report.whatif_choices import FIXED_WHATIFS, site_whatifs

REPLAY_COLUMNS = (
    "job_id",
    "job_id_raw",
    "user",
    "partition",
    "qos",
    "submit",
    "eligible",
    "start",
    "end",
    "elapsed_s",
    "timelimit_s",
    "timelimit_unlimited",
    "state",
    "nnodes",
    "ncpus",
    "req_mem_bytes",
    "req_tres",
    "alloc_tres",
    "node_list",
    "dependency",
    "is_step",
)
"""The accounting columns energy and replays read (a year of jobs: half the memory)."""
NO_NODES = (
    "No energy view and no what-ifs: the accounting records no node lists (NodeList), so the "
    "cluster's nodes are unknown."
)


@dataclass(frozen=True)
class WhatIfOptions:
    """Whether the report replays its what-ifs, and on how many of the period's last jobs."""

    enabled: bool = True
    max_jobs: int | None = DEFAULT_MAX_JOBS
    """``None``: every job of the period."""


@dataclass(frozen=True)
class ClusterSection:
    """What the energy and what-if sections show (or why they are absent)."""

    energy: PeriodEnergy | None = None
    whatifs: pl.DataFrame | None = None
    """One row per what-if replayed (codes of the columns table): the fixed four of
    :data:`~wass_chat.report.whatif_choices.FIXED_WHATIFS`, then those chosen from the period."""
    window: str = ""
    """What the what-ifs replayed, in words."""
    baseline_check: str = ""
    """How far the unchanged replay is from the recorded starts."""
    absent: str = ""
    """Why neither section has figures ('' when they have)."""
    whatif_absent: str = ""
    """Why the what-ifs were not replayed ('' when they were)."""
    whatif_lines: tuple[str, ...] = ()
    """Sentences under the table: the predictions' accuracy and backfill's gain, then the
    what-ifs the period could not make meaningful, each with its reason."""
    notes: list[str] = field(default_factory=list)
    cpu_s: float = 0.0


def build_cluster_section(
    jobs: pl.LazyFrame, period: Period, filters: dict[str, str], options: WhatIfOptions
) -> ClusterSection:
    """The energy of ``period`` and, unless disabled, its what-ifs."""
    began = time.process_time()
    run_end = pl.coalesce(
        pl.col("end"), pl.col("start") + pl.duration(seconds=pl.col("elapsed_s").fill_null(0))
    )
    table = (
        jobs.filter(
            ~pl.col("is_step")
            & (pl.col("submit") < period.end)
            & (pl.col("start").is_null() | (run_end > period.start))
        )
        .select(REPLAY_COLUMNS)
        .collect()
    )
    notes = []
    if filters:
        notes.append(
            "The filters ("
            + ", ".join(f"{k} = {v}" for k, v in filters.items())
            + ") do not apply here: energy and what-ifs cover every job of the period."
        )
    try:
        from wass_chat.batch.cluster_source import cluster_from_jobs

        cluster = cluster_from_jobs(table)
    except PlatformError:
        return ClusterSection(absent=NO_NODES, cpu_s=time.process_time() - began)
    energy = period_energy(table, period.start, period.end, cluster, PowerModel(), INFERRED)
    if not options.enabled:
        return ClusterSection(
            energy,
            whatif_absent="What-ifs not replayed (--no-whatifs was given).",
            notes=notes,
            cpu_s=time.process_time() - began,
        )
    window = replay_window(table, period.start, period.end, options.max_jobs)
    if window is None:
        return ClusterSection(
            energy,
            whatif_absent="No what-ifs: no job was submitted in the period.",
            notes=notes,
            cpu_s=time.process_time() - began,
        )
    loaded = load_scenario(
        table, None, window.start, window.end, "jobs", known_cluster=(cluster, INFERRED)
    )
    checked = checked_baseline(loaded, table)
    if not checked.matches:
        return ClusterSection(
            energy,
            window=window.words(options.max_jobs or 0, "the report's period"),
            whatif_absent="No what-ifs: "
            + " ".join(unmatched_words(checked.check, ["the report's what-ifs"])),
            notes=notes,
            cpu_s=time.process_time() - began,
        )
    loaded = replace(loaded, scenario=checked.scenario)
    baseline = checked.baseline
    site = site_whatifs(loaded.scenario, baseline.figures["baseline"])
    rows, explained = whatif_rows(loaded, baseline, FIXED_WHATIFS + site.chosen)
    return ClusterSection(
        energy,
        rows,
        window.words(options.max_jobs or 0, "the report's period"),
        _baseline_check(baseline.figures["baseline_vs_recorded"], checked.check),
        whatif_lines=explained + site.left_out,
        notes=notes,
        cpu_s=time.process_time() - began,
    )


def whatif_rows(
    loaded: LoadedScenario, baseline: Baseline, whatifs: tuple[tuple[str, ChangeRequest], ...]
) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """One row per what-if, each replayed against ``baseline`` (the unchanged replay of
    ``loaded``), and the sentences a row's figures need (the predictions' accuracy and what
    they did to backfill; the jobs a smaller cluster cannot host, left out of both replays)."""
    rows, lines = [], []
    for label, request in whatifs:
        changes, _ = resolve(request, loaded.scenario.cluster)
        report = compare(loaded.scenario, changes, loaded.power_model, baseline=baseline)
        rows.append(_row(label, report))
        if "prediction_accuracy" in report:
            lines.append(_prediction_line(label, report))
        if left := report.get("left_out_unfit_after_change", 0):
            lines.append(
                f"{label}: {left:,} jobs too big for the changed cluster are left out of both "
                "replays, so its 'before' figures are those of the other jobs alone and differ "
                "from the other rows'."
            )
    return pl.DataFrame(rows), tuple(lines)


def _prediction_line(label: str, report: dict[str, Any]) -> str:
    """The predictions against the requested limits, and backfill's starts with each."""
    acc = report["prediction_accuracy"]
    predicted, requested = acc.get("prediction") or {}, acc.get("requested_limit") or {}
    before, after = report["baseline"]["backfilled"], report["variant"]["backfilled"]
    line = (
        f"{label}: backfill starts {after:,} jobs, against {before:,} with the requested "
        f"limits ({signed_count(after - before)})."
    )
    if predicted and requested:
        line += (
            f" The predictions' median error is {predicted['median_abs_error_pct']:.0f}% of the "
            f"run time, against {requested['median_abs_error_pct']:.0f}% for the requested "
            f"limits ({acc['predicted']:,} of {acc['jobs']:,} jobs were given a prediction "
            "below their limit)."
        )
    return line


def signed_count(n: int) -> str:
    return f"{n:+,}"


def _row(label: str, report: dict[str, Any]) -> dict[str, Any]:
    b, v, d = report["baseline"], report["variant"], report["difference"]
    energy = b["energy"]["facility_kwh"]
    low, high = d["wait_mean_ci95_s"]
    return {
        "what_if": label,
        "jobs": b["jobs"],
        "wait_mean_before_h": b["waits"]["mean_s"] / 3600,
        "wait_mean_after_h": v["waits"]["mean_s"] / 3600,
        "wait_change_h": d["wait_mean_s"] / 3600,
        "wait_ci95": f"{signed(low)} to {signed(high)}",
        "wait_median_before_h": b["waits"]["median_s"] / 3600,
        "wait_median_after_h": v["waits"]["median_s"] / 3600,
        "wait_p95_before_h": b["waits"]["p95_s"] / 3600,
        "wait_p95_after_h": v["waits"]["p95_s"] / 3600,
        "utilisation_before_pct": 100 * b["utilisation"],
        "utilisation_after_pct": 100 * v["utilisation"],
        "makespan_change_h": d["makespan_s"] / 3600,
        "cpu_hours_before": b["cpu_hours"],
        "cpu_hours_after": v["cpu_hours"],
        "killed_before": b["killed_at_limit"],
        "killed_after": v["killed_at_limit"],
        "facility_kwh_before": energy,
        "facility_kwh_after": v["energy"]["facility_kwh"],
        "energy_change_pct": 100 * d["energy_facility_kwh"] / energy if energy else 0.0,
        "left_out": report.get("left_out_unfit_after_change", 0),
    }


def _baseline_check(rec: dict[str, Any], check: dict[str, Any]) -> str:
    if not rec.get("jobs"):
        return ""
    return (
        matched_words(check)
        + " "
        + (
            f"The replay without any change against the record: "
            f"{100 * rec['within_tolerance']:.1f}% of {rec['jobs']:,} starts within "
            f"{rec['tolerance_s']:.0f} s of the recorded ones, start-order rank correlation "
            f"{rec['start_rank_correlation']:.2f}; read each what-if against that replay, not "
            "against the record."
        )
    )
