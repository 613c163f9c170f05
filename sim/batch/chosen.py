"""A replay whose main scheduler asks a chooser which pending job starts next.

The hook of the learned job scheduler (policy/batch_gat/): at each scheduling instant the
queue, in submission order, shows its first ``window`` jobs to a :class:`QueueChooser`, as a
:class:`DecisionView` of job and partition features. The valid choices are the queue's head
(the oldest pending job, the one EASY backfill would reserve for) and every job of the window
that fits now. A job that fits starts at once and the chooser is asked again; choosing the
head hands the rest of the instant to the FIFO main loop, and EASY backfill (one reservation,
for the first blocked job in submission order) runs behind as usual. A chooser that always
picks the head therefore gives exactly the ``fifo-easy`` preset's schedule. The chooser is
only asked when it has a real choice (at least two valid jobs).

Python engine only (the compiled core has no callback); no torch here: the features are
numpy arrays, the chooser is whatever implements the Protocol.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from sim.batch.config import PowerSaving, SchedulerConfig, scheduler_preset
from sim.batch.energy import PowerModel
from sim.batch.engine import _Engine
from sim.batch.model import BatchCluster, Workload
from sim.batch.result import BatchResult

JOB_FEATURES = (
    "log_wait",
    "node_share",
    "cpu_share",
    "log_estimate",
    "fairshare",
    "fits_now",
    "is_head",
    "wants_gpus",
    "position",
)
PARTITION_FEATURES = ("free_cpu_share", "idle_node_share", "log_next_release", "queued", "size")
LOG_MINUTES_SCALE = 8.0
"""log1p(minutes) / this: ~1 at 2 days."""
LOG2_ESTIMATE_SCALE = 20.0
"""log2(seconds) / this: ~1 at 12 days."""


@dataclass(frozen=True)
class DecisionView:
    """What the chooser sees at one decision; rows beyond ``count`` are padding."""

    time_s: int
    count: int
    """Jobs in the window (the first ``count`` rows of the job arrays)."""
    jobs: np.ndarray
    """(window, len(JOB_FEATURES)) float32."""
    job_partition: np.ndarray
    """(window,) int64: each job's partition row (-1 for padding)."""
    mask: np.ndarray
    """(window,) bool: the valid choices (the head and the jobs that fit now)."""
    partitions: np.ndarray
    """(partitions, len(PARTITION_FEATURES)) float32."""
    progress: float
    """Share of the workload's jobs already started."""
    rows: tuple[int, ...]
    """The workload rows of the window's jobs."""


class QueueChooser(Protocol):
    def __call__(self, view: DecisionView) -> int:
        """The window index of the job to start (``view.mask`` must allow it)."""
        ...


class UniformChooser:
    """Any valid job with equal probability (seeded): the baseline a learned chooser must beat,
    as it shows what the choice set alone is worth."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, view: DecisionView) -> int:
        return int(self.rng.choice(np.flatnonzero(view.mask)))


def simulate_chosen(
    cluster: BatchCluster,
    workload: Workload,
    chooser: QueueChooser,
    window: int = 32,
    power_saving: PowerSaving | None = None,
    power_model: PowerModel | None = None,
    scheduler: SchedulerConfig | None = None,
) -> BatchResult:
    """Replay ``workload`` with ``chooser`` picking jobs (FIFO-EASY around it, see above)."""
    cfg = scheduler or scheduler_preset("fifo-easy")
    engine = _ChooserEngine(
        cluster, workload, cfg, power_saving, power_model or PowerModel(), chooser, window
    )
    return engine.run()


class InvalidChoiceError(ValueError):
    """A chooser returned a job the mask does not allow."""


class _ChooserEngine(_Engine):
    def __init__(
        self,
        cluster: BatchCluster,
        w: Workload,
        cfg: SchedulerConfig,
        power: PowerSaving | None,
        model: PowerModel,
        chooser: QueueChooser,
        window: int,
    ) -> None:
        super().__init__(cluster, w, cfg, power, model, None)
        self.chooser, self.window = chooser, window
        self.node_rows = [np.asarray(p, np.int64) for p in self.part_nodes]
        self.part_cpus = [sum(self.pool.cap_cpu[i] for i in p) for p in self.part_nodes]
        self.total_nodes = len(cluster.nodes)
        self.started = 0
        self.decisions = 0

    def _enqueue(self, j: int, t: int) -> None:
        self.prio.see(self.prio.users[j])  # fair share counts the users seen, as in priority
        super()._enqueue(j, t)

    def _start(self, j: int, nodes: list[int], t: int, backfill: bool) -> None:
        self.started += 1
        super()._start(j, nodes, t, backfill)

    def _main_pass(self, t: int) -> None:
        self.prio.tick(t)
        while len(self.queue) > 1:
            rows = [k[-1] for k in self.queue[: self.window]]
            free = self._free_nodes(rows)
            fits = [len(f) >= self.nn[j] for f, j in zip(free, rows, strict=True)]
            if not any(fits[1:]):
                break
            view = self._view(t, rows, fits)
            pick = int(self.chooser(view))
            self.decisions += 1
            if not (0 <= pick < len(rows)) or not view.mask[pick]:
                raise InvalidChoiceError(f"choice {pick} is masked at t={t}")
            if pick == 0:
                break
            j = rows[pick]
            nodes = self.pool.choose(free[pick], self.nn[j], self.cfg.node_order == "best_fit")
            self._start(j, nodes, t, backfill=False)
            self._drop_started([j])
        if self.queue:
            super()._main_pass(t)

    def _free_nodes(self, rows: list[int]) -> list[list[int]]:
        """Per job, its partition's nodes with its request free now (computed once per shape)."""
        pool = self.pool
        by_shape: dict[tuple[int, int, int, int], list[int]] = {}
        out = []
        for j in rows:
            shape = (self.part[j], self.c[j], self.m[j], self.g[j])
            found = by_shape.get(shape)
            if found is None:
                p, c, m, g = shape
                found = by_shape[shape] = [
                    i for i in self.part_nodes[p] if pool.fits_now(i, c, m, g)
                ]
            out.append(found)
        return out

    def _view(self, t: int, rows: list[int], fits: list[bool]) -> DecisionView:
        k, n = self.window, len(rows)
        jobs = np.zeros((k, len(JOB_FEATURES)), np.float32)
        part = np.full(k, -1, np.int64)
        mask = np.zeros(k, bool)
        pool = self.pool
        for x, j in enumerate(rows):
            p = self.part[j]
            part[x] = p
            mask[x] = x == 0 or fits[x]
            jobs[x] = (
                math.log1p(max(t - self.eligible_at[j], 0) / 60.0) / LOG_MINUTES_SCALE,
                self.nn[j] / len(self.part_nodes[p]),
                self.nn[j] * self.c[j] / self.part_cpus[p],
                math.log2(max(self.est[j], 1)) / LOG2_ESTIMATE_SCALE,
                self.prio.fairshare(self.prio.users[j]),
                float(fits[x]),
                float(x == 0),
                float(self.g[j] > 0),
                x / k,
            )
        free = np.asarray(pool.free_cpu, np.int64)
        cap = np.asarray(pool.cap_cpu, np.int64)
        next_release = [math.inf] * len(self.part_nodes)
        for j in self.running:
            p = self.part[j]
            next_release[p] = min(next_release[p], max(self.expected_end[j] - t, 0))
        queued = np.bincount(part[:n], minlength=len(self.part_nodes))
        parts = np.zeros((len(self.part_nodes), len(PARTITION_FEATURES)), np.float32)
        for p, idx in enumerate(self.node_rows):
            release = next_release[p]
            parts[p] = (
                free[idx].sum() / self.part_cpus[p],
                (free[idx] == cap[idx]).mean(),
                1.0 if math.isinf(release) else math.log1p(release / 60.0) / LOG_MINUTES_SCALE,
                queued[p] / k,
                len(idx) / self.total_nodes,
            )
        return DecisionView(
            time_s=t,
            count=n,
            jobs=jobs,
            job_partition=part,
            mask=mask,
            partitions=parts,
            progress=self.started / max(len(self.w), 1),
            rows=tuple(rows),
        )
