"""What a batch simulation returns: per-job starts and ends, per-node energy and use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

Progress = Callable[[int, int], None]
"""Called now and then during a replay with (jobs finished, jobs in all)."""

if TYPE_CHECKING:
    from sim.batch.model import Workload
    from sim.batch.nodes import NodePool
    from sim.batch.requests import Requests


@dataclass(frozen=True)
class BatchResult:
    """One replay. ``start_s``/``end_s`` are -1 for jobs that never ran; a job's start is when
    it began to run (after any node boot). ``killed`` marks jobs stopped at their limit.
    Job ``i`` ran on node rows ``alloc_nodes[alloc_ptr[i]:alloc_ptr[i + 1]]`` (see
    :meth:`nodes_of`), the first of them is ``first_node[i]``. Node arrays are in the
    cluster's node order; energy is IT energy in joules over ``[t0_s, t_end_s]``."""

    start_s: np.ndarray
    end_s: np.ndarray
    killed: np.ndarray
    backfilled: np.ndarray
    first_node: np.ndarray
    alloc_ptr: np.ndarray
    alloc_nodes: np.ndarray
    node_energy_j: np.ndarray
    node_busy_cpu_s: np.ndarray
    node_off_s: np.ndarray
    t0_s: int
    t_end_s: int
    events: int
    passes: tuple[int, int]

    @classmethod
    def build(
        cls,
        w: Workload,
        req: Requests,
        start: Sequence[int],
        end: Sequence[int],
        alloc: Sequence[Sequence[int]],
        backfilled: Sequence[bool],
        pool: NodePool,
        t0: int,
        events: int,
        passes: tuple[int, int],
    ) -> BatchResult:
        start_a = np.asarray(start, np.int64)
        end_a = np.asarray(end, np.int64)
        ran = start_a >= 0
        t_end = int(end_a.max()) if len(end_a) and ran.any() else t0
        return cls(
            start_s=start_a,
            end_s=end_a,
            killed=np.asarray(req.killed) & ran,
            backfilled=np.asarray(backfilled, bool),
            first_node=np.asarray([a[0] if a else -1 for a in alloc], np.int64),
            alloc_ptr=np.concatenate([[0], np.cumsum([len(a) for a in alloc])]).astype(np.int64),
            alloc_nodes=np.asarray([i for a in alloc for i in a], np.int64),
            node_energy_j=np.asarray(pool.energy_j, np.float64),
            node_busy_cpu_s=np.asarray(pool.busy_cpu_s, np.int64),
            node_off_s=np.asarray(pool.off_s, np.int64),
            t0_s=t0,
            t_end_s=t_end,
            events=events,
            passes=passes,
        )

    def nodes_of(self, job: int) -> tuple[int, ...]:
        """The node rows job ``job`` ran on (empty if it never ran)."""
        return tuple(self.alloc_nodes[self.alloc_ptr[job] : self.alloc_ptr[job + 1]].tolist())

    def waits_s(self, w: Workload) -> np.ndarray:
        """Start minus submission, per job (NaN for jobs that never ran)."""
        return np.where(self.start_s >= 0, self.start_s - w.submit_s, np.nan)
