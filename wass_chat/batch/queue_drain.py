"""What a change does to the queue as it stands now: the jobs pending on the live cluster.

A replay of the past (:mod:`wass_chat.batch.whatif`) answers "what would the last two weeks
have looked like with 2 more nodes?"; a site asking with 11 jobs waiting also means "how would
the queue drain now?". :func:`queue_drain` replays the live queue
(:mod:`wass_chat.batch.live_queue`: the running jobs to their time limits, the pending ones from
now) on the live cluster under its scheduler, before and after the same changes, and gives for
the pending jobs how long until each starts (the mean, and the last start: when the queue has
drained) and how many start sooner or later; and how many running jobs the replay could not
place at their real start (``running_not_at_their_start``: 0 when it holds the cluster as it
is now). Run times are the time limits, as Slurm's own
start estimates assume, so both are upper bounds; Slurm's estimate (``StartTime`` of a pending
job the backfill pass has planned) is given beside the replay's where it has one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np

from sim.batch.config import SchedulerConfig
from sim.batch.engine import simulate_batch, unfit_jobs
from sim.batch.model import BatchCluster
from wass_chat.batch.live_queue import LiveQueue
from wass_chat.batch.whatif import Changes, Scenario, apply_changes


def queue_drain(
    queue: LiveQueue, cluster: BatchCluster, scheduler: SchedulerConfig, changes: Changes
) -> dict[str, Any]:
    """The pending jobs' starts from now, replayed before and after ``changes`` (JSON-ready)."""
    cluster = _without(cluster, queue.closed_nodes)
    qw = queue.workload(cluster)
    out: dict[str, Any] = {
        "closed_nodes": list(queue.closed_nodes),
        "running": len(qw.running_rows),
        "pending": len(qw.pending_rows),
        "held": len(queue.held),
        "not_modelled": len(queue.not_modelled),
        "not_modelled_reasons": dict(Counter(r for _, r in queue.not_modelled).most_common()),
        "no_limit": qw.no_limit,
        "requests_cut_to_fit": qw.clipped,
    }
    if not len(qw.pending_rows):
        return out
    w = qw.workload
    lost = unfit_jobs(cluster, w)
    keep = np.setdiff1d(np.arange(len(w)), lost)
    out["fit_nowhere"] = len(lost)
    base = Scenario(cluster, w.take(keep), scheduler)
    variant, _ = apply_changes(base, changes)
    later = unfit_jobs(variant.cluster, variant.workload)
    if len(later):  # the changed cluster cannot host them: both replays go without them
        kept = np.setdiff1d(np.arange(len(keep)), later)
        keep = keep[kept]
        base = Scenario(cluster, base.workload.take(kept), scheduler)
        variant = Scenario(variant.cluster, variant.workload.take(kept), variant.scheduler)
        out["too_big_after_change"] = len(later)
    pending = np.isin(keep, qw.pending_rows)
    before_all = simulate_batch(base.cluster, base.workload, base.scheduler).start_s
    after_all = simulate_batch(variant.cluster, variant.workload, variant.scheduler).start_s
    running = base.workload.recorded_start_s >= 0
    out["running_not_at_their_start"] = int(
        (before_all[running] != base.workload.recorded_start_s[running]).sum()
    )
    before, after = before_all[pending], after_all[pending]
    ids = [w.job_ids[i] for i in keep[pending]]
    out["replayed_pending"] = len(ids)
    out["before"] = _from_now(before, qw.now_s)
    out["after"] = _from_now(after, qw.now_s)
    out["starting_sooner"] = int((after < before).sum())
    out["starting_later"] = int((after > before).sum())
    estimates = {j.job_id: j.expected_start_s for j in queue.pending if j.expected_start_s}
    planned = [i for i, job_id in enumerate(ids) if job_id in estimates]
    if planned:
        slurm = np.asarray([estimates[ids[i]] for i in planned], np.int64)
        out["slurm_estimates"] = {
            "jobs": len(planned),
            "last_start_from_now_s": int(max(slurm.max() - qw.now_s, 0)),
            "replayed_last_start_from_now_s": int(max(before[planned].max() - qw.now_s, 0)),
        }
    return out


def _from_now(starts: np.ndarray, now_s: int) -> dict[str, Any]:
    wait = np.maximum(starts - now_s, 0).astype(np.float64)
    return {
        "mean_start_from_now_s": float(wait.mean()),
        "last_start_from_now_s": float(wait.max()),
        "starting_now": int((wait == 0).sum()),
    }


def _without(cluster: BatchCluster, names: tuple[str, ...]) -> BatchCluster:
    """``cluster`` less the nodes ``names`` (drained or down: Slurm starts nothing there)."""
    if not names:
        return cluster
    gone = set(names)
    return BatchCluster(
        tuple(n for n in cluster.nodes if n.name not in gone),
        tuple(
            replace(p, nodes=tuple(x for x in p.nodes if x not in gone)) for p in cluster.partitions
        ),
    )
