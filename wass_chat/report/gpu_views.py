"""The report's GPU section: GPU-hours held, used and wasted, idle jobs, small-memory jobs and
the trend (:mod:`wass_chat.analytics.gpu_waste`); left out when no job held a GPU."""

from __future__ import annotations

from wass_chat.analytics.analysis import Analysis
from wass_chat.analytics.gpu_usage import IDLE_UTILISATION_PCT, LARGE_GPU_BYTES, SMALL_MEMORY_SHARE
from wass_chat.analytics.gpu_waste import TOP_GPU_JOBS
from wass_chat.analytics.insights import amount, plural
from wass_chat.report.views import View, views_html

GPU_TABLES = (
    "gpu_waste_by_user",
    "gpu_waste_by_account",
    "gpu_waste_by_partition",
    "gpu_waste_by_gpu_type",
    "gpu_idle_jobs",
    "gpu_small_memory_jobs",
    "gpu_trend",
)
"""The section's tables, each written as a CSV beside the report."""


def gpu_headline(a: Analysis) -> str:
    """One paragraph: GPU-hours held, recorded, used, wasted, at 0%, and where use was read."""
    g = a.gpu_use
    if g is None:
        return ""
    text = f"{g.gpu_jobs:,} finished GPU jobs held {amount(g.gpu_hours_held)} GPU-hours."
    if g.recorded_jobs:
        sources = ", ".join(f"{n:,} from {s}" for s, n in g.sources.items())
        text += (
            f" Use was recorded for {g.recorded_jobs:,} of them ({sources}): "
            f"{amount(g.recorded_gpu_hours)} GPU-hours held, {amount(g.used_gpu_hours)} used "
            f"({g.utilisation_pct or 0:.1f}%), {amount(g.wasted_gpu_hours)} wasted, "
            f"{amount(g.idle_gpu_hours)} on GPUs at 0% ({plural(g.idle_jobs, 'job')})."
        )
    note = g.not_recorded_note()
    return text + (f" {note}" if note else "")


def gpu_views(a: Analysis) -> list[View]:
    """The GPU section's tables (none when no job held a GPU)."""
    if a.gpu_use is None:
        return []
    t = a.tables
    wasted = (
        "Wasted: GPU-hours held minus used (held x utilisation per GPU), over jobs whose use "
        "was recorded; recorded GPU-hours are those jobs' held hours."
    )
    large = f"{LARGE_GPU_BYTES / 2**30:.0f} GiB"
    return [
        View(
            "GPU-hours wasted by user",
            t["gpu_waste_by_user"].head(15),
            wasted,
            csv="gpu_waste_by_user",
        ),
        View(
            "GPU-hours wasted by account",
            t["gpu_waste_by_account"].head(15),
            "As above.",
            csv="gpu_waste_by_account",
        ),
        View("GPU-hours wasted by partition", t["gpu_waste_by_partition"], "As above."),
        View(
            "GPU-hours wasted by GPU type",
            t["gpu_waste_by_gpu_type"],
            "As above; the type is AllocTRES gres/gpu:<type>.",
        ),
        View(
            f"Jobs at 0% GPU utilisation, top {TOP_GPU_JOBS}",
            t["gpu_idle_jobs"].head(TOP_GPU_JOBS),
            f"Recorded utilisation at most {IDLE_UTILISATION_PCT:.0f}% per GPU.",
            "No job with recorded GPU use sat at 0%.",
            csv="gpu_idle_jobs",
        ),
        View(
            f"Jobs that used under {100 * SMALL_MEMORY_SHARE:.0f}% of a large GPU's memory, "
            f"top {TOP_GPU_JOBS}",
            t["gpu_small_memory_jobs"].head(TOP_GPU_JOBS),
            f"GPUs of at least {large}; peak GPU memory over the GPUs' memory (sacct gives no "
            "GPU's size: the smallest model of the type that holds the peak is assumed).",
            "No job used under 10% of a large GPU's memory.",
            csv="gpu_small_memory_jobs",
        ),
        View("GPU-hours over the period", t["gpu_trend"], "By submission time."),
    ]


def gpu_html(a: Analysis, csv_links: dict[str, str] | None = None) -> str:
    from html import escape

    return f'<p class="insight">{escape(gpu_headline(a))}</p>\n' + views_html(
        gpu_views(a), csv_links
    )
