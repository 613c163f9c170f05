"""Facts for the assistant's whole-cluster what-ifs, from the code of `wass-chat whatif cluster`.

"If we add 8 GPU nodes, how much shorter are waits?", "what does a 24 h cap on the long
partition do?", "how much energy would powering idle nodes down after 30 minutes save?",
"would backfill work better if walltimes were predicted instead of requested?": a
:class:`ChangeRequest` (what the question asked, in the words' own terms: GPU nodes, a
percentage, minutes) is resolved against the cluster into the command's
:class:`~wass_chat.batch.whatif.Changes`, the period is replayed before and after by
:func:`~wass_chat.batch.whatif.compare`, and the figures come back as a JSON-safe dict of kind
``cluster_whatif`` whose ``verdict`` is computed from its own numbers. A question without a
period replays the last :data:`~wass_chat.batch.scenario.DEFAULT_DAYS` days of accounting, at
most :data:`~wass_chat.batch.scenario.DEFAULT_MAX_JOBS` jobs, and says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypedDict

import polars as pl

from sim.batch.config import PriorityWeights, scheduler_preset
from sim.batch.energy import profiles_in_use
from sim.batch.model import BatchCluster
from sim.errors import InputError, UnknownName
from wass_chat.batch.baseline_match import checked_compare
from wass_chat.batch.live_queue import LiveQueue
from wass_chat.batch.queue_drain import queue_drain
from wass_chat.batch.scenario import (
    DEFAULT_DAYS,
    DEFAULT_MAX_JOBS,
    load_scenario,
    replay_window,
)
from wass_chat.batch.whatif import AGE_ONLY_WEIGHTS, Changes, parse_weights
from wass_chat.batch.whatif_verdict import whatif_verdict


class WhatIfFacts(TypedDict, total=False):
    """What the ``cluster_whatif`` tool returns (kind ``cluster_whatif``)."""

    kind: str
    asked: dict[str, Any]
    """The request's fields that differ from no change."""
    changes: list[str]
    """The command's labels of the changes (``+8 nodes in gpu``)."""
    change_words: list[str]
    window: dict[str, Any]
    """start, end (and ``_iso``), jobs, default_days, cap_jobs, asked, capped, words."""
    cluster: str
    nodes: int
    jobs_replayed: int
    left_out: dict[str, int]
    before: dict[str, Any]
    after: dict[str, Any]
    difference: dict[str, Any]
    partition: dict[str, Any] | None
    recorded_check: dict[str, Any]
    baseline_check: dict[str, Any]
    queue_now: dict[str, Any]
    """The jobs running and pending on the live cluster now, the pending ones' starts from
    now before and after the change (only when the replayed cluster is the live one)."""
    """The unchanged replay's mean wait against the record's
    (:func:`~wass_chat.batch.baseline_match.baseline_gap`); when it does not match there is no
    ``after``, ``difference`` or ``partition``: the answer says why instead."""
    power_model: dict[str, Any]
    prediction_accuracy: dict[str, Any]
    weights: dict[str, dict[str, int]]
    """``before`` and ``after``: the priority weights of each replay (when weights are asked)."""
    note: str
    cpu_s: float
    verdict: str


@dataclass(frozen=True)
class ChangeRequest:
    """A what-if as asked (the chat tool's arguments)."""

    add_nodes: int = 0
    remove_nodes: int = 0
    nodes_pct: float | None = None
    """Nodes added (positive) or removed (negative) as a share of each partition's, in %."""
    node_type: str | None = None
    """``gpu`` or ``cpu``: which partition gets the nodes when none is named."""
    partition: str | None = None
    max_time_h: float | None = None
    power_off_after_min: float | None = None
    boot_time_s: int = 300
    predict_walltime: bool = False
    scheduler: str | None = None
    weights: str | None = None

    def is_empty(self) -> bool:
        return not (
            self.add_nodes
            or self.remove_nodes
            or self.nodes_pct
            or self.max_time_h is not None
            or self.power_off_after_min is not None
            or self.predict_walltime
            or self.scheduler
            or self.weights
        )


def node_partition(cluster: BatchCluster, request: ChangeRequest) -> str:
    """The partition nodes are added to or removed from: the one named; else, for GPU (or
    CPU) nodes, the partition of that name, or the one with the most such nodes; else the
    default partition, or the largest."""
    names = cluster.partition_names()
    if request.partition is not None:
        if request.partition not in names:
            raise UnknownName("partition", request.partition, names, "in the replayed cluster")
        return request.partition
    index = cluster.node_index()
    if request.node_type in ("gpu", "cpu"):
        if request.node_type in names:
            return request.node_type
        wanted = request.node_type == "gpu"
        counts = {
            p.name: sum((cluster.nodes[index[n]].gpus > 0) == wanted for n in p.nodes)
            for p in cluster.partitions
        }
        best = max(counts, key=lambda name: (counts[name], -names.index(name)))
        if counts[best]:
            return best
        raise InputError(
            "what-if", [f"the replayed cluster has no {request.node_type.upper()} nodes"]
        )
    default = next((p.name for p in cluster.partitions if p.default), None)
    return default or max(cluster.partitions, key=lambda p: len(p.nodes)).name


def resolve(request: ChangeRequest, cluster: BatchCluster) -> tuple[Changes, str | None]:
    """The command's changes for ``request`` on ``cluster``, and the partition they concern
    (None when they concern the whole cluster). Unknown names and impossible changes raise."""
    add: list[tuple[str, int]] = []
    remove: list[tuple[str, int]] = []
    concerned = None
    if request.add_nodes or request.remove_nodes:
        concerned = node_partition(cluster, request)
        add += [(concerned, request.add_nodes)] if request.add_nodes else []
        remove += [(concerned, request.remove_nodes)] if request.remove_nodes else []
    if request.nodes_pct:
        parts = [p for p in cluster.partitions if request.partition in (None, p.name)]
        if request.partition is not None:
            concerned = node_partition(cluster, request)
        for p in parts:
            count = max(1, round(len(p.nodes) * abs(request.nodes_pct) / 100))
            if request.nodes_pct > 0:
                add.append((p.name, count))
            elif count < len(p.nodes):
                remove.append((p.name, count))
    max_time: tuple[tuple[str, int], ...] = ()
    if request.max_time_h is not None:
        if request.partition is None:
            raise InputError(
                "what-if",
                ["a time limit needs a partition: one of " + ", ".join(cluster.partition_names())],
            )
        concerned = node_partition(cluster, request)
        max_time = ((concerned, round(request.max_time_h * 3600)),)
    if request.scheduler is not None:
        scheduler_preset(request.scheduler)  # an unknown name fails before any replay
    changes = Changes(
        add_nodes=tuple(add),
        remove_nodes=tuple(remove),
        max_time=max_time,
        weights=parse_weights(request.weights),
        scheduler=request.scheduler,
        predict_walltime=request.predict_walltime,
        power_off_after_s=None
        if request.power_off_after_min is None
        else round(request.power_off_after_min * 60),
        boot_s=request.boot_time_s,
    )
    return changes, concerned


def change_words(request: ChangeRequest, changes: Changes, concerned: str | None) -> list[str]:
    """The changes as a sentence says them ("8 more nodes in partition gpu")."""
    words = []
    if request.add_nodes:
        words.append(f"{request.add_nodes:,} more nodes in partition {concerned}")
    if request.remove_nodes:
        words.append(f"{request.remove_nodes:,} fewer nodes in partition {concerned}")
    if request.nodes_pct:
        added = sum(n for _, n in changes.add_nodes) - request.add_nodes
        removed = sum(n for _, n in changes.remove_nodes) - request.remove_nodes
        where = f"partition {request.partition}" if request.partition else "every partition"
        more = "more" if request.nodes_pct > 0 else "fewer"
        words.append(
            f"{abs(request.nodes_pct):g}% {more} nodes in {where} ({added or removed:,} nodes)"
        )
    if request.max_time_h is not None:
        words.append(f"a {request.max_time_h:g} h time limit on partition {concerned}")
    if request.power_off_after_min is not None:
        words.append(
            f"idle nodes powered off after {request.power_off_after_min:g} min (booting in "
            f"{request.boot_time_s:,} s)"
        )
    if request.predict_walltime:
        words.append(
            "walltimes predicted from each user's last jobs instead of the requested limits"
        )
    if request.scheduler:
        words.append(f"the {request.scheduler} scheduler")
    if request.weights == AGE_ONLY_WEIGHTS:
        words.append("priority by age only (age weight 1,000, every other weight 0)")
    elif request.weights:
        words.append(f"priority weights {request.weights}")
    return words


def whatif_facts(
    jobs: pl.DataFrame,
    request: ChangeRequest,
    start: datetime | None = None,
    end: datetime | None = None,
    cluster: str = "auto",
    note: str = "",
    queue: LiveQueue | None = None,
) -> dict[str, Any]:
    """Replay the period (default: the last days of ``jobs``) before and after ``request``;
    with ``queue`` (the live queue, when the cluster is the live one) also the jobs pending
    now, from now (``queue_now``, :func:`~wass_chat.batch.queue_drain.queue_drain`)."""
    if request.is_empty():
        raise InputError(
            "what-if",
            [
                "no change to replay: add or remove nodes, change a partition's time limit, "
                "power idle nodes off, predict walltimes, or change the scheduler or weights"
            ],
        )
    began = time.process_time()
    window = replay_window(jobs, start, end)
    if window is None:
        raise InputError("period", ["no job was submitted in the period asked for"])
    loaded = load_scenario(jobs, None, window.start, window.end, cluster)
    changes, concerned = resolve(request, loaded.scenario.cluster)
    report = checked_compare(loaded, changes, jobs)
    before = report["baseline"]
    facts: WhatIfFacts = {
        "kind": "cluster_whatif",
        "asked": {k: v for k, v in vars(request).items() if v not in (None, 0, False)},
        "changes": report["changes"],
        "change_words": change_words(request, changes, concerned),
        "window": {
            "start": f"{window.start:%Y-%m-%d %H:%M}",
            "end": f"{window.end:%Y-%m-%d %H:%M}",
            "start_iso": window.start.isoformat(),
            "end_iso": window.end.isoformat(),
            "jobs": window.jobs,
            "default_days": DEFAULT_DAYS,
            "cap_jobs": DEFAULT_MAX_JOBS,
            "asked": window.asked,
            "capped": window.capped,
            "words": window.words(DEFAULT_MAX_JOBS),
        },
        "cluster": loaded.source["cluster"],
        "nodes": len(loaded.scenario.cluster.nodes),
        "jobs_replayed": before["jobs"],
        "left_out": {
            "fit_nowhere": loaded.source.get("left_out_fit_nowhere", 0),
            "partition_gone": loaded.source.get("left_out_partition_gone", 0),
            "partitions_gone": loaded.source.get("partitions_gone", []),
            "too_big_after_change": report.get("left_out_unfit_after_change", 0),
        },
        "before": _figures(before),
        "recorded_check": _recorded_check(report.get("baseline_vs_recorded", {})),
        "baseline_check": _baseline_check(report["baseline_check"]),
        "power_model": {
            "pue": loaded.power_model.pue,
            "profiles": profiles_in_use(loaded.scenario.cluster, loaded.power_model),
        },
        "note": note,
    }
    if "variant" in report:
        after, d = report["variant"], report["difference"]
        facts["after"] = _figures(after)
        facts["difference"] = _difference(before, after, d)
        facts["partition"] = _partition(concerned, before, after)
    if queue is not None and str(loaded.source["cluster"]).startswith("live"):
        scenario = loaded.scenario
        facts["queue_now"] = queue_drain(queue, scenario.cluster, scenario.scheduler, changes)
    if "prediction_accuracy" in report:
        facts["prediction_accuracy"] = report["prediction_accuracy"]
    if request.weights:
        before_w = loaded.scenario.scheduler.weights
        asked_w: dict[str, Any] = dict(changes.weights)
        after_w = replace(before_w, **asked_w)
        facts["weights"] = {"before": _weights(before_w), "after": _weights(after_w)}
    facts["cpu_s"] = round(time.process_time() - began, 2)
    facts["verdict"] = whatif_verdict(dict(facts))
    return dict(facts)


def _weights(w: PriorityWeights) -> dict[str, int]:
    return {
        "age": w.age,
        "fairshare": w.fairshare,
        "job_size": w.job_size,
        "partition": w.partition,
        "qos": w.qos,
    }


def _figures(s: dict[str, Any]) -> dict[str, Any]:
    return {
        "wait_mean_s": s["waits"]["mean_s"],
        "wait_median_s": s["waits"]["median_s"],
        "wait_p95_s": s["waits"]["p95_s"],
        "utilisation_pct": round(100 * s["utilisation"], 1),
        "makespan_s": s["makespan_s"],
        "facility_kwh": s["energy"]["facility_kwh"],
        "it_kwh": s["energy"]["it_kwh"],
        "backfilled": s["backfilled"],
        "killed_at_limit": s["killed_at_limit"],
        "nodes_off_pct": round(100 * s["nodes_off_share"], 1),
    }


def _difference(a: dict[str, Any], b: dict[str, Any], d: dict[str, Any]) -> dict[str, Any]:
    mean_a = a["waits"]["mean_s"]
    energy_a = a["energy"]["facility_kwh"]
    return {
        "wait_mean_s": d["wait_mean_s"],
        "wait_mean_ci95_s": d["wait_mean_ci95_s"],
        "ci_level_pct": 95,
        "tail_percentile": 95,
        "wait_mean_pct": round(100 * d["wait_mean_s"] / mean_a, 1) if mean_a > 0 else None,
        "wait_median_s": d["wait_median_s"],
        "wait_p95_s": d["wait_p95_s"],
        "utilisation_pts": round(100 * d["utilisation"], 1),
        "facility_kwh": d["energy_facility_kwh"],
        "facility_pct": round(100 * d["energy_facility_kwh"] / energy_a, 1) if energy_a else None,
        "backfilled": b["backfilled"] - a["backfilled"],
        "killed_at_limit": b["killed_at_limit"] - a["killed_at_limit"],
        "jobs_waiting_less": d["jobs_waiting_less"],
        "jobs_waiting_more": d["jobs_waiting_more"],
    }


def _partition(name: str | None, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | None:
    if name is None or name not in a["waits_by_partition"]:
        return None
    return {
        "name": name,
        "jobs": a["waits_by_partition"][name]["jobs"],
        "wait_mean_before_s": a["waits_by_partition"][name]["mean_s"],
        "wait_mean_after_s": b["waits_by_partition"].get(name, {}).get("mean_s", 0.0),
    }


def _baseline_check(check: dict[str, Any]) -> dict[str, Any]:
    """The check as the answer states it (seconds, a ratio to one decimal)."""
    out = dict(check)
    if check.get("ratio") is not None:
        out["ratio"] = round(check["ratio"], 1)
    return out


def _recorded_check(rec: dict[str, Any]) -> dict[str, Any]:
    """How far the unchanged replay is from what the cluster really did."""
    if not rec.get("jobs"):
        return {}
    return {
        "jobs": rec["jobs"],
        "within_tolerance_pct": round(100 * rec["within_tolerance"], 1),
        "tolerance_s": rec["tolerance_s"],
        "recorded_wait_mean_s": rec["recorded_wait_mean_s"],
        "replayed_wait_mean_s": rec["simulated_wait_mean_s"],
    }
