"""The sentence a whole-cluster what-if answer starts with, computed from its own facts.

:func:`whatif_verdict` reads the facts :func:`~wass_chat.batch.whatif_answer.whatif_facts`
builds (kind ``cluster_whatif``): what the change does to the mean wait and whether its
confidence interval excludes no change, to energy, and to what the change is about (kills at a
new limit, backfill with predictions, the partition concerned, the weights the replay had
without the change). Every number it states is one of the facts.
"""

from __future__ import annotations

from typing import Any

from wass_chat.analytics.insights import amount, human_duration
from wass_chat.batch.baseline_match import unmatched_words


def signed(seconds: float) -> str:
    """A duration with its sign: ``+3.5 min``, ``-2.1 h``."""
    return ("+" if seconds >= 0 else "-") + human_duration(abs(seconds))


def ci_words(ci: list[float]) -> str:
    return f"95% CI {signed(ci[0])} to {signed(ci[1])}"


def whatif_verdict(f: dict[str, Any]) -> str:
    """One or two sentences from the facts: what the change does to the mean wait (and
    whether its confidence interval excludes no change), to energy when power saving is asked
    or energy moves, and to what the change is about (kills at a new limit, backfill with
    predictions, the partition concerned)."""
    change = ", ".join(f["change_words"])
    if "difference" not in f:  # the unchanged replay is not the site: no difference to state
        why = " ".join(unmatched_words(f["baseline_check"], []))
        return (
            queue_words(f.get("queue_now"), change)
            + f"With {change}, over {f['window']['words']}, the replay cannot tell: "
            + why[0].lower()
            + why[1:]
        )
    a, b, d = f["before"], f["after"], f["difference"]
    low, high = d["wait_mean_ci95_s"]
    moves = low > 0 or high < 0
    unchanged = not d["jobs_waiting_less"] and not d["jobs_waiting_more"]
    waits = (
        f"no job's wait would change (the mean stays {human_duration(a['wait_mean_s'])})"
        if unchanged
        else f"the mean wait would go from {human_duration(a['wait_mean_s'])} to "
        f"{human_duration(b['wait_mean_s'])} ({signed(d['wait_mean_s'])}, {ci_words([low, high])})"
        if moves
        else f"the mean wait would not change beyond chance: {human_duration(a['wait_mean_s'])} "
        f"against {human_duration(b['wait_mean_s'])} ({ci_words([low, high])}, which "
        "includes no change)"
    )
    saved = -d["facility_kwh"]
    share = (
        f" ({abs(d['facility_pct']):.1f}% of {amount(a['facility_kwh'])} kWh)"
        if d["facility_pct"] is not None
        else ""
    )
    verb = "save" if saved >= 0 else "cost"
    energy = f"{verb} {amount(abs(saved))} kWh at the facility{share}"
    if 0 < abs(saved) < 0.01 and d["facility_pct"] is not None:  # "< 0.01 kWh" states no fact
        energy = f"{verb} {abs(d['facility_pct']):.1f}% of the {amount(a['facility_kwh'])} kWh"
        energy += " at the facility"
    words = queue_words(f.get("queue_now"), change)
    if f["asked"].get("power_off_after_min") is not None:  # the question is about energy
        words += f"With {change}, over {f['window']['words']}, it would {energy}, and {waits}."
    else:
        words += f"With {change}, over {f['window']['words']}, {waits}."
        if d["facility_pct"]:
            words += f" It would {energy}."
    part = f.get("partition")
    if part and part["jobs"]:
        words += (
            f" In partition {part['name']} ({part['jobs']:,} jobs) the mean wait goes from "
            f"{human_duration(part['wait_mean_before_s'])} to "
            f"{human_duration(part['wait_mean_after_s'])}."
        )
    if f["asked"].get("max_time_h") is not None:
        words += (
            f" {b['killed_at_limit']:,} jobs would be killed at their time limit, against "
            f"{a['killed_at_limit']:,} in the replay without the change."
        )
    if f["asked"].get("predict_walltime"):
        words += (
            f" Backfill would start {b['backfilled']:,} jobs, against {a['backfilled']:,} "
            "with the requested limits."
        )
        acc = f.get("prediction_accuracy") or {}
        predicted, requested = acc.get("prediction") or {}, acc.get("requested_limit") or {}
        if predicted and requested:
            words += (
                f" The predictions' median error is {predicted['median_abs_error_pct']:.0f}%, "
                f"against {requested['median_abs_error_pct']:.0f}% for the requested limits."
            )
    if weights := f.get("weights"):
        words += _weights_words(weights["before"], f["cluster"])
    left = f["left_out"]["too_big_after_change"]
    if left:
        words += f" {left:,} jobs too big for the changed cluster are left out of both replays."
    return words


def queue_words(q: dict[str, Any] | None, change: str) -> str:
    """The queue now, first: how the jobs pending on the live cluster would drain with the
    change (a sentence ending with a space), or '' when there is no live queue to replay."""
    if not q or "before" not in q:
        if q is not None and q["pending"] == 0:
            return f"No job is pending now ({q['running']:,} running). "
        return ""
    a, b = q["before"], q["after"]
    n = q["replayed_pending"]
    who = f"the {n:,} jobs pending now" if n != 1 else "the job pending now"
    if n != q["pending"]:  # some fit no node, or wait on what the replay does not model
        who = f"the {n:,} of the {q['pending']:,} pending jobs it can replay"
    if q["starting_sooner"] == 0 and q["starting_later"] == 0:
        last = "it starts" if n == 1 else "the last"
        return (
            f"{who[0].upper()}{who[1:]} would start as {'it' if n == 1 else 'they'} will "
            f"without it ({last} in {human_duration(a['last_start_from_now_s'])}, by our "
            "replay of the queue to the jobs' time limits). "
        )
    last_before = human_duration(a["last_start_from_now_s"])
    last_after = human_duration(b["last_start_from_now_s"])
    drained = (
        f"would still all have started within {last_after}"
        if last_after == last_before
        else f"would all have started within {last_after} instead of {last_before}"
    )
    return (
        f"With {change}, {who} {drained} (on average in "
        f"{human_duration(b['mean_start_from_now_s'])} instead of "
        f"{human_duration(a['mean_start_from_now_s'])}; {q['starting_sooner']:,} sooner, "
        f"{q['starting_later']:,} later), by our replay of the queue to the jobs' time limits. "
    )


WEIGHT_WORDS = {
    "age": "age",
    "fairshare": "fair share",
    "job_size": "job size",
    "partition": "partition",
    "qos": "QOS",
}


def _weights_words(before: dict[str, int], cluster: str) -> str:
    """What the replay without the change orders the queue by: a what-if on weights means
    little without it (with every weight 0 it is submission order)."""
    if not any(before.values()):
        why = "" if cluster.startswith("live") else ", as Slurm's configuration was not read"
        return (
            " Without the change the replay orders the queue by submission: every priority "
            f"weight is 0{why}."
        )
    listed = ", ".join(f"{WEIGHT_WORDS[k]} {v:,}" for k, v in before.items())
    return f" Without the change the replay uses the configured weights: {listed}."
