"""Structural statistics the v0 embedding and the decision states need beyond sim.workflow_stats.

Levels, widths and the CCR come from :mod:`sim.workflow_stats`; this module adds the per-edge
data sizes, the critical path and a scale-free spread measure, as pure functions.
"""

from __future__ import annotations

import numpy as np

from sim.model import Workflow


def edge_byte_sizes(workflow: Workflow) -> np.ndarray:
    """Bytes carried by each (parent, child) edge, in a fixed order."""
    sizes = workflow.file_by_id
    return np.array(
        [sum(sizes[f].size for f in files) for files in workflow.edge_files.values()],
        dtype=np.float64,
    )


def critical_path_work(workflow: Workflow) -> float:
    """The largest total per-core work (flop / cores) along any path: compute-only lower bound."""
    finish: dict[str, float] = {}
    tasks = workflow.task_by_id
    for tid in workflow.topological_order:
        own = tasks[tid].work / tasks[tid].cores
        finish[tid] = own + max((finish[p] for p in workflow.parents[tid]), default=0.0)
    return max(finish.values(), default=0.0)


def coefficient_of_variation(values: np.ndarray) -> float:
    """Standard deviation over mean (0 for an empty or all-zero sample)."""
    if values.size == 0:
        return 0.0
    mean = float(values.mean())
    return float(values.std() / mean) if mean > 0 else 0.0
