"""The one table from a column's code name to what a reader sees: its label and how values read.

The analytics tables (and the CSV files written from them, which are for scripts) keep their
machine names and raw values (``median_wait_h``: 0.0333). The page and the Markdown report
show every table through :data:`COLUMNS`, so that column reads "Median wait" with "2.0 min" in
its cells, counts get thousands separators, percentages one decimal, and a missing value reads
"—" instead of ``None``. A column that no row fills is left out of the page.

A new analytics column needs a row here; the report tests check that every header a page shows
is one of these labels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from wass_chat.analytics.insights import amount, human_duration

MISSING = "—"
"""What an empty number cell shows (a partition the configured capacity does not list)."""
NOT_RECORDED = "not recorded"
"""What an empty name cell shows (jobs whose account accounting did not record)."""


def _text(value: Any) -> str:
    return str(value)


def _count(value: Any) -> str:
    return f"{int(value):,}"


def _percent(value: Any) -> str:
    return f"{float(value):.1f}%"


def _hours(value: Any) -> str:
    return human_duration(float(value) * 3600)


def _amount(value: Any) -> str:
    return amount(float(value))


def _seconds(value: Any) -> str:
    return f"{amount(float(value))} s"


def _ratio(value: Any) -> str:
    return f"{float(value):.1f}x"


def _signed_hours(value: Any) -> str:
    hours = float(value)
    return ("+" if hours >= 0 else "-") + human_duration(abs(hours) * 3600)


def _signed_percent(value: Any) -> str:
    """``+1.7%``; a change that rounds to nothing reads ``0.0%``, not ``-0.0%``."""
    pct = float(value)
    return "0.0%" if round(pct, 1) == 0 else f"{pct:+.1f}%"


UNITS: dict[str, Callable[[Any], str]] = {
    "text": _text,
    "count": _count,
    "percent": _percent,
    "hours": _hours,
    "amount": _amount,
    "seconds": _seconds,
    "ratio": _ratio,
    "signed_hours": _signed_hours,
    "signed_percent": _signed_percent,
}
"""How a value of each unit is written; every unit but ``text`` is a number (right-aligned)."""


@dataclass(frozen=True)
class Column:
    """A column as a reader sees it."""

    label: str
    unit: str = "text"
    """A key of :data:`UNITS`: ``hours`` holds hours and reads as ``42 s``/``3.5 min``/``2.1 h``."""


COLUMNS: dict[str, Column] = {
    # who and where
    "user": Column("User"),
    "account": Column("Account"),
    "partition": Column("Partition"),
    "qos": Column("QOS"),
    "size": Column("Job size"),
    "node": Column("Node"),
    "job_id": Column("Job"),
    "state": Column("State"),
    "reason": Column("Pending reason"),
    "age": Column("Time since submission"),
    "basis": Column("Measured against"),
    # counts
    "jobs": Column("Jobs", "count"),
    "finished": Column("Finished jobs", "count"),
    "failed": Column("Failed jobs", "count"),
    "gpu_jobs": Column("GPU jobs", "count"),
    "nnodes": Column("Nodes", "count"),
    "nodes_seen": Column("Nodes seen", "count"),
    "nodes": Column("Configured nodes", "count"),
    "cpus": Column("Configured CPUs", "count"),
    # waits and ages (hours in the tables)
    "median_wait_h": Column("Median wait", "hours"),
    "p90_wait_h": Column("Wait, 90th percentile", "hours"),
    "max_wait_h": Column("Longest wait", "hours"),
    "wait_h": Column("Wait", "hours"),
    "median_age_h": Column("Median time pending", "hours"),
    "max_age_h": Column("Longest time pending", "hours"),
    "busy_hours": Column("Busy time", "hours"),
    # shares
    "share_pct": Column("Share", "percent"),
    "backfill_pct": Column("Started by backfill", "percent"),
    "utilisation_pct": Column("Utilisation", "percent"),
    "failure_pct": Column("Failure rate", "percent"),
    "cpu_eff_pct": Column("CPU efficiency", "percent"),
    "median_mem_eff_pct": Column("Median memory efficiency", "percent"),
    # quantities
    "busy_nodes": Column("Mean busy nodes", "amount"),
    "alloc_cpus": Column("Mean allocated CPUs", "amount"),
    "gpu_hours": Column("GPU-hours", "amount"),
    # GPU use (wass_chat.analytics.gpu_waste)
    "gpus": Column("GPUs", "count"),
    "gpu_type": Column("GPU type"),
    "gpu_hours_held": Column("GPU-hours held", "amount"),
    "recorded_gpu_hours": Column("GPU-hours with use recorded", "amount"),
    "used_gpu_hours": Column("Used GPU-hours", "amount"),
    "wasted_gpu_hours": Column("Wasted GPU-hours", "amount"),
    "idle_gpu_hours": Column("GPU-hours at 0%", "amount"),
    "gpu_util_pct": Column("GPU utilisation", "percent"),
    "gpu_mem_pct": Column("Peak GPU memory", "percent"),
    "gpu_mem_gib": Column("Memory per GPU (GiB)", "amount"),
    "source": Column("Read from"),
    "core_hours": Column("Allocated core-hours", "amount"),
    "used_core_hours": Column("Used core-hours", "amount"),
    "wasted_core_hours": Column("Wasted (idle) core-hours", "amount"),
    "unused_node_hours": Column("Requested but unused node-hours", "amount"),
    "median_ratio": Column("Median requested / used walltime", "ratio"),
    # the report's own tables (summary, data quality, workflow runs)
    "measure": Column("Measure"),
    "this_period": Column("This period"),
    "previous_period": Column("Previous period"),
    "count": Column("Count", "count"),
    "task": Column("Task"),
    "planned": Column("Planned start-end (simulated)"),
    "alternatives": Column("Other nodes considered (finish)"),
    "evidence": Column("Evidence"),
    "run_id": Column("Run"),
    "workflow": Column("Workflow"),
    "scheduler": Column("Scheduler"),
    "makespan_s": Column("Simulated makespan", "seconds"),
    "created": Column("Created"),
    "tasks": Column("Tasks", "count"),
    "planned_makespan_s": Column("Planned makespan", "seconds"),
    "actual_makespan_s": Column("Actual makespan", "seconds"),
    "remark": Column("Note"),
    # energy (modelled from the recorded schedule) and what-ifs (replayed)
    "energy_kwh": Column("Jobs' energy (kWh)", "amount"),
    "it_kwh": Column("IT energy (kWh)", "amount"),
    "facility_kwh": Column("Facility energy (kWh)", "amount"),
    "jobs_kwh": Column("Jobs' part (kWh)", "amount"),
    "from": Column("From"),
    "what_if": Column("What-if"),
    "wait_mean_before_h": Column("Mean wait before", "hours"),
    "wait_mean_after_h": Column("Mean wait after", "hours"),
    "wait_change_h": Column("Change in mean wait", "signed_hours"),
    "wait_ci95": Column("95% CI of the change"),
    "wait_median_before_h": Column("Median wait before", "hours"),
    "wait_median_after_h": Column("Median wait after", "hours"),
    "wait_p95_before_h": Column("95th percentile wait before", "hours"),
    "wait_p95_after_h": Column("95th percentile wait after", "hours"),
    "utilisation_before_pct": Column("Utilisation before", "percent"),
    "utilisation_after_pct": Column("Utilisation after", "percent"),
    "makespan_change_h": Column("Change in makespan", "signed_hours"),
    "cpu_hours_before": Column("CPU-hours before", "amount"),
    "cpu_hours_after": Column("CPU-hours after", "amount"),
    "killed_before": Column("Killed at their limit before", "count"),
    "killed_after": Column("Killed at their limit after", "count"),
    "facility_kwh_before": Column("Facility energy before (kWh)", "amount"),
    "facility_kwh_after": Column("Facility energy after (kWh)", "amount"),
    "energy_change_pct": Column("Change in energy", "signed_percent"),
    "left_out": Column("Jobs too big after the change", "count"),
}


def column(code: str) -> Column:
    """The column of ``code``; one missing from :data:`COLUMNS` reads as its words (and the report
    tests fail, so it does not stay missing)."""
    return COLUMNS.get(code) or Column(code.replace("_", " ").capitalize())


def cell(code: str, value: Any) -> str:
    """``value`` of column ``code`` as the page writes it; an empty value is :data:`MISSING`
    (a number) or :data:`NOT_RECORDED` (a name)."""
    unit = column(code).unit
    if value is None or (isinstance(value, float) and value != value):  # None or NaN
        return NOT_RECORDED if unit == "text" else MISSING
    return UNITS[unit](value)


@dataclass(frozen=True)
class Table:
    """A table as the page shows it: labels, written cells, and which columns hold numbers."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]


def table(codes: Sequence[str], rows: Iterable[Sequence[Any]]) -> Table:
    """A table of rows whose cells are raw values of the columns ``codes`` (written here)."""
    return Table(
        tuple(column(c).label for c in codes),
        tuple(tuple(cell(c, v) for c, v in zip(codes, row, strict=True)) for row in rows),
        tuple(column(c).unit != "text" for c in codes),
    )


def written_table(codes: Sequence[str], rows: Iterable[Sequence[str]]) -> Table:
    """A table whose cells are already written (the summary's "17.4 min / 2.0 min ...")."""
    return Table(
        tuple(column(c).label for c in codes),
        tuple(tuple(MISSING if v in (None, "") else str(v) for v in row) for row in rows),
        tuple(column(c).unit != "text" for c in codes),
    )


def frame_table(frame: pl.DataFrame) -> Table:
    """An analytics table as the page shows it. A number column that no row fills is left out
    (configured CPUs when the capacity is unknown); a name column stays ("not recorded")."""
    kept = [
        n
        for n in frame.columns
        if column(n).unit == "text" or frame.height == 0 or frame[n].null_count() < frame.height
    ]
    return table(kept, frame.select(kept).rows())
