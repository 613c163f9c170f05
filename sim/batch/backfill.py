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
are the only instants where the free amount can drop).
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


class Plan:
    """The reservations of one backfill pass, per node."""

    def __init__(
        self, pool: NodePool, expected_end: list[int], held: tuple[list[int], list[int], list[int]]
    ) -> None:
        self.pool = pool
        self.expected_end = expected_end
        self.held_cpu, self.held_mem, self.held_gpu = held
        self.by_node: dict[int, list[Reservation]] = {}

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
        points = [t] + [r.start for r in reservations if t < r.start < end]
        for p in points:
            cpu, mem, gpu = pool.cap_cpu[i] - c, pool.cap_mem[i] - m, pool.cap_gpu[i] - g
            for job in pool.jobs_on[i]:
                if self.expected_end[job] > p:
                    cpu -= self.held_cpu[job]
                    mem -= self.held_mem[job]
                    gpu -= self.held_gpu[job]
            for r in reservations:
                if r.start <= p < r.end:
                    cpu, mem, gpu = cpu - r.cpu, mem - r.mem, gpu - r.gpu
            if cpu < 0 or mem < 0 or gpu < 0:
                return False
        return True

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
