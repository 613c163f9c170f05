"""The energy and what-if sections as the page and the Markdown report show them: a sentence
of totals, titled tables through the columns table, the power model's assumptions as a list,
or one line saying why a section has no figures."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import polars as pl

from wass_chat.analytics.insights import amount, plural
from wass_chat.batch.period_energy import PeriodEnergy, assumptions
from wass_chat.report.energy_whatifs import ClusterSection
from wass_chat.report.views import View, views_html

TOP_ENERGY_USERS = 10


def energy_totals(e: PeriodEnergy) -> str:
    """The period's energy in one sentence."""
    share = 100 * e.jobs_kwh / e.it_kwh if e.it_kwh else 0.0
    return (
        f"From {e.start:%Y-%m-%d %H:%M} to {e.end:%Y-%m-%d %H:%M}"
        + (" (the part of the period the accounting records)" if e.clamped else "")
        + f": {amount(e.it_kwh)} kWh of IT "
        f"energy on {plural(e.nodes, 'node')}, {amount(e.facility_kwh)} kWh at the facility (PUE "
        f"{e.pue:g}). The {e.jobs:,} jobs that ran drew {amount(e.jobs_kwh)} kWh of it "
        f"({share:.1f}%); the rest, {amount(e.idle_kwh)} kWh, is idle power no job held."
    )


def energy_views(e: PeriodEnergy) -> list[View]:
    """By partition, the top users (every user in the CSV), and over time."""
    step = "day" if len(e.over_time) < 2 else _step(e.over_time["from"])
    over_time = e.over_time.with_columns(
        pl.col("from").dt.strftime("%Y-%m-%d %H:%M" if step == "hour" else "%Y-%m-%d")
    )
    return [
        View(
            "Jobs' energy by partition",
            e.by_partition,
            "IT energy of the jobs that ran in the period (the part of their run inside it); "
            "share of all jobs' energy.",
        ),
        View(
            f"Jobs' energy, top {min(TOP_ENERGY_USERS, e.by_user.height)} of "
            f"{e.by_user.height:,} users",
            e.by_user.head(TOP_ENERGY_USERS),
            "As above, per user, most energy first.",
            csv="energy_by_user",
        ),
        View(
            f"Energy per {step}",
            over_time,
            "IT energy (idle power included), at the facility, and the jobs' part of it.",
        ),
    ]


def _step(starts: pl.Series) -> str:
    seconds = (starts[1] - starts[0]).total_seconds()
    return "hour" if seconds <= 3600 else "day" if seconds <= 86400 else "week"


WHATIF_NOTE = (
    "Each what-if replays the same jobs on a simulated copy of the cluster (EASY backfill, the "
    "nodes the jobs ran on) and is read against the same replay without the change; the CI is "
    "a paired bootstrap over jobs. The first four are the same for every site; the others are "
    "chosen from the period (the partition with the longest time limits, the weights, where "
    "jobs waited longest). A capped limit kills the jobs that ran longer at the cap, so their "
    "CPU-hours drop. Energy figures rest on the power model of the energy section."
)


def whatif_views(section: ClusterSection) -> list[View]:
    assert section.whatifs is not None
    return [View("What-ifs, before and after", section.whatifs, WHATIF_NOTE)]


def energy_html(section: ClusterSection, csv_links: dict[str, str] | None = None) -> str:
    if section.energy is None:
        return f'<p class="absent">{escape(section.absent)}</p>'
    e = section.energy
    parts = [f'<p class="totals">{escape(energy_totals(e))}</p>']
    parts += [f'<p class="note">{escape(n)}</p>' for n in section.notes]
    parts.append(views_html(energy_views(e), csv_links))
    items = "".join(f"<li>{escape(a)}</li>" for a in assumptions(e))
    parts.append(f'<h3>Power model and assumptions</h3><ul class="assumptions">{items}</ul>')
    return "\n".join(parts)


def whatifs_html(section: ClusterSection) -> str:
    absent = section.absent or section.whatif_absent
    if absent:
        return f'<p class="absent">{escape(absent)}</p>'
    parts = [f'<p class="window">Replayed: {escape(section.window)}.</p>']
    parts.append(views_html(whatif_views(section)))
    parts += [f'<p class="note">{escape(line)}</p>' for line in section.whatif_lines]
    if section.baseline_check:
        parts.append(f'<p class="note">{escape(section.baseline_check)}</p>')
    return "\n".join(parts)


Frame = Callable[[pl.DataFrame], list[str]]


def energy_markdown(
    section: ClusterSection, frame: Frame, csv_links: dict[str, str] | None = None
) -> list[str]:
    if section.energy is None:
        return [section.absent, ""]
    e = section.energy
    out = [energy_totals(e), ""] + [line for n in section.notes for line in (n, "")]
    for view in energy_views(e):
        out += [f"### {view.title}", "", view.note, "", *frame(view.table)]
        link = (csv_links or {}).get(view.csv or "")
        out += [f"[Every row as CSV]({link}).", ""] if link else []
    out += ["### Power model and assumptions", ""]
    return out + [f"- {a}" for a in assumptions(e)] + [""]


def whatifs_markdown(section: ClusterSection, frame: Frame) -> list[str]:
    absent = section.absent or section.whatif_absent
    if absent:
        return [absent, ""]
    out = [f"Replayed: {section.window}.", ""]
    for view in whatif_views(section):
        out += [f"### {view.title}", "", view.note, "", *frame(view.table)]
    out += [line for left in section.whatif_lines for line in (left, "")]
    return out + ([section.baseline_check, ""] if section.baseline_check else [])
