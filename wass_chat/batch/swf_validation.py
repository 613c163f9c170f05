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
from sim.batch.swf import SwfTrace, header_int, read_swf
from sim.errors import InputError

BASELINES = ("fifo-easy", "easy", "fifo", "sjf")
"""EASY backfill in submission order (Lifka's), EASY under the multifactor priority, then
plain FIFO and shortest-job-first without backfill, for context."""

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
    """
    configs = {name: scheduler_preset(name) for name in schedulers}  # unknown names fail first
    w = trace.workload
    if launch_delay_s:
        w = replace(w, earliest_s=w.submit_s + launch_delay_s)
    recorded_wait = (w.recorded_start_s - w.submit_s).astype(np.float64)
    has_wait = w.recorded_start_s >= 0
    runs: dict[str, Any] = {}
    for name, config in configs.items():
        tick = None if progress is None else (lambda done, total, n=name: progress(n, done, total))
        result = simulate_batch(trace.cluster, w, config, progress=tick)
        both = has_wait & (result.start_s >= 0)
        runs[name] = {
            **agreement(w, result),
            "recorded_waits": wait_stats(recorded_wait[both]),
            "simulated_waits": wait_stats(result.waits_s(w)[both]),
        }
    return {
        "source": trace.source,
        "machine": {
            "max_procs": int(trace.cluster.nodes[0].cpus),
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
    }
