"""Backfill planning: when could a job start, and can it start now without delaying anyone?

A pass (Slurm's backfill thread, every ``bf_interval_s``) walks the pending jobs in queue
order. Running jobs are expected to end at their start plus their estimate (the time limit
unless a what-if predicts it). A job that fits now on nodes where it delays no reservation
made earlier in the pass starts now. Otherwise, while fewer than ``reservation_depth`` jobs
hold a reservation, the job gets one: the earliest time within ``bf_window_s`` at which enough
nodes of its partition can host it for its whole estimate, on specific nodes (as Slurm
reserves nodes, not a count). With depth 1 this is EASY backfilling (Lifka 1995; Mu'alem and
Feitelson, IEEE TPDS 2001): a later job may jump ahead only if it leaves the first blocked
job's start where it was.

A node can host a request over ``[t, t + d)`` if at ``t`` and at every reservation start
inside the interval, its capacity minus the running jobs still expected then minus the
reservations active then covers the request (running jobs only release resources, so those
are the only instants where the free amount can drop). With ``bf_whole_nodes`` (Slurm's own
plan) a reservation holds its nodes whole: a node hosts the request only if no reservation on
it overlaps the interval, whatever CPUs the reservation leaves free.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.batch.nodes import NodePool


@dataclass(slots=True)
class Reservation:
    start: int
    end: int
    cpu: int
    mem: int
    gpu: int


def plan_slot(begin: int, duration: int, step: int, round_up: bool = False) -> tuple[int, int]:
    """The span a reservation holds in a plan kept in ``step``-second slots: its start rounded
    down, its end rounded down (Slurm 22.05) or up (``round_up``: Slurm 23.02 on), at least one
    slot long (backfill.c ``_add_reservation``); exact when ``step`` is 1."""
    if step <= 1:
        return begin, begin + duration
    start = begin // step * step
    end = begin + duration + (step - 1 if round_up else 0)
    return start, max(end // step * step, start + step)


WILL_RUN_WINDOW_S = 30
"""cons_tres's first batch window of running jobs' ends (``_will_run_test``'s ``time_window``;
``bf_window_scale`` unset), and the epoch multiple its barrier is aligned to."""


class Plan:
    """The reservations of one backfill pass, per node."""

    def __init__(
        self,
        pool: NodePool,
        expected_end: list[int],
        held: tuple[list[int], list[int], list[int]],
        whole_nodes: bool = False,
        slots: tuple[int, bool] = (1, False),
        will_run_barrier: bool = False,
    ) -> None:
        self.pool = pool
        self.expected_end = expected_end
        self.held_cpu, self.held_mem, self.held_gpu = held
        self.by_node: dict[int, list[Reservation]] = {}
        self.whole_nodes = whole_nodes
        self.slots = slots
        """(bf_resolution, round the end up): how the plan rounds a reservation."""
        self.will_run_barrier = will_run_barrier
        """Batches of ends cut at a 30 s barrier (22.05, 24.11), else end by end (26.05)."""

    def reserve(self, nodes: list[int], start: int, end: int, c: int, m: int, g: int) -> None:
        for i in nodes:
            self.by_node.setdefault(i, []).append(Reservation(start, end, c, m, g))

    def can_host(self, i: int, t: int, duration: int, c: int, m: int, g: int) -> bool:
        """Node ``i`` has ``(c, m, g)`` free over ``[t, t + duration)``."""
        pool = self.pool
        if not pool.fits_empty(i, c, m, g):
            return False
        reservations = self.by_node.get(i, ())
        end = t + duration
        if self.whole_nodes:
            return self._node_free(i, t, end, c, m, g)
        points = [t] + [r.start for r in reservations if t < r.start < end]
        for p in points:
            cpu, mem, gpu = self._left_at(i, p, c, m, g)
            for r in reservations:
                if r.start <= p < r.end:
                    cpu, mem, gpu = cpu - r.cpu, mem - r.mem, gpu - r.gpu
            if cpu < 0 or mem < 0 or gpu < 0:
                return False
        return True

    def _node_free(self, i: int, t: int, end: int, c: int, m: int, g: int) -> bool:
        """Slurm's whole-node plan: no reservation on node ``i`` overlaps ``[t, end]`` (a slot
        that begins at ``end`` counts, as Slurm tests ``begin_time <= end_time``), and the
        running jobs still expected at ``t`` leave ``(c, m, g)`` free (they only end)."""
        if not self._unplanned(i, t, end):
            return False
        return min(self._left_at(i, t, c, m, g)) >= 0

    def cpus_free_at(self, i: int, t: int) -> int:
        """Node ``i``'s CPUs that the running jobs expected at ``t`` leave free."""
        return self._left_at(i, t, 0, 0, 0)[0]

    def _left_at(self, i: int, p: int, c: int, m: int, g: int) -> tuple[int, int, int]:
        """Node ``i``'s capacity less ``(c, m, g)`` and the running jobs expected at ``p``."""
        pool = self.pool
        cpu, mem, gpu = pool.cap_cpu[i] - c, pool.cap_mem[i] - m, pool.cap_gpu[i] - g
        for job in pool.jobs_on[i]:
            if self.expected_end[job] > p:
                cpu -= self.held_cpu[job]
                mem -= self.held_mem[job]
                gpu -= self.held_gpu[job]
        return cpu, mem, gpu

    def nodes_now(
        self, fit: list[int], now: int, duration: int, need: int, c: int, m: int, g: int
    ) -> list[int]:
        """Of ``fit`` (nodes with the request free now), those where starting now delays no
        reservation; empty if fewer than ``need``."""
        if len(fit) < need:
            return []
        if self.by_node:
            fit = [
                i for i in fit if i not in self.by_node or self.can_host(i, now, duration, c, m, g)
            ]
        return fit if len(fit) >= need else []

    def free_from(self, i: int, now: int, c: int, m: int, g: int) -> int:
        """When running jobs' expected ends leave ``(c, m, g)`` free on node ``i`` (reservations
        aside); -1 if never. Free resources only grow with time, so this is a threshold."""
        pool = self.pool
        cpu, mem, gpu = pool.free_cpu[i], pool.free_mem[i], pool.free_gpu[i]
        if cpu >= c and mem >= m and gpu >= g:
            return now
        if not pool.fits_empty(i, c, m, g):
            return -1
        ends = sorted((self.expected_end[j], j) for j in pool.jobs_on[i])
        for end, j in ends:
            cpu, mem, gpu = cpu + self.held_cpu[j], mem + self.held_mem[j], gpu + self.held_gpu[j]
            if cpu >= c and mem >= m and gpu >= g:
                return max(end, now)
        return -1

    def earliest(
        self,
        nodes: list[int],
        now: int,
        horizon: int,
        duration: int,
        need: int,
        c: int,
        m: int,
        g: int,
    ) -> tuple[int, list[int]] | None:
        """The earliest start within ``horizon`` and the nodes that can host it then.

        A node without reservations can host the job from its :meth:`free_from` time on; a
        node with reservations is checked at each candidate time (its availability can end).
        """
        if self.whole_nodes:
            return self._earliest_whole(nodes, (now, horizon, duration), need, (c, m, g))
        plain: list[tuple[int, int]] = []
        reserved: list[int] = []
        times = {now}
        for i in nodes:
            if i in self.by_node:
                reserved.append(i)
                times.update(r.end for r in self.by_node[i])
                times.update(self.expected_end[j] for j in self.pool.jobs_on[i])
            else:
                t = self.free_from(i, now, c, m, g)
                if t >= 0:
                    plain.append((t, i))
                    times.add(t)
        plain.sort()
        ready = 0
        for t in sorted(x for x in times if x <= horizon):
            while ready < len(plain) and plain[ready][0] <= t:
                ready += 1
            hosts = [i for i in reserved if self.can_host(i, t, duration, c, m, g)]
            if ready + len(hosts) >= need:
                return t, [i for _, i in plain[:ready]] + hosts
        return None

    def _earliest_whole(
        self, nodes: list[int], span: tuple[int, int, int], need: int, req: tuple[int, int, int]
    ) -> tuple[int, list[int]] | None:
        """:meth:`earliest` (``span``: now, horizon, duration; ``req``: the request per node)
        as Slurm searches for a blocked job's start in a whole-node plan (backfill.c
        ``_attempt_backfill``, its ``TRY_LATER`` loop).

        From a test time (now, then each time planned nodes come back, ``later_start``), the
        job may use the nodes free in every slot that overlaps ``[test, test + limit]``; on
        them the running jobs' ends decide its start (``select_g_job_test`` in will-run
        mode), which may fall after the test time. That start holds if it comes before the
        next test time and its slot-rounded span overlaps no reservation on the nodes chosen
        (``_test_resv_overlap``); else the search goes on from there.
        """
        now, horizon, duration = span
        step, round_up = self.slots
        tests = sorted(
            {now}
            | {r.end for i in nodes for r in self.by_node.get(i, ()) if now < r.end <= horizon}
        )
        k = 0
        while k < len(tests):
            test = tests[k]
            k += 1
            usable = [i for i in nodes if self._unplanned(i, test, test + duration)]
            found = self._will_run(usable, need, req)
            if found is None or found[0] > horizon:
                continue
            start, chosen = max(found[0], test), found[1]
            if k < len(tests) and start > tests[k]:
                continue  # try later, when planned nodes come back
            first, last = plan_slot(start, duration, step, round_up)
            free = [i for i in chosen if self._unplanned(i, first, last, strict=True)]
            if len(free) >= need:
                return start, free
            if start > test:  # its rounded span overlaps the plan: try from its start
                tests.insert(k, start)
        return None

    def _will_run(
        self, usable: list[int], need: int, req: tuple[int, int, int]
    ) -> tuple[int, list[int]] | None:
        """When and on which of ``usable`` the running jobs' ends let the request start, as
        cons_tres's will-run test finds it: the running jobs on ``usable`` are taken off in
        order of their expected end until the request fits; the start is the last end taken
        off, and every node then free is a candidate.

        With ``will_run_barrier`` (``_will_run_test``, Slurm 22.05 and 24.11) they go a batch
        at a time, up to a barrier fixed by the first of them (on any usable node, one too
        small for the request included): its end rounded up to the next multiple of 30 s in
        epoch time (an end on a multiple moves 30 s on), plus a window of 30 s, doubled after
        each batch that was not enough until it reaches the next end. So the start can be a
        later end than the one that frees the node: on 22.05.8 and 24.11.5 ``sbatch
        --test-only -n1`` with n1 freed at 09 s past a whole minute and n4's 8 CPUs at 59 s
        said 59 s, and a 4-CPU request with only the 2-CPU nodes ending at 00 s set the
        barrier that put n3's end (+35 s) in the first batch and n4's (+64 s) out of it.
        Without it, end by end (jobs ending in the same second together), as 26.05.5 answered
        the same two cases: 09 s, and n3's end."""
        pool = self.pool
        c, m, g = req
        free = {i: [pool.free_cpu[i], pool.free_mem[i], pool.free_gpu[i]] for i in usable}

        def hosts() -> list[int]:
            return [
                i
                for i in usable
                if pool.fits_empty(i, c, m, g)
                and free[i][0] >= c
                and free[i][1] >= m
                and free[i][2] >= g
            ]

        ready = hosts()
        if len(ready) >= need:
            return -1, ready
        ends = sorted((self.expected_end[j], j, i) for i in usable for j in pool.jobs_on[i])
        if not ends:
            return None
        window = WILL_RUN_WINDOW_S if self.will_run_barrier else 0
        barrier = ends[0][0] + window - ends[0][0] % window if window else 0
        k = 0
        while k < len(ends):
            if not window:  # end by end
                barrier = ends[k][0]
            while True:  # the batch: at least one end, then those before the barrier's window
                last, j, i = ends[k]
                held = free[i]
                held[0] += self.held_cpu[j]
                held[1] += self.held_mem[j]
                held[2] += self.held_gpu[j]
                k += 1
                if k == len(ends) or ends[k][0] > barrier + window:
                    break
            window *= 2
            while window and k < len(ends) and ends[k][0] > barrier + window:
                window *= 2
            ready = hosts()
            if len(ready) >= need:
                return last, ready
        return None

    def _unplanned(self, i: int, begin: int, end: int, strict: bool = False) -> bool:
        """No reservation on node ``i`` overlaps ``[begin, end]`` (``strict``: ``[begin,
        end)``, as ``_test_resv_overlap`` compares a slot-rounded span)."""
        for r in self.by_node.get(i, ()):
            if r.end > begin and (r.start < end if strict else r.start <= end):
                return False
        return True
