"""Which what-ifs the audit report replays: four fixed ones, and three chosen from the period.

The fixed four (:data:`FIXED_WHATIFS`) ask the same of every site: idle nodes powered off,
walltimes predicted, the cluster a size up and down. The other three answer the rest of the
issue's questions (a partition's time limit, the priority weights, nodes added where they are
needed) with a change the period's own jobs make meaningful (:func:`site_whatifs`):

* **a time limit**: the partition whose jobs asked for the longest limit, capped at
  :data:`CAP_H` hours, or at half its longest limit when that is no longer;
* **priority weights**: with no weights configured (the replay's cluster is read from the
  jobs, so it orders the queue by submission), fair share and age as many sites weigh them;
  with weights, age alone (FIFO-like);
* **nodes where the waits are**: 10% more nodes (at least one) in the partition whose jobs
  waited longest in the unchanged replay.

A what-if the period cannot make meaningful is left out with the reason, one line each: no job
with a time limit, a single user (fair share orders nothing), no job that waited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from wass_chat.analytics.insights import human_duration
from wass_chat.batch.whatif import AGE_ONLY_WEIGHTS, Scenario
from wass_chat.batch.whatif_answer import ChangeRequest

FIXED_WHATIFS: tuple[tuple[str, ChangeRequest], ...] = (
    ("Idle nodes powered off after 30 min (boot 5 min)", ChangeRequest(power_off_after_min=30)),
    ("Walltimes predicted from each user's last jobs", ChangeRequest(predict_walltime=True)),
    ("10% more nodes in every partition", ChangeRequest(nodes_pct=10)),
    ("10% fewer nodes in every partition", ChangeRequest(nodes_pct=-10)),
)
"""Power saving, predictions, and the cluster a size up and down: the same for every site."""
CAP_H = 24.0
"""The time limit the report tries on the partition with the longest one."""
FAIR_SHARE_WEIGHTS = "fairshare=10000,age=1000"
"""Fair share first, age second: the order of magnitude many sites configure."""
NODES_PCT = 10.0


@dataclass(frozen=True)
class SiteWhatIfs:
    """The what-ifs chosen from the period, and why the others were left out."""

    chosen: tuple[tuple[str, ChangeRequest], ...]
    left_out: tuple[str, ...]
    """One sentence per what-if left out, with its reason."""


def site_whatifs(scenario: Scenario, baseline: dict[str, Any]) -> SiteWhatIfs:
    """The time-limit, weights and nodes what-ifs for ``scenario``, whose unchanged replay's
    figures are ``baseline`` (:func:`~sim.batch.metrics.summarise`)."""
    chosen: list[tuple[str, ChangeRequest]] = []
    left_out: list[str] = []
    for choose in (_time_limit, _weights, _nodes_where_waits_are):
        picked = choose(scenario, baseline)
        if isinstance(picked, str):
            left_out.append(picked)
        else:
            chosen.append(picked)
    return SiteWhatIfs(tuple(chosen), tuple(left_out))


def _time_limit(scenario: Scenario, _: dict[str, Any]) -> tuple[str, ChangeRequest] | str:
    """The partition whose jobs asked for the longest limit (no limit counts as longest)."""
    w = scenario.workload
    longest: dict[str, float] = {}
    for p, name in enumerate(w.partitions):
        limits = w.limit_s[w.partition == p]
        if len(limits):
            longest[name] = float("inf") if (limits < 0).any() else float(limits.max()) / 3600
    longest = {name: hours for name, hours in longest.items() if hours > 0}
    if not longest:
        return "Left out: a partition's time limit capped (no replayed job recorded a time limit)."
    name = max(longest, key=lambda n: (longest[n], n))
    hours = longest[name]
    cap = CAP_H if hours > CAP_H else round(hours / 2, 2)
    asked = (
        "some of its jobs asked for no limit"
        if hours == float("inf")
        else f"its jobs asked for up to {hours:g} h"
    )
    label = f"Partition {name}'s time limit capped at {cap:g} h ({asked})"
    return label, ChangeRequest(partition=name, max_time_h=cap)


def _weights(scenario: Scenario, _: dict[str, Any]) -> tuple[str, ChangeRequest] | str:
    """Fair share and age when no weight is set (submission order), else age alone."""
    if len(np.unique(scenario.workload.user)) < 2:
        return "Left out: other priority weights (one user only: fair share orders nothing)."
    w = scenario.scheduler.weights
    if not any((w.age, w.fairshare, w.job_size, w.partition, w.qos, w.estimate)):
        return (
            "Priority by fair share and age (weights fairshare 10000, age 1000) instead of "
            "submission order",
            ChangeRequest(weights=FAIR_SHARE_WEIGHTS),
        )
    return (
        "Priority by age only (FIFO-like) instead of the configured weights",
        ChangeRequest(weights=AGE_ONLY_WEIGHTS),
    )


def _nodes_where_waits_are(
    scenario: Scenario, baseline: dict[str, Any]
) -> tuple[str, ChangeRequest] | str:
    """10% more nodes (at least one) in the partition with the longest mean wait."""
    waits = {n: s["mean_s"] for n, s in baseline["waits_by_partition"].items() if s["jobs"]}
    names = set(scenario.cluster.partition_names())
    waits = {n: mean for n, mean in waits.items() if n in names}
    if not waits or max(waits.values()) <= 0:
        return (
            "Left out: more nodes where jobs wait longest (no job waited in the replay "
            "without a change)."
        )
    name = max(waits, key=lambda n: (waits[n], n))
    part = scenario.cluster.partitions[scenario.cluster.partition_names().index(name)]
    count = max(1, round(len(part.nodes) * NODES_PCT / 100))
    label = (
        f"{count:,} more node{'s' if count > 1 else ''} in partition {name} "
        f"(its jobs waited longest: {human_duration(waits[name])} on average)"
    )
    return label, ChangeRequest(add_nodes=count, partition=name)
