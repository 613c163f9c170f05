"""What a replay is judged by: waits, utilisation, makespan, energy; and agreement with a
recorded schedule. Pure functions over the workload and a :class:`BatchResult`."""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.batch.energy import PowerModel, job_energy_j
from sim.batch.model import BatchCluster, Workload
from sim.batch.result import BatchResult

SIZE_CLASSES = (
    (1, 1, "1 node"),
    (2, 4, "2-4 nodes"),
    (5, 16, "5-16 nodes"),
    (17, 64, "17-64 nodes"),
    (65, 1 << 62, "65+ nodes"),
)
J_PER_KWH = 3.6e6


def wait_stats(waits: np.ndarray) -> dict[str, float | int]:
    """Count, mean, median and 95th percentile of waits (seconds; NaN entries ignored)."""
    waits = waits[~np.isnan(waits)]
    if not len(waits):
        return {"jobs": 0, "mean_s": 0.0, "median_s": 0.0, "p95_s": 0.0}
    return {
        "jobs": len(waits),
        "mean_s": float(waits.mean()),
        "median_s": float(np.median(waits)),
        "p95_s": float(np.percentile(waits, 95)),
    }


def size_class(nnodes: np.ndarray) -> np.ndarray:
    """Index into :data:`SIZE_CLASSES` per job."""
    return np.searchsorted(np.array([hi for _, hi, _ in SIZE_CLASSES]), nnodes)


def utilisation(cluster: BatchCluster, result: BatchResult) -> float:
    """Allocated CPU-seconds over configured CPU-seconds in the replayed period."""
    period = result.t_end_s - result.t0_s
    if period <= 0:
        return 0.0
    return float(result.node_busy_cpu_s.sum()) / (cluster.total_cpus * period)


def summarise(
    cluster: BatchCluster, w: Workload, result: BatchResult, power: PowerModel | None = None
) -> dict[str, Any]:
    """The figures every what-if prints (JSON-ready)."""
    power = power or PowerModel()
    waits = result.waits_s(w)
    ran = result.start_s >= 0
    part_names = np.array(w.partitions, dtype=object)
    by_partition = {
        str(name): wait_stats(waits[w.partition == p])
        for p, name in enumerate(part_names)
        if (w.partition == p).any()
    }
    classes = size_class(w.nnodes)
    by_size = {
        label: wait_stats(waits[classes == k])
        for k, (_, _, label) in enumerate(SIZE_CLASSES)
        if (classes == k).any()
    }
    it_j = float(result.node_energy_j.sum())
    job_j = job_energy_j(w, result.start_s, result.end_s, result.first_node, cluster, power)
    energy_by_partition = {
        str(name): float(job_j[w.partition == p].sum()) / J_PER_KWH
        for p, name in enumerate(part_names)
        if (w.partition == p).any()
    }
    run_s = np.where(ran, result.end_s - result.start_s, 0).astype(np.float64)
    return {
        "jobs": len(w),
        "ran": int(ran.sum()),
        "cpu_hours": float((run_s * w.nnodes * w.cpus_per_node).sum()) / 3600,
        "killed_at_limit": int(result.killed.sum()),
        "backfilled": int(result.backfilled.sum()),
        "waits": wait_stats(waits),
        "waits_by_partition": by_partition,
        "waits_by_size": by_size,
        "utilisation": utilisation(cluster, result),
        "makespan_s": int(result.t_end_s - result.t0_s),
        "energy": {
            "it_kwh": it_j / J_PER_KWH,
            "facility_kwh": it_j * power.pue / J_PER_KWH,
            "jobs_kwh": float(job_j.sum()) / J_PER_KWH,
            "idle_off_boot_kwh": (it_j - float(job_j.sum())) / J_PER_KWH,
            "by_partition_kwh": energy_by_partition,
            "pue": power.pue,
        },
        "nodes_off_share": float(result.node_off_s.sum())
        / max(len(cluster.nodes) * (result.t_end_s - result.t0_s), 1),
    }


def rank(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their average rank (as Spearman's coefficient needs)."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), np.float64)
    sorted_values = values[order]
    boundaries = np.flatnonzero(np.diff(sorted_values)) + 1
    starts = np.concatenate([[0], boundaries])
    ends = np.concatenate([boundaries, [len(values)]])
    for lo, hi in zip(starts, ends, strict=True):
        ranks[order[lo:hi]] = (lo + hi + 1) / 2.0
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (Pearson's on average ranks); NaN for fewer than 2 values."""
    if len(a) < 2:
        return float("nan")
    ra, rb = rank(np.asarray(a, np.float64)), rank(np.asarray(b, np.float64))
    ra -= ra.mean()
    rb -= rb.mean()
    denominator = float(np.sqrt((ra**2).sum() * (rb**2).sum()))
    return float((ra * rb).sum() / denominator) if denominator > 0 else float("nan")


def agreement(
    w: Workload, result: BatchResult, floor_s: float = 30.0, share_of_median: float = 0.1
) -> dict[str, Any]:
    """Simulated against recorded starts: the issue's two figures, and the error's spread.

    A job agrees when |simulated - recorded start| <= max(share_of_median x the recorded
    median wait, floor_s). Only jobs with a recorded start that the replay started count.
    """
    both = (w.recorded_start_s >= 0) & (result.start_s >= 0)
    real = w.recorded_start_s[both].astype(np.float64)
    sim = result.start_s[both].astype(np.float64)
    if not both.any():
        return {"jobs": 0}
    median_wait = float(np.median(real - w.submit_s[both]))
    tolerance = max(share_of_median * median_wait, floor_s)
    error = sim - real
    return {
        "jobs": int(both.sum()),
        "recorded_median_wait_s": median_wait,
        "tolerance_s": tolerance,
        "within_tolerance": float(np.mean(np.abs(error) <= tolerance)),
        "start_rank_correlation": spearman(real, sim),
        "error_mean_s": float(error.mean()),
        "error_median_abs_s": float(np.median(np.abs(error))),
        "error_p95_abs_s": float(np.percentile(np.abs(error), 95)),
        "recorded_wait_mean_s": float((real - w.submit_s[both]).mean()),
        "simulated_wait_mean_s": float((sim - w.submit_s[both]).mean()),
    }
