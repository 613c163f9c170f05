"""A recorded period's energy (kind ``energy``): the Markdown."""

from __future__ import annotations

from wass_chat.agent.safety import MAX_NOTE
from wass_chat.agent.safety import literal as lit
from wass_chat.analytics.insights import amount
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.markdown import plain
from wass_chat.batch.energy_answer import EnergyFacts
from wass_chat.slurm.explain.phrases import jobs


def kwh(value: float) -> str:
    return f"{amount(value)} kWh"


def render_energy(f: Facts) -> str:
    """The period's energy: the verdict, totals, by partition, top users, the assumptions."""
    lines = [f"**{plain(f['verdict'])}**", ""]
    lines.append(
        f"**Energy {plain(f['period'])}** ({f['start']} to {f['end']}; {f['jobs']:,} jobs on "
        f"{f['nodes']:,} nodes, cluster {plain(f['cluster'])}):"
    )
    lines += [
        f"- IT energy: {kwh(f['it_kwh'])}; at the facility: {kwh(f['facility_kwh'])}",
        f"- jobs: {kwh(f['jobs_kwh'])}; idle power no job held: {kwh(f['idle_kwh'])} "
        f"({f['idle_pct']:.1f}%)",
        "",
        "**Jobs' energy by partition:**",
    ]
    lines += [
        f"- {lit(r['partition'])}: {kwh(r['energy_kwh'])} ({r['share_pct']:.1f}%), "
        f"{jobs(r['jobs'])}"
        for r in f["by_partition"]
    ]
    lines += ["", f"**Top users** ({len(f['top_users'])} of {f['users']:,}):"]
    lines += [
        f"- {lit(r['user'])}: {kwh(r['energy_kwh'])} ({r['share_pct']:.1f}%), {jobs(r['jobs'])}"
        for r in f["top_users"]
    ]
    lines += ["", "**How it is computed** (assumptions):"]
    lines += [f"- {plain(a)}" for a in f["assumptions"]]
    if f.get("note"):
        lines += ["", f"_{lit(f['note'], MAX_NOTE)}_"]
    return "\n".join(lines)


KIND = Kind(
    "energy",
    "a period's energy: totals, by partition, top users, the power model",
    render_energy,
    facts=EnergyFacts,
)
