"""The report's table views (waits, pending queue, partitions, GPUs, efficiency), shared by HTML
and Markdown.

Each :class:`View` is a titled table straight from :attr:`Analysis.tables` plus a note saying
what it counts; the renderers only lay them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

import polars as pl

from wass_chat.analytics.analysis import Analysis
from wass_chat.analytics.efficiency import TOP_WASTERS
from wass_chat.analytics.efficiency_charts import NOT_MEASURED
from wass_chat.analytics.insights import plural
from wass_chat.report.html_table import frame_html


@dataclass(frozen=True)
class View:
    """One table of the report with its title and a sentence on what it counts."""

    title: str
    table: pl.DataFrame
    note: str
    empty: str = "No job qualifies in this period."
    csv: str | None = None
    """Name of the table's CSV file (``<name>.csv``) when the view shows only its first rows."""


def queue_views(a: Analysis) -> list[View]:
    """Waits by partition, QOS and job size; the pending queue's reasons and ages."""
    pending = (
        int(a.tables["pending_reasons"]["jobs"].sum()) if a.tables["pending_reasons"].height else 0
    )
    return [
        View(
            "Queue wait by partition",
            a.tables["wait_by_partition"],
            "Started jobs submitted in the period, from eligible to start.",
        ),
        View("Queue wait by QOS", a.tables["wait_by_qos"], "As above, per QOS."),
        View(
            "Queue wait by job size",
            a.tables["wait_by_size"],
            "As above, per class of allocated nodes.",
        ),
        View(
            "Pending reasons at the end of the period",
            a.tables["pending_reasons"],
            f"{plural(pending, 'job')} submitted in the period had not started by its end.",
            "No job was pending at the end of the period.",
        ),
        View(
            "Age of the pending queue",
            a.tables["queue_age"],
            "The same pending jobs by time since submission.",
            "No job was pending at the end of the period.",
        ),
    ]


def top_waster_definition(a: Analysis) -> str:
    """What ranks a user first among the "worst offenders", said where the ranking is shown."""
    average = a.efficiency.cpu_efficiency_pct
    than = f" (the period's is {average:.1f}%)" if average is not None else ""
    return (
        "Ranked by wasted core-hours: the core-hours allocated (elapsed time x CPUs) minus the "
        "CPU time the jobs used, so the most idle CPU time first, not the lowest efficiency. A "
        "user with many jobs can lead at a good CPU efficiency; compare the CPU efficiency "
        f"column with the average{than}."
    )


def efficiency_views(a: Analysis) -> list[View]:
    """CPU and memory efficiency per partition and account, and the worst offenders."""
    by_user = a.tables["efficiency_by_user"]
    measured = f"{a.efficiency.measured_jobs:,} finished jobs with usage recorded"
    return [
        View(
            f"Worst offenders: wasted core-hours, top {min(TOP_WASTERS, by_user.height)} of "
            f"{by_user.height:,} users",
            by_user.head(TOP_WASTERS),
            top_waster_definition(a)
            + f" Over {measured}. Median memory efficiency: the median job's peak memory (its "
            "largest step, all tasks together) over the job's memory.",
            NOT_MEASURED,
            csv="efficiency_by_user",
        ),
        View(
            "CPU and memory efficiency by partition",
            a.tables["efficiency_by_partition"],
            "As above, per partition.",
            NOT_MEASURED,
            csv="efficiency_by_partition",
        ),
        View(
            "CPU and memory efficiency by account",
            a.tables["efficiency_by_account"].head(TOP_WASTERS),
            "As above, per account, most wasted core-hours first.",
            NOT_MEASURED,
            csv="efficiency_by_account",
        ),
    ]


def resources_views(a: Analysis) -> list[View]:
    """Per-partition utilisation against capacity, GPU-hours, and the efficiency views."""
    return [
        View(
            "Utilisation per partition",
            a.tables["partition_utilisation"],
            "Mean busy nodes (a node shared by several jobs counts once) and allocated CPUs "
            "over the period. Utilisation is against the partition's configured CPUs, else its "
            f"configured nodes, else the nodes seen in accounting. Capacity: {a.capacity.label()}.",
        ),
        View(
            "GPU-hours by partition",
            a.tables["gpu_by_partition"],
            "Jobs submitted in the period with GPUs in AllocTRES.",
            "No job was allocated a GPU in this period.",
        ),
        View(
            "GPU-hours, top users",
            a.tables["gpu_by_user"],
            "Share: of all GPU-hours in the period.",
            "No job was allocated a GPU in this period.",
        ),
        View(
            f"GPU-hours, top {TOP_WASTERS} accounts",
            a.tables["gpu_by_account"].head(TOP_WASTERS),
            "Share: of all GPU-hours in the period.",
            "No job was allocated a GPU in this period.",
            csv="gpu_by_account",
        ),
        *efficiency_views(a),
    ]


def shown(views: list[View]) -> list[View | str]:
    """The views with rows, in order; an empty view becomes its one-line absence, said once
    (three GPU views without a GPU job read "No job was allocated a GPU in this period." once)."""
    out: list[View | str] = []
    for view in views:
        if view.table.height:
            out.append(view)
        elif view.empty not in out:
            out.append(view.empty)
    return out


def _view_html(view: View | str, csv_links: dict[str, str]) -> str:
    if isinstance(view, str):
        return f'<p class="absent">{escape(view)}</p>'
    note = f'<p class="note">{escape(view.note)}</p>' if view.note else ""
    link = csv_links.get(view.csv or "")
    more = (
        f'<p class="note"><a class="csv" href="{escape(link)}">Every row as CSV</a>.</p>'
        if link
        else ""
    )
    return f"<h3>{escape(view.title)}</h3>{note}{frame_html(view.table)}{more}"


def views_html(views: list[View], csv_links: dict[str, str] | None = None) -> str:
    """The views with rows, each with its title, note, table and CSV link."""
    return "\n".join(_view_html(v, csv_links or {}) for v in shown(views))


def queue_html(a: Analysis, csv_links: dict[str, str] | None = None) -> str:
    return views_html(queue_views(a), csv_links)


def resources_html(a: Analysis, csv_links: dict[str, str] | None = None) -> str:
    return views_html(resources_views(a), csv_links)
