"""A workload's needs resolved against one cluster: partition rows, effective limits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.batch.model import BatchCluster, Workload, WorkloadError
from sim.errors import raise_if

NO_LIMIT_S = 10 * 365 * 86400
"""What the scheduler assumes for a job with no time limit at all."""


@dataclass(frozen=True)
class Requests:
    """A workload's per-job needs resolved against a cluster (partition rows, capped limits)."""

    partition: np.ndarray
    run_s: np.ndarray
    limit_s: np.ndarray
    estimate_s: np.ndarray
    killed: np.ndarray


def resolve(cluster: BatchCluster, w: Workload, kill_grace_s: int = 0) -> Requests:
    """Map partitions by name and cap each limit by its partition's MaxTime; a job running
    past its limit by more than ``kill_grace_s`` is killed then."""
    names = cluster.partition_names()
    missing = sorted(set(w.partitions) - set(names))
    used = set(np.unique(w.partition).tolist()) if len(w) else set()
    missing = [p for p in missing if w.partitions.index(p) in used]
    raise_if([f"partition {p} is not in the cluster" for p in missing], WorkloadError, "workload")
    to_cluster = np.array([names.index(p) if p in names else -1 for p in w.partitions], np.int64)
    part = to_cluster[w.partition] if len(w) else np.zeros(0, np.int64)
    max_time = np.array([p.max_time_s for p in cluster.partitions], np.int64)[part]
    limit = np.where(
        w.limit_s < 0, max_time, np.where(max_time < 0, w.limit_s, np.minimum(w.limit_s, max_time))
    )
    killed = (limit >= 0) & (w.runtime_s > limit + kill_grace_s)
    run = np.where(killed, limit + kill_grace_s, w.runtime_s)
    horizon = np.where(limit < 0, NO_LIMIT_S, limit)
    estimate = np.where(w.estimate_s > 0, np.minimum(w.estimate_s, horizon), horizon)
    return Requests(part, run, limit, np.maximum(estimate, 1), killed)
