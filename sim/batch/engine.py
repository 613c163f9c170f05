"""The batch simulator's event loop: ``simulate_batch(cluster, workload, ...) -> BatchResult``.

Why its own loop and not the workflow engine (sim/engine.py): that engine places one task on
one node and moves files between nodes; a batch job spans many nodes, waits in a queue
ordered by priority, and is started by two schedulers that reason about the future (backfill
reservations). Nothing of the workflow engine's network or data model applies.

At each instant, in this order: jobs end (resources released, dependants released), nodes
finish booting, idle nodes power down, jobs become eligible; then, if anything changed, the
main scheduler walks the queue in order and starts every job that fits now, skipping the
rest of a partition once one of its jobs does not fit (Slurm's main loop); then, when
Slurm's backfill agent would run (``bf_interval_s`` after its last pass, and only once
something changed: :meth:`_Engine._next_backfill`), the backfill pass
(:mod:`sim.batch.backfill`). A job runs ``min(runtime, limit)`` seconds:
killed at its limit (the partition's MaxTime caps it). It never starts before its eligible
time nor before every job it depends on has ended. The simulation is deterministic and never
reads the wall clock.
"""

from __future__ import annotations

import bisect
import heapq

import numpy as np

from sim.batch.backfill import Plan, plan_slot
from sim.batch.compiled import simulate_compiled, use_compiled
from sim.batch.config import PowerSaving, SchedulerConfig
from sim.batch.energy import PowerModel
from sim.batch.model import UNLIMITED, BatchCluster, Workload, WorkloadError
from sim.batch.nodes import BOOTING, ON, NodePool
from sim.batch.priority import PriorityModel
from sim.batch.requests import resolve
from sim.batch.result import BatchResult, Progress
from sim.errors import raise_if

END, BOOT, OFF, ARRIVE, PRIO, BACKFILL = range(6)


def unfit_jobs(cluster: BatchCluster, w: Workload) -> np.ndarray:
    """Rows of jobs no set of their partition's nodes can ever host (too wide or too big).

    A job fits when at least ``nnodes`` of its partition's nodes each have its CPUs, memory
    and GPUs. Per distinct (CPUs, GPUs) request, the nodes with enough of both are sorted by
    memory and each job's count is a binary search: a few distinct requests times the nodes,
    not every job times every node (20,000 jobs on 10,000 nodes: milliseconds, not a second).
    """
    req = resolve(cluster, w)
    bad = np.zeros(len(w), bool)
    for p, part in enumerate(cluster.partitions):
        rows = np.flatnonzero(req.partition == p)
        if not len(rows):
            continue
        nodes = [cluster.nodes[i] for i in cluster.node_index_of(part.nodes)]
        cpu = np.array([n.cpus for n in nodes])
        mem = np.array([n.memory for n in nodes])
        gpu = np.array([n.gpus for n in nodes])
        shape = np.stack([w.cpus_per_node[rows], w.gpus_per_node[rows]], axis=1)
        kinds, which = np.unique(shape, axis=0, return_inverse=True)
        fits = np.zeros(len(rows), np.int64)
        for k, (cpus, gpus) in enumerate(kinds):
            members = np.flatnonzero(which.reshape(-1) == k)
            memory = np.sort(mem[(cpu >= cpus) & (gpu >= gpus)])
            needed = w.mem_per_node[rows[members]]
            fits[members] = len(memory) - np.searchsorted(memory, needed, side="left")
        bad[rows] = fits < w.nnodes[rows]
    return np.flatnonzero(bad)


def simulate_batch(
    cluster: BatchCluster,
    workload: Workload,
    scheduler: SchedulerConfig | None = None,
    power_saving: PowerSaving | None = None,
    power_model: PowerModel | None = None,
    progress: Progress | None = None,
) -> BatchResult:
    """Replay ``workload`` on ``cluster`` under ``scheduler`` (default: multifactor + EASY).

    Jobs that can never fit their partition raise a :class:`WorkloadError` naming them (drop
    them first with :func:`unfit_jobs` to replay the rest).
    """
    bad = unfit_jobs(cluster, workload)
    raise_if(
        [
            f"job {workload.job_ids[i]} fits no {workload.nnodes[i]} nodes of its partition"
            for i in bad[:20]
        ]
        + ([f"{len(bad) - 20} more jobs that fit nowhere"] if len(bad) > 20 else []),
        WorkloadError,
        "workload",
    )
    config = scheduler or SchedulerConfig()
    slurm_plan = config.bf_whole_nodes or config.bf_end_round_up
    if use_compiled() and not (slurm_plan or config.node_order == "consecutive"):
        return simulate_compiled(
            cluster,
            workload,
            config,
            power_saving,
            power_model or PowerModel(),
            progress,
        )
    engine = _Engine(
        cluster,
        workload,
        config,
        power_saving,
        power_model or PowerModel(),
        progress,
    )
    return engine.run()


class _Engine:
    def __init__(
        self,
        cluster: BatchCluster,
        w: Workload,
        cfg: SchedulerConfig,
        power: PowerSaving | None,
        model: PowerModel,
        progress: Progress | None,
    ) -> None:
        self.cluster, self.w, self.cfg, self.power, self.progress = cluster, w, cfg, power, progress
        req = resolve(cluster, w, cfg.kill_grace_s)
        self.req = req
        n = len(w)
        self.part = req.partition.tolist()
        self.nn = w.nnodes.tolist()
        self.c = w.cpus_per_node.tolist()
        self.m = w.mem_per_node.tolist()
        self.g = w.gpus_per_node.tolist()
        self.run_s = req.run_s.tolist()
        self.est = req.estimate_s.tolist()
        self.limit = req.limit_s.tolist()
        self.submit = w.submit_s.tolist()
        self.tier = [cluster.partitions[p].priority_tier for p in self.part]
        index = cluster.node_index()
        self.part_nodes = [[index[x] for x in p.nodes] for p in cluster.partitions]
        self.t0 = int(w.earliest_s.min()) if n else 0
        self.pool = NodePool(cluster, self.part_nodes, model.node_profiles(cluster), self.t0)
        self.prio = PriorityModel(cfg, cluster, w, req.partition, req.estimate_s)
        self.unmet = [0] * n
        self.children: list[list[int]] = [[] for _ in range(n)]
        for j in range(n):
            for parent in w.parents(j).tolist():
                self.unmet[j] += 1
                self.children[parent].append(j)
        self.arrived = [False] * n
        self.eligible_at = [0] * n
        self.start = [-1] * n
        self.end = [-1] * n
        self.expected_end = [0] * n
        self.alloc: list[list[int]] = [[] for _ in range(n)]
        self.backfilled = [False] * n
        self.queue: list[tuple[int, ...]] = []
        self.running: set[int] = set()
        self.heap: list[tuple[int, int, int]] = [
            (int(t), ARRIVE, j) for j, t in enumerate(w.earliest_s.tolist())
        ]
        heapq.heapify(self.heap)
        self.changed = self.bf_changed = False
        self.bf_tick = self.prio_tick = -1
        self.bf_last = self.t0 - cfg.bf_interval_s  # the agent's last pass: long before
        self.bf_cadence = False
        self.done = 0
        self.events = 0
        self.passes = [0, 0]
        if power is not None:
            for i in range(len(cluster.nodes)):
                self._push(self.t0 + power.suspend_after_s, OFF, i)

    def _push(self, t: int, kind: int, x: int) -> None:
        heapq.heappush(self.heap, (t, kind, x))

    # --- the loop -----------------------------------------------------------------------
    def run(self) -> BatchResult:
        heap = self.heap
        t = self.t0
        n = len(self.w)
        while heap and self.done < n:  # events after the last end (power-offs) are not charged
            t = heap[0][0]
            backfill_now = recalc = False
            while heap and heap[0][0] == t:
                _, kind, x = heapq.heappop(heap)
                self.events += 1
                if kind == END:
                    self._end(x, t)
                elif kind == ARRIVE:
                    self.arrived[x] = True
                    if self.unmet[x] == 0:
                        self._enqueue(x, t)
                elif kind == BOOT:
                    self.pool.boot_done(x, t)
                elif kind == OFF:
                    self._maybe_power_off(x, t)
                elif kind == PRIO:
                    recalc = True
                else:
                    backfill_now = True
            if recalc:
                self._recalculate(t)
            if self.changed and self.queue:
                self._main_pass(t)
            self.changed = False
            if backfill_now:
                self.bf_tick = -1
                if self.queue and self.cfg.backfill:
                    self._backfill_pass(t)
                self.bf_changed = False
                self.bf_last = t
                self.bf_cadence = bool(self.queue)
            if self.bf_changed and self.cfg.backfill and self.bf_tick < 0:
                self.bf_tick = self._next_backfill(t)
                self._push(self.bf_tick, BACKFILL, 0)
            if self.progress is not None and self.events % 65536 < 8:
                self.progress(self.done, len(self.w))
        self.pool.finish(max(t, self.t0))
        return BatchResult.build(
            self.w,
            self.req,
            self.start,
            self.end,
            self.alloc,
            self.backfilled,
            self.pool,
            self.t0,
            self.events,
            (self.passes[0], self.passes[1]),
        )

    def _next_backfill(self, t: int) -> int:
        """When Slurm's backfill agent next runs after a change at ``t``.

        Slurm 22.05's agent sleeps ``bf_interval`` after a pass, then polls every second
        until something changed since that pass (src/plugins/sched/backfill/backfill.c,
        ``backfill_agent`` lines 1038-1074, ``_more_work`` 3257-3268). A pass that leaves
        jobs pending has just set their expected start times anew (cleared at its start,
        ``_clear_job_estimates`` 1106-1114; set with ``last_job_update = now``, 2584-2587),
        so while jobs are pending the passes keep a ``bf_interval`` cadence from the last
        one; after a pass that left none, the first change is seen at the next poll, a
        second later. Before this, passes ran on a fixed grid of multiples of
        ``bf_interval``, out of phase with Slurm's by up to ``bf_interval``.
        """
        step = self.cfg.bf_interval_s
        if self.bf_cadence:
            return self.bf_last + step * max(1, -(-(t - self.bf_last) // step))
        return max(self.bf_last + step, t + 1)

    # --- events -------------------------------------------------------------------------
    def _enqueue(self, j: int, t: int) -> None:
        self.eligible_at[j] = t
        if self.cfg.order == "priority":
            self.prio.see(self.prio.users[j])
        bisect.insort(self.queue, self._key(j, t))
        self.changed = self.bf_changed = True
        if self.cfg.order == "priority" and self.prio_tick < 0:
            step = self.cfg.calc_period_s
            self.prio_tick = (t // step + 1) * step
            self._push(self.prio_tick, PRIO, 0)

    def _key(self, j: int, t: int) -> tuple[int, ...]:
        order = self.cfg.order
        if order == "fifo":
            return (self.submit[j], j)
        if order == "sjf":
            return (self.est[j], self.submit[j], j)
        return (-self.tier[j], -self.prio.priority(j, self.eligible_at[j], t), self.submit[j], j)

    def _recalculate(self, t: int) -> None:
        self.prio.tick(t)
        self.queue = sorted(self._key(k[-1], t) for k in self.queue)
        self.changed = self.bf_changed = True
        self.prio_tick = -1
        if self.queue:
            self.prio_tick = t + self.cfg.calc_period_s
            self._push(self.prio_tick, PRIO, 0)

    def _end(self, j: int, t: int) -> None:
        """The job's resources come back; it ended ``completing_s`` earlier."""
        self.end[j] = t - self.cfg.completing_s
        self.done += 1
        self.running.discard(j)
        idle = self.pool.release(j, self.alloc[j], self.c[j], self.m[j], self.g[j], t)
        self.prio.job_ended(j, self.nn[j] * self.c[j], t)
        if self.power is not None:
            for i in idle:
                self._push(t + self.power.suspend_after_s, OFF, i)
        for child in self.children[j]:
            self.unmet[child] -= 1
            if self.unmet[child] == 0 and self.arrived[child]:
                self._enqueue(child, t)
        self.changed = self.bf_changed = True

    def _maybe_power_off(self, i: int, t: int) -> None:
        pool, power = self.pool, self.power
        assert power is not None
        if (
            pool.state[i] == ON
            and not pool.jobs_on[i]
            and pool.idle_since[i] + power.suspend_after_s <= t
        ):
            pool.power_off(i, t)

    def _start(self, j: int, nodes: list[int], t: int, backfill: bool) -> None:
        pool = self.pool
        boot_s = self.power.boot_s if self.power is not None else 0
        was_booting = {i for i in nodes if pool.state[i] == BOOTING}
        ready = pool.allocate(j, nodes, self.c[j], self.m[j], self.g[j], t, boot_s)
        for i in nodes:
            if pool.state[i] == BOOTING and i not in was_booting:
                self._push(pool.ready_at[i], BOOT, i)
        self.start[j] = ready
        self.expected_end[j] = ready + self.est[j]
        self.alloc[j] = nodes
        self.backfilled[j] = backfill
        self.running.add(j)
        self.prio.job_started(j, self.nn[j] * self.c[j], t)
        self._push(ready + self.run_s[j] + self.cfg.completing_s, END, j)

    # --- the schedulers -----------------------------------------------------------------
    def _fit_now(self, j: int, blocked_nodes: set[int]) -> list[int]:
        pool, c, m, g, need = self.pool, self.c[j], self.m[j], self.g[j], self.nn[j]
        fit = [
            i
            for i in self.part_nodes[self.part[j]]
            if pool.fits_now(i, c, m, g) and i not in blocked_nodes
        ]
        if len(fit) < need:
            return []
        by_cpus = pool.free_cpu if self.cfg.node_runs_by_cpus else None
        return pool.pick(fit, need, self.cfg.node_order, c, by_cpus)

    def _main_pass(self, t: int) -> None:
        """Slurm's main loop: once a job cannot start, the rest of its partition waits and its
        partition's nodes are out of reach of lower-priority jobs of other partitions too."""
        self.passes[0] += 1
        blocked: set[int] = set()
        blocked_nodes: set[int] = set()
        started: list[int] = []
        n_parts = len(self.part_nodes)
        for key in self.queue:
            j = key[-1]
            p = self.part[j]
            if p in blocked:
                continue
            nodes = self._fit_now(j, blocked_nodes)
            if nodes:
                self._start(j, nodes, t, backfill=False)
                started.append(j)
            else:
                blocked.add(p)
                blocked_nodes.update(self.part_nodes[p])
                if len(blocked) == n_parts:
                    break
        self._drop_started(started)

    def _backfill_pass(self, t: int) -> None:
        self.passes[1] += 1
        cfg, pool = self.cfg, self.pool
        for j in self.running:  # a job past its estimate is expected until its limit
            if self.expected_end[j] <= t:
                limit = self.limit[j]
                self.expected_end[j] = (
                    self.start[j] + limit if limit >= 0 and self.start[j] + limit > t else t + 1
                )
        plan = Plan(
            pool,
            self.expected_end,
            (self.c, self.m, self.g),
            cfg.bf_whole_nodes,
            (cfg.bf_resolution_s, cfg.bf_end_round_up),
            cfg.bf_will_run_barrier,
        )
        reserved = 0
        started: list[int] = []
        fits: dict[tuple[int, int, int, int], list[int]] = {}  # nodes free now, per shape
        for key in self.queue[: cfg.bf_max_job_test]:
            j = key[-1]
            nodes = self.part_nodes[self.part[j]]
            need, c, m, g, duration = self.nn[j], self.c[j], self.m[j], self.g[j], self.est[j]
            shape = (self.part[j], c, m, g)
            free = fits.get(shape)
            if free is None:
                free = fits[shape] = [i for i in nodes if pool.fits_now(i, c, m, g)]
            fit = plan.nodes_now(free, t, duration, need, c, m, g)
            if fit:
                by_cpus = pool.free_cpu if cfg.node_runs_by_cpus else None
                picked = pool.pick(fit, need, cfg.node_order, c, by_cpus)
                self._start(j, picked, t, backfill=True)
                started.append(j)
                fits.clear()  # free resources changed
                continue
            if reserved < cfg.reservation_depth:
                found = plan.earliest(nodes, t, t + cfg.bf_window_s, duration, need, c, m, g)
                if found is not None:
                    begin, fit = found
                    slot_start, slot_end = self._reserved_slots(begin, duration)
                    then = (
                        [plan.cpus_free_at(i, begin) for i in range(len(pool.cap_cpu))]
                        if cfg.node_runs_by_cpus
                        else None
                    )
                    plan.reserve(
                        pool.pick(fit, need, cfg.node_order, c, then), slot_start, slot_end, c, m, g
                    )
                    reserved += 1
        self._drop_started(started)

    def _reserved_slots(self, begin: int, duration: int) -> tuple[int, int]:
        """The span a reservation holds: ``[begin, begin + duration)`` rounded down to
        ``bf_resolution_s`` and at least one slot long, as Slurm 22.05 records it
        (backfill.c 2858-2864, ``_add_reservation`` 3291-3299), its end rounded up instead
        with ``bf_end_round_up`` (Slurm 23.02 on, ``_set_slot_time``); exact at resolution 1."""
        return plan_slot(begin, duration, self.cfg.bf_resolution_s, self.cfg.bf_end_round_up)

    def _drop_started(self, started: list[int]) -> None:
        if started:
            gone = set(started)
            self.queue = [k for k in self.queue if k[-1] not in gone]


def limits_for(cluster: BatchCluster, w: Workload) -> np.ndarray:
    """Each job's effective limit (``UNLIMITED`` stays -1): for reports of killed jobs."""
    limit = resolve(cluster, w).limit_s
    return np.where(limit < 0, UNLIMITED, limit)
