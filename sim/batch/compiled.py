"""The batch simulator's compiled core (``sim.batch._core``, C sources in sim/batch/csrc/).

The C engine is the same algorithm as the Python one (engine.py, backfill.py, nodes.py,
priority.py), event for event and with the same floating-point operations, so it gives the
same schedule, energy and counters (tests/batch/test_core_equivalence.py); it exists because
a year of a large site (1.5 M jobs) takes hours in Python. ``make setup`` builds it with the
workflow core. A core built from other sources than sim/batch/csrc/ is refused at import;
when it is missing, :func:`sim.batch.engine.simulate_batch` runs the Python engine and warns
once. ``WASS_SIM_CORE=python`` selects the Python engine explicitly.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from sim.core_hash import source_hash
from sim.errors import InputError

if TYPE_CHECKING:
    from sim.batch.config import PowerSaving, SchedulerConfig
    from sim.batch.energy import PowerModel
    from sim.batch.model import BatchCluster, Workload
    from sim.batch.result import BatchResult, Progress

SOURCES = Path(__file__).parent / "csrc"
ORDERS = {"fifo": 0, "sjf": 1, "priority": 2}


class StaleBatchCoreError(InputError):
    kind = "build"


def _load() -> ModuleType | None:
    try:
        from sim.batch import _core  # type: ignore[attr-defined]
    except ImportError:
        return None
    if SOURCES.is_dir() and getattr(_core, "SOURCE_HASH", "") != source_hash(SOURCES):
        raise StaleBatchCoreError(
            "sim.batch._core", ["built from other sources than sim/batch/csrc/: run make setup"]
        )
    return _core


_core = _load()
AVAILABLE = _core is not None
_warned = False


def use_compiled() -> bool:
    """True when the compiled core runs (built, and not ``WASS_SIM_CORE=python``)."""
    global _warned
    if os.environ.get("WASS_SIM_CORE", "").lower() == "python":
        return False
    if not AVAILABLE and not _warned:
        _warned = True
        warnings.warn(
            "sim.batch._core is not built: the batch simulator runs its Python engine (same "
            "results, far slower); run make setup",
            RuntimeWarning,
            stacklevel=3,
        )
    return AVAILABLE


def _i64(values: object) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


def simulate_compiled(
    cluster: BatchCluster,
    w: Workload,
    cfg: SchedulerConfig,
    power: PowerSaving | None,
    model: PowerModel,
    progress: Progress | None,
) -> BatchResult:
    """One replay on the compiled core; the same contract as the Python engine."""
    from sim.batch.priority import PriorityModel
    from sim.batch.requests import resolve
    from sim.batch.result import BatchResult

    assert _core is not None
    req = resolve(cluster, w, cfg.kill_grace_s)
    prio = PriorityModel(cfg, cluster, w, req.partition, req.estimate_s)
    index = cluster.node_index()
    part_nodes = [[index[x] for x in p.nodes] for p in cluster.partitions]
    pptr = _i64(np.concatenate([[0], np.cumsum([len(p) for p in part_nodes])]))
    pidx = _i64([i for p in part_nodes for i in p])
    profiles = model.node_profiles(cluster)
    tiers = np.array([p.priority_tier for p in cluster.partitions], np.int64)
    n = len(w)
    dep_ptr = _i64(w.dep_ptr if len(w.dep_ptr) == n + 1 else np.zeros(n + 1))
    jobs = (
        _i64(req.partition),
        _i64(w.nnodes),
        _i64(w.cpus_per_node),
        _i64(w.mem_per_node),
        _i64(w.gpus_per_node),
        _i64(req.run_s),
        _i64(req.estimate_s),
        _i64(req.limit_s),
        _i64(w.submit_s),
        _i64(w.earliest_s),
        _i64(tiers[req.partition]),
        _i64(w.user),
        dep_ptr,
        _i64(w.dep_parent),
    )
    nodes = tuple(_i64([getattr(x, k) for x in cluster.nodes]) for k in ("cpus", "memory", "gpus"))
    watts = tuple(
        np.ascontiguousarray([getattr(p, k) for p in profiles], np.float64)
        for k in ("idle_w", "cpu_w", "gpu_w", "off_w", "boot_w")
    )
    wt = cfg.weights
    t0 = int(w.earliest_s.min()) if n else 0
    config = (
        ORDERS[cfg.order],
        int(cfg.backfill),
        int(cfg.node_order == "best_fit"),
        cfg.bf_interval_s,
        cfg.bf_window_s,
        cfg.reservation_depth,
        cfg.bf_max_job_test,
        cfg.calc_period_s,
        wt.age,
        wt.fairshare,
        wt.max_age_s,
        wt.decay_half_life_s,
        int(power is not None),
        power.suspend_after_s if power else 0,
        power.boot_s if power else 0,
        len(w.users),
        t0,
        int(dep_ptr[-1] > 0),
        cfg.completing_s,
        cfg.bf_resolution_s,
    )
    static = np.ascontiguousarray(prio.static, np.float64)
    out = _core.run(jobs, static, nodes, watts, pptr, pidx, config, progress)
    start, end, backfilled, alloc, energy, busy, off, events, main, bf, t_end = out
    alloc_ptr = np.concatenate([[0], np.cumsum(w.nnodes)]).astype(np.int64)
    start_a = np.frombuffer(start, np.int64).copy()
    alloc_nodes = np.frombuffer(alloc, np.int64).copy()
    first = (
        np.where(
            w.nnodes > 0, alloc_nodes[np.minimum(alloc_ptr[:-1], max(len(alloc_nodes) - 1, 0))], -1
        )
        if n
        else np.zeros(0, np.int64)
    )
    return BatchResult(
        start_s=start_a,
        end_s=np.frombuffer(end, np.int64).copy(),
        killed=np.asarray(req.killed) & (start_a >= 0),
        backfilled=np.frombuffer(backfilled, np.int8).astype(bool),
        first_node=first.astype(np.int64),
        alloc_ptr=alloc_ptr,
        alloc_nodes=alloc_nodes,
        node_energy_j=np.frombuffer(energy, np.float64).copy(),
        node_busy_cpu_s=np.frombuffer(busy, np.int64).copy(),
        node_off_s=np.frombuffer(off, np.int64).copy(),
        t0_s=t0,
        t_end_s=int(t_end),
        events=int(events),
        passes=(int(main), int(bf)),
    )
