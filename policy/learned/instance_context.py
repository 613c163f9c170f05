"""What the learned policy's features share: the candidate columns and each instance's constants.

Both paths that compute the per-decision candidate features read these:
:func:`~policy.learned.features.candidate_features` on any cluster view, and
:mod:`policy.learned.engine_features` on the engine's own view, in whole arrays. Keeping them
here, below both, is what lets the generic path hand the engine's view to the array path
without an import cycle.

:class:`InstanceContext` holds the per-(workflow, platform) constants (upward ranks, the time
scale, PEFT's optimistic cost-to-go, input and served bytes, retrieved spreads), computed once
per instance and cached.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from sim.model import Platform, Workflow
from sim.ranks import mean_compute_times, optimistic_cost_table, upward_rank
from sim.uncertainty import task_category

CANDIDATE_FEATURES = 13
PLANNED_COMPUTE = 11
"""Candidate column: the task's compute time there on the planning view (kb-predicted when
retrieval calibrated the view, the user's estimate otherwise)."""
SPREAD = 12
"""Candidate column: the retrieved log-spread of the task's runtime times its compute time
there, in units of its own mean runtime (0 without retrieval or in the exact setting)."""
FINISH_FROM_NOW = 0
"""Candidate column: the estimated finish there minus now, in the instance's time units."""
INBOUND = 9
"""Candidate column: the time to pull the task's missing inputs through the node's NIC."""
SERVE = 10
"""Candidate column: the time to serve the task's outputs to all their readers from there."""
PRIOR_GAP = 7
"""Candidate column the earliest-finish prior reads: the gap to the best data-aware finish."""
PRIOR_COST_TO_GO = 8
"""Candidate column with PEFT's optimistic cost-to-go, weighted into the prior."""
RELATIVE_FINISH_CLIP = 10.0
"""Time features are clipped here: gaps beyond ten units all look equally bad."""


@dataclass(frozen=True)
class InstanceContext:
    """Per-(workflow, platform) constants the features need, computed once per episode."""

    workflow: Workflow
    platform: Platform
    task_index: dict[str, int]
    node_index: dict[str, int]
    upward: dict[str, float]
    scale: float
    """The unit of every time feature: the largest of three makespan estimates (critical path
    by upward rank, total work over total capacity, reading every workflow input once from the
    shared filesystem), so data-bound and compute-bound instances both land near 1."""
    input_bytes: dict[str, int]
    """Task id -> total bytes of its input files."""
    mean_runtime: dict[str, float]
    """Task id -> mean compute time over the nodes that can host it."""
    served_bytes: dict[str, int]
    """Task id -> bytes its consumers will read from it: each output's size times the number of
    tasks that read it (they pull it through the NIC of the node the task runs on)."""
    lookahead: np.ndarray
    """(tasks, nodes) optimistic cost-to-go of PEFT (Arabnejad and Barbosa 2014), minus its
    per-task minimum: how much later the rest of the graph finishes at best from that node."""
    log_spread: np.ndarray
    """(tasks,) standard deviation of log(actual / predicted runtime) of each task's category
    among the retrieved executions (``spreads``); zeros when nothing was retrieved."""

    @classmethod
    def of(cls, workflow: Workflow, platform: Platform, spreads: Spreads = ()) -> InstanceContext:
        """The context of an instance, computed once per process (the OCT table is costly).

        ``spreads``: (task category, retrieved log-spread) pairs; categories left out get 0.
        """
        if spreads:
            return _with_spreads(workflow, platform, spreads)
        return _context(workflow, platform)

    @classmethod
    def build(
        cls, workflow: Workflow, platform: Platform, spreads: Spreads = ()
    ) -> InstanceContext:
        upward = upward_rank(workflow, platform)
        sizes = workflow.file_by_id
        fs_read = sum(sizes[f].size for f in workflow.input_files) / platform.shared_fs_bandwidth
        work = workflow.total_work / platform.total_capacity
        scale = max(max(upward.values(), default=0.0), fs_read, work, 1e-9)
        return cls(
            workflow=workflow,
            platform=platform,
            task_index={t.id: i for i, t in enumerate(workflow.tasks)},
            node_index={n.name: i for i, n in enumerate(platform.nodes)},
            upward=upward,
            scale=scale,
            input_bytes={t.id: sum(sizes[f].size for f in t.inputs) for t in workflow.tasks},
            served_bytes=_served_bytes(workflow),
            mean_runtime=mean_compute_times(workflow, platform),
            lookahead=_relative_oct(workflow, platform),
            log_spread=_log_spreads(workflow, spreads),
        )


Spreads = tuple[tuple[str, float], ...]
"""(task category, log-spread) pairs, hashable so contexts can be cached on them."""


@lru_cache(maxsize=64)
def _context(workflow: Workflow, platform: Platform) -> InstanceContext:
    return InstanceContext.build(workflow, platform)


@lru_cache(maxsize=64)
def _with_spreads(workflow: Workflow, platform: Platform, spreads: Spreads) -> InstanceContext:
    """The instance's context with retrieved spreads; the rest (the OCT table included) is the
    spread-free context's, computed once."""
    return replace(_context(workflow, platform), log_spread=_log_spreads(workflow, spreads))


def _log_spreads(workflow: Workflow, spreads: Spreads) -> np.ndarray:
    given = dict(spreads)
    return np.array([given.get(task_category(t), 0.0) for t in workflow.tasks], dtype=np.float64)


def _relative_oct(workflow: Workflow, platform: Platform) -> np.ndarray:
    table = optimistic_cost_table(workflow, platform)
    oct_ = np.array(
        [[table[(t.id, n.name)] for n in platform.nodes] for t in workflow.tasks],
        dtype=np.float64,
    )
    return oct_ - oct_.min(axis=1, keepdims=True)


def _served_bytes(workflow: Workflow) -> dict[str, int]:
    readers: dict[str, int] = {}
    for t in workflow.tasks:
        for f in t.inputs:
            readers[f] = readers.get(f, 0) + 1
    sizes = workflow.file_by_id
    return {t.id: sum(sizes[f].size * readers.get(f, 0) for f in t.outputs) for t in workflow.tasks}
