"""A whole-cluster what-if (kind ``cluster_whatif``): the Markdown.

Verdict first, then the figures before and after (with the mean wait's 95% CI), what was
replayed on which cluster, how far the unchanged replay is from the record, and the power
model's assumptions. Every number comes from the facts at the precision the verifier accepts;
names from accounting (partitions, users) are shown as literals.
"""

from __future__ import annotations

from wass_chat.agent.safety import MAX_NOTE
from wass_chat.agent.safety import literal as lit
from wass_chat.analytics.insights import amount, human_duration, plural
from wass_chat.answers.energy import kwh
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.markdown import plain
from wass_chat.batch.whatif_answer import WhatIfFacts
from wass_chat.batch.whatif_verdict import ci_words, signed
from wass_chat.slurm.explain.phrases import jobs


def _signed_kwh(change: float) -> str:
    """A change of energy with its sign and the digits that make it non-zero: ``+0.02 kWh``
    beside ``+20.7%`` (``+0 kWh`` there read as no change)."""
    sign = "+" if change >= 0.01 else ""
    return f"{sign}{amount(change)} kWh"


def _row(label: str, before: str, after: str, change: str = "") -> str:
    return f"- {label}: {before} -> {after}" + (f" ({change})" if change else "")


def render_cluster_whatif(f: Facts) -> str:
    """The change's effect on waits, backfill, kills, utilisation and energy; or, when the
    unchanged replay is not the site (no ``difference``), why no effect is given."""
    w = f["window"]
    lines = [f"**{plain(f['verdict'])}**", ""]
    changes = "; ".join(lit(c) for c in f["changes"])
    lines.append(
        f"**Replayed**: {plain(w['words'])}, of which {f['jobs_replayed']:,} ran and are "
        f"replayed on {f['nodes']:,} nodes (cluster: {plain(f['cluster'])}), "
        + (
            f"before and after: {changes}."
            if "difference" in f
            else f"without the change only ({changes} was not replayed: its baseline is not "
            "the site)."
        )
    )
    left = f["left_out"]
    if left["fit_nowhere"]:
        jobs = plural(left["fit_nowhere"], "job")
        lines.append(f"{jobs} fit on no node of the cluster: left out.")
    if left.get("partition_gone"):
        jobs = plural(left["partition_gone"], "job")
        gone = ", ".join(lit(p) for p in left["partitions_gone"])
        lines.append(f"{jobs} of partitions the cluster no longer has ({gone}): left out.")
    lines += _queue_lines(f.get("queue_now"))
    if "difference" not in f:
        return "\n".join(lines + _unmatched_tail(f))
    a, b, d = f["before"], f["after"], f["difference"]
    lines += ["", "**Before -> after:**"]
    pct = f"; {d['wait_mean_pct']:+.1f}%" if d["wait_mean_pct"] is not None else ""
    lines += [
        _row(
            "mean wait",
            human_duration(a["wait_mean_s"]),
            human_duration(b["wait_mean_s"]),
            f"{signed(d['wait_mean_s'])}{pct}; {ci_words(d['wait_mean_ci95_s'])}",
        ),
        _row(
            "median wait",
            human_duration(a["wait_median_s"]),
            human_duration(b["wait_median_s"]),
            signed(d["wait_median_s"]),
        ),
        _row(
            "95th percentile wait",
            human_duration(a["wait_p95_s"]),
            human_duration(b["wait_p95_s"]),
            signed(d["wait_p95_s"]),
        ),
    ]
    part = f.get("partition")
    if part and part["jobs"]:
        lines.append(
            _row(
                f"mean wait in partition {lit(part['name'])} ({part['jobs']:,} jobs)",
                human_duration(part["wait_mean_before_s"]),
                human_duration(part["wait_mean_after_s"]),
            )
        )
    lines += [
        f"- jobs that wait less: {d['jobs_waiting_less']:,}; that wait more: "
        f"{d['jobs_waiting_more']:,}",
        _row("jobs started by backfill", f"{a['backfilled']:,}", f"{b['backfilled']:,}"),
        _row(
            "jobs killed at their limit", f"{a['killed_at_limit']:,}", f"{b['killed_at_limit']:,}"
        ),
        _row("utilisation", f"{a['utilisation_pct']:.1f}%", f"{b['utilisation_pct']:.1f}%"),
        _row(
            "facility energy",
            kwh(a["facility_kwh"]),
            kwh(b["facility_kwh"]),
            _signed_kwh(d["facility_kwh"])
            + (f", {d['facility_pct']:+.1f}%" if d["facility_pct"] is not None else ""),
        ),
    ]
    if b["nodes_off_pct"] or a["nodes_off_pct"]:
        lines.append(
            _row(
                "node time powered off", f"{a['nodes_off_pct']:.1f}%", f"{b['nodes_off_pct']:.1f}%"
            )
        )
    acc = f.get("prediction_accuracy") or {}
    if acc.get("prediction") and acc.get("requested_limit"):
        p, r = acc["prediction"], acc["requested_limit"]
        lines += [
            "",
            f"**Walltime predictions** (each user's last two jobs; {acc['predicted']:,} of "
            f"{acc['jobs']:,} jobs had a history): median error {p['median_abs_error_pct']:.0f}% "
            f"against {r['median_abs_error_pct']:.0f}% for the requested limits; "
            f"{100 * p['under_share']:.0f}% of predictions were too short (such a job is then "
            "expected until its limit).",
        ]
    if weights := f.get("weights"):
        pairs = [f"{k} {weights['before'][k]:,} -> {v:,}" for k, v in weights["after"].items()]
        lines += ["", "**Priority weights** (before -> after): " + ", ".join(pairs) + "."]
    rec = f.get("recorded_check") or {}
    if rec:
        lines += [
            "",
            f"**The unchanged replay against the record**: {rec['within_tolerance_pct']:.1f}% "
            f"of {rec['jobs']:,} starts within {human_duration(rec['tolerance_s'])} of the "
            f"recorded ones; mean wait recorded {human_duration(rec['recorded_wait_mean_s'])}, "
            f"replayed {human_duration(rec['replayed_wait_mean_s'])}.",
        ]
    lines += ["", *_power_model(f["power_model"])]
    if f.get("note"):
        lines += ["", f"_{lit(f['note'], MAX_NOTE)}_"]
    lines += ["", "The same replay: `wass-chat whatif cluster` (docs/cluster-whatif.md)."]
    return "\n".join(lines)


def _not_modelled(q: Facts) -> str:
    """The pending jobs left out because they wait for what the replay does not model."""
    count = q.get("not_modelled", 0)
    if not count:
        return ""
    reasons = list(q.get("not_modelled_reasons", {}).items())
    shown = ", ".join(f"{lit(r)} {n}" for r, n in reasons[:4])
    more = f" and {len(reasons) - 4} more reasons" if len(reasons) > 4 else ""
    return (
        f", {count:,} waiting for what the replay does not model and left out ({shown}{more}: "
        "limits, licences, reservations, a person: the replay cannot say when they start)"
    )


def _queue_lines(q: Facts | None) -> list[str]:
    """The live queue replayed from now: what it holds, before -> after for its pending jobs."""
    if not q:
        return []
    lines = [
        "",
        f"**The queue now** (live): {jobs(q['running'], 'running')}, {q['pending']:,} pending"
        + (f", {q['held']:,} held (not replayed)" if q["held"] else "")
        + _not_modelled(q)
        + (
            f"; drained or down, so not replayed: {', '.join(lit(n) for n in q['closed_nodes'])}"
            if q.get("closed_nodes")
            else ""
        )
        + ".",
    ]
    if "before" not in q:
        return lines
    a, b = q["before"], q["after"]
    lines += [
        _row(
            "pending jobs all started within",
            human_duration(a["last_start_from_now_s"]),
            human_duration(b["last_start_from_now_s"]),
        ),
        _row(
            "mean time until a pending job starts",
            human_duration(a["mean_start_from_now_s"]),
            human_duration(b["mean_start_from_now_s"]),
        ),
        f"- pending jobs that start sooner: {q['starting_sooner']:,}; later: "
        f"{q['starting_later']:,}",
    ]
    if est := q.get("slurm_estimates"):
        lines.append(
            f"- Slurm's own estimate for the {est['jobs']:,} pending jobs it has planned: the "
            f"last starts in {human_duration(est['last_start_from_now_s'])} (the replay without "
            f"the change: {human_duration(est['replayed_last_start_from_now_s'])})"
        )
    lines.append(
        "- run times are the jobs' time limits (their real ends are not known yet), so these "
        "are upper bounds"
        + (f"; {q['no_limit']:,} jobs without a limit are given one" if q["no_limit"] else "")
    )
    return lines


def _unmatched_tail(f: Facts) -> list[str]:
    """An answer without a difference: the unchanged replay against the record (the verdict
    says why no difference is given), and how to get a replay that matches."""
    rec = f.get("recorded_check") or {}
    lines = []
    if rec:
        lines += [
            "",
            f"**The unchanged replay against the record**: {rec['within_tolerance_pct']:.1f}% "
            f"of {rec['jobs']:,} starts within {human_duration(rec['tolerance_s'])} of the "
            "recorded ones.",
        ]
    if f.get("note"):
        lines += ["", f"_{lit(f['note'], MAX_NOTE)}_"]
    lines += [
        "",
        'The same check: `wass-chat whatif cluster` (docs/cluster-whatif.md, "Is the baseline '
        'the site?").',
    ]
    return lines


def _power_model(model: Facts) -> list[str]:
    """The power model the energy figures rest on, per node type."""
    lines = [f"**Power model** (facility = IT x PUE {model['pue']:g}):"]
    for p in model["profiles"]:
        gpus = p["gpus_per_node"]
        lines.append(
            f"- {lit(p['node_type'])} nodes ({p['nodes']:,}): {p['idle_w']:g} W idle, "
            f"+{p['cpu_w']:g} W at full CPU load"
            + (f", +{p['gpu_w']:g} W per busy GPU ({gpus} per node)" if gpus else "")
            + f"; {p['off_w']:g} W off, {p['boot_w']:g} W booting"
            + (" (assumed default)" if p["assumed"] else " (platform file)")
        )
    return lines


KIND = Kind(
    "cluster_whatif",
    "a period replayed before and after a change to the cluster or its scheduler",
    render_cluster_whatif,
    facts=WhatIfFacts,
)
