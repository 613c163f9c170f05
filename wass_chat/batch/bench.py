"""How fast a year of a large site replays: synthetic accounting data (``sacct synth``), the
cluster inferred from it, one replay with backfill; CPU seconds and memory.

The synthesis is set-up and untimed; the figures are the loading (parsed table -> workload
and cluster), the replay itself and the summary, each in CPU seconds (``time.process_time``,
which the machine's load barely moves), and the process's peak resident memory before and
after the replay (``ru_maxrss``): their difference is what the replay added.
"""

from __future__ import annotations

import resource
import time
from typing import Any

import numpy as np

from sim.batch import compiled
from sim.batch.config import scheduler_preset
from sim.batch.engine import simulate_batch, unfit_jobs
from sim.batch.metrics import summarise
from wass_chat.batch.cluster_source import cluster_from_jobs, describe
from wass_chat.batch.sacct_workload import workload_from_jobs
from wass_chat.sacct.synth import synthesize


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_bench(
    jobs: int, days: float = 365.0, seed: int = 0, scheduler: str = "easy", depth: int | None = None
) -> dict[str, Any]:
    """Synthesize, load, replay once; every figure the docs quote."""
    began = time.perf_counter()
    table = synthesize(jobs, seed, days=days)
    synth_s = time.perf_counter() - began

    cpu = time.process_time()
    cluster = cluster_from_jobs(table)
    loaded = workload_from_jobs(table)
    workload = loaded.workload
    bad = unfit_jobs(cluster, workload)
    if len(bad):
        workload = workload.take(np.setdiff1d(np.arange(len(workload)), bad))
    load_cpu = time.process_time() - cpu
    del table
    cfg = (
        scheduler_preset(scheduler)
        if depth is None
        else scheduler_preset(scheduler, reservation_depth=depth)
    )
    before = _peak_mib()
    cpu, wall = time.process_time(), time.perf_counter()
    result = simulate_batch(cluster, workload, cfg)
    replay_cpu, replay_wall = time.process_time() - cpu, time.perf_counter() - wall
    after = _peak_mib()
    cpu = time.process_time()
    summary = summarise(cluster, workload, result)
    summary_cpu = time.process_time() - cpu
    return {
        "jobs_synthesized": jobs,
        "days": days,
        "jobs_replayed": len(workload),
        "never_started": loaded.never_started,
        "cluster": {k: v for k, v in describe(cluster).items() if k != "partitions"},
        "scheduler": {
            "name": scheduler,
            "order": cfg.order,
            "backfill": cfg.backfill,
            "reservation_depth": cfg.reservation_depth,
            "bf_interval_s": cfg.bf_interval_s,
        },
        "engine": "compiled" if compiled.use_compiled() else "python",
        "synth_wall_s": synth_s,
        "load_cpu_s": load_cpu,
        "replay_cpu_s": replay_cpu,
        "replay_wall_s": replay_wall,
        "summary_cpu_s": summary_cpu,
        "peak_rss_before_replay_mib": before,
        "peak_rss_after_replay_mib": after,
        "events": result.events,
        "passes": {"main": result.passes[0], "backfill": result.passes[1]},
        "waits": summary["waits"],
        "utilisation": summary["utilisation"],
        "backfilled": summary["backfilled"],
        "makespan_days": summary["makespan_s"] / 86400,
    }
