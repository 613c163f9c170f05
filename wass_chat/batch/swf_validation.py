"""The batch simulator against a public SWF log: its jobs replayed, their waits compared.

A Parallel Workloads Archive log (or any SWF log with field 3 filled) records when each job
was submitted and how long it waited under the site's own scheduler. ``compare_swf_log``
replays the log on its own machine (one pool of the header's ``MaxProcs``, as
:mod:`sim.batch.swf` reads it) under baseline schedulers, each job running its recorded run
time and planned by its requested time, and compares every simulated start with the
recorded one by the same measure as the real-Slurm validation
(:func:`sim.batch.metrics.agreement`, the waits' spread by :func:`sim.batch.metrics.wait_stats`).
The site ran its own scheduler (Slurm, LoadLeveler, Maui, Cobalt...), so the agreement says
how close each baseline comes to that scheduler, not whether the simulator is right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from sim.batch.config import scheduler_preset
from sim.batch.engine import simulate_batch
from sim.batch.metrics import agreement, wait_stats
from sim.batch.model import Workload
from sim.batch.result import BatchResult
from sim.batch.swf import SwfTrace, header_int, read_swf
from sim.errors import InputError

BASELINES = ("fifo-easy", "easy", "fifo", "sjf")
"""EASY backfill in submission order (Lifka's), EASY under the multifactor priority, then
plain FIFO and shortest-job-first without backfill, for context."""

SIZE_SHARES = (
    (0.0, 0.01, "under 1%"),
    (0.01, 0.1, "1-10%"),
    (0.1, 0.5, "10-50%"),
    (0.5, 2.0, "half or more"),
)
"""Job sizes as a share of the machine's processors (bounds low <= share < high)."""

Progress = Callable[[str, int, int], None]
"""Called during each replay with (scheduler, jobs finished, jobs in all)."""


def load_swf_log(path: Path) -> SwfTrace:
    """Read ``path`` and check it can be compared: a machine size in the header, at least
    one job that ran, at least one recorded wait. Every problem found is raised at once."""
    trace = read_swf(path)
    problems = []
    if not any(header_int(trace.header, key) for key in ("MaxProcs", "MaxNodes")):
        problems.append("no MaxProcs (or MaxNodes) in the header: the machine's size is unknown")
    w = trace.workload
    if not len(w):
        problems.append(f"no job that ran ({trace.skipped_no_run} lines without a run time)")
    elif not (w.recorded_start_s >= 0).any():
        problems.append("no recorded wait (field 3 is -1 on every line): nothing to compare")
    if problems:
        raise InputError(str(path), problems)
    return trace


def compare_swf_log(
    trace: SwfTrace,
    schedulers: Sequence[str] = BASELINES,
    launch_delay_s: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Replay ``trace`` under each scheduler preset; the agreement with its recorded starts.

    ``launch_delay_s`` holds every job at least that long after its submission (a site's
    launch latency: Cobalt on Theta started no job sooner than 33 s after its submission).
    ``no_queue_reference`` is the same comparison for starts at the earliest moment allowed,
    as if the machine were never full: what a replay must beat to have learnt anything.
    """
    if not schedulers:
        raise InputError("schedulers", ["name at least one scheduler preset"])
    configs = {name: scheduler_preset(name) for name in schedulers}  # unknown names fail first
    w = trace.workload
    if launch_delay_s:
        w = replace(w, earliest_s=w.submit_s + launch_delay_s)
    has_wait = w.recorded_start_s >= 0
    recorded_wait = (w.recorded_start_s - w.submit_s).astype(np.float64)
    max_procs = int(trace.cluster.nodes[0].cpus)
    runs: dict[str, Any] = {}
    result = None
    for name, config in configs.items():
        tick = None if progress is None else (lambda done, total, n=name: progress(n, done, total))
        result = simulate_batch(trace.cluster, w, config, progress=tick)
        runs[name] = _compared(w, result)
        runs[name]["by_size"] = _by_size(w, result, max_procs, runs[name]["tolerance_s"])
    assert result is not None  # at least one scheduler, checked above
    no_queue = _compared(w, replace(result, start_s=w.earliest_s.copy()))
    return {
        "source": trace.source,
        "machine": {
            "max_procs": max_procs,
            "computer": trace.header.get("Computer", ""),
            "installation": trace.header.get("Installation", ""),
            "note": trace.header.get("Note", ""),
            "partitions": {str(k): v for k, v in sorted(trace.partitions.items())},
        },
        "jobs": len(w),
        "skipped_without_run": trace.skipped_no_run,
        "with_recorded_wait": int(has_wait.sum()),
        "recorded_min_wait_s": float(recorded_wait[has_wait].min()),
        "launch_delay_s": launch_delay_s,
        "runs": runs,
        "no_queue_reference": no_queue,
    }


def _compared(
    w: Workload, result: BatchResult, floor_s: float = 30.0, share_of_median: float = 0.1
) -> dict[str, Any]:
    """:func:`agreement`, and the recorded and simulated waits of the jobs it counts."""
    both = (w.recorded_start_s >= 0) & (result.start_s >= 0)
    recorded = (w.recorded_start_s - w.submit_s).astype(np.float64)
    return {
        **agreement(w, result, floor_s, share_of_median),
        "recorded_waits": wait_stats(recorded[both]),
        "simulated_waits": wait_stats(result.waits_s(w)[both]),
    }


def _by_size(
    w: Workload, result: BatchResult, max_procs: int, tolerance_s: float
) -> dict[str, Any]:
    """The comparison per job size (share of the machine), at the whole log's tolerance."""
    share = w.cpus_per_node / max_procs
    out: dict[str, Any] = {}
    for low, high, label in SIZE_SHARES:
        rows = np.flatnonzero((share >= low) & (share < high))
        if len(rows):
            part = replace(result, start_s=result.start_s[rows])
            out[label] = _compared(w.take(rows), part, tolerance_s, 0.0)
    return out
