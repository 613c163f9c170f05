"""Facts for the assistant's energy questions ("how much energy did the gpu partition use last
month?"), from the code of the audit report's energy view
(:func:`~wass_chat.batch.period_energy.period_energy`): a JSON-safe dict of kind ``energy``
whose ``verdict`` is computed from its own numbers and which carries the power model's
assumptions, because every figure is modelled, not metered."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

import polars as pl

from sim.errors import InputError, UnknownName
from wass_chat.analytics.insights import amount
from wass_chat.batch.period_energy import assumptions, period_energy, recorded_span
from wass_chat.batch.scenario import cluster_for

TOP_USERS = 10


class EnergyFacts(TypedDict):
    """What the ``energy_usage`` tool returns (kind ``energy``)."""

    kind: str
    period: str
    start: str
    end: str
    start_iso: str
    end_iso: str
    within_records: bool
    """The period asked for reached beyond the records: it was cut to them."""
    jobs: int
    nodes: int
    cluster: str
    it_kwh: float
    facility_kwh: float
    jobs_kwh: float
    idle_kwh: float
    idle_pct: float
    pue: float
    by_partition: list[dict[str, Any]]
    top_users: list[dict[str, Any]]
    users: int
    asked: dict[str, Any] | None
    """The partition or user asked about: its jobs' energy and share."""
    assumptions: list[str]
    profiles: list[dict[str, Any]]
    note: str
    verdict: str


def energy_facts(
    jobs: pl.DataFrame,
    start: datetime | None,
    end: datetime | None,
    period_words: str,
    partition: str | None = None,
    user: str | None = None,
    cluster: str = "auto",
    note: str = "",
) -> dict[str, Any]:
    """The energy of ``[start, end)`` within what the cache recorded (from its first
    submission to the last moment a job ran: idle hours outside it are not known; see
    :func:`~wass_chat.batch.period_energy.recorded_span`)."""
    span = recorded_span(jobs)
    if span is None:
        raise InputError("period", ["the accounting cache is empty: import sacct data first"])
    batch_cluster, _config, model, label = cluster_for(cluster, jobs)
    energy = period_energy(jobs, start, end, batch_cluster, model, label)
    if not energy.jobs:
        raise InputError(
            "period",
            [
                f"no job ran in {period_words}; the cache holds jobs from "
                f"{span[0]:%Y-%m-%d %H:%M} to {span[1]:%Y-%m-%d %H:%M}"
            ],
        )
    start, end = energy.start, energy.end
    by_partition = energy.by_partition.to_dicts()
    by_user = energy.by_user.to_dicts()
    facts: EnergyFacts = {
        "kind": "energy",
        "period": period_words,
        "start": f"{start:%Y-%m-%d %H:%M}",
        "end": f"{end:%Y-%m-%d %H:%M}",
        "start_iso": start.isoformat(),
        "end_iso": end.isoformat(),
        "within_records": energy.clamped,
        "jobs": energy.jobs,
        "nodes": energy.nodes,
        "cluster": label,
        "it_kwh": energy.it_kwh,
        "facility_kwh": energy.facility_kwh,
        "jobs_kwh": energy.jobs_kwh,
        "idle_kwh": energy.idle_kwh,
        "idle_pct": round(100 * energy.idle_kwh / energy.it_kwh, 1) if energy.it_kwh else 0.0,
        "pue": energy.pue,
        "by_partition": by_partition,
        "top_users": by_user[:TOP_USERS],
        "users": len(by_user),
        "asked": _asked(by_partition, by_user, partition, user, energy.pue),
        "assumptions": assumptions(energy),
        "profiles": energy.profiles,
        "note": note,
        "verdict": "",
    }
    facts["verdict"] = energy_verdict(dict(facts))
    return dict(facts)


def _asked(
    by_partition: list[dict[str, Any]],
    by_user: list[dict[str, Any]],
    partition: str | None,
    user: str | None,
    pue: float,
) -> dict[str, Any] | None:
    """The row of the partition or user asked about (refused with the nearest if unknown)."""
    for what, name, rows in (("partition", partition, by_partition), ("user", user, by_user)):
        if name is None:
            continue
        row = next((r for r in rows if r[what] == name), None)
        if row is None:
            raise UnknownName(what, name, [r[what] for r in rows], "among the jobs of the period")
        return {
            "what": what,
            "name": name,
            "jobs": row["jobs"],
            "energy_kwh": row["energy_kwh"],
            "facility_kwh": row["energy_kwh"] * pue,
            "share_pct": round(row["share_pct"], 1),
        }
    return None


def energy_verdict(f: dict[str, Any]) -> str:
    """The asked partition's or user's jobs' energy and share, else the cluster's total and
    where it went; always said to be modelled."""
    span = f"from {f['start']} to {f['end']}" + (
        " (the part of the period the accounting records)" if f["within_records"] else ""
    )
    asked = f.get("asked")
    if asked:
        who = f"partition {asked['name']}" if asked["what"] == "partition" else asked["name"]
        words = (
            f"The {asked['jobs']:,} jobs of {who} drew {amount(asked['energy_kwh'])} kWh of IT "
            f"energy {span}, {asked['share_pct']:.1f}% of the {amount(f['jobs_kwh'])} kWh all "
            f"jobs drew ({amount(asked['facility_kwh'])} kWh at the facility with a PUE of "
            f"{f['pue']:g})."
        )
    else:
        top = f["by_partition"][0]
        words = (
            f"The cluster ({f['nodes']:,} nodes) drew {amount(f['it_kwh'])} kWh of IT energy "
            f"{span} ({amount(f['facility_kwh'])} kWh at the facility with a PUE of "
            f"{f['pue']:g}); its {f['jobs']:,} jobs drew {amount(f['jobs_kwh'])} kWh of it, "
            f"the most in partition {top['partition']} ({top['share_pct']:.1f}%), and idle "
            f"power the other {f['idle_pct']:.1f}%."
        )
    return words + " Modelled from the recorded schedule with an assumed power model, not metered."
