"""The nodes' state during a batch simulation: free resources, running jobs, power states.

Allocation follows Slurm's cons_tres with CR_Core_Memory in simplified form: a job gets
``nnodes`` nodes, each giving it ``cpus_per_node`` CPUs, ``mem_per_node`` bytes and
``gpus_per_node`` GPUs; nodes are shared between jobs down to the CPU. Among the nodes that
fit, ``best_fit`` takes the powered-on nodes with the fewest free CPUs first (then node
order), ``first_fit`` node order; powered-down nodes come last either way.

The pool also integrates each node's power over time (:mod:`sim.batch.energy`): every change
of a node's allocation or power state first charges the energy since the previous change.
"""

from __future__ import annotations

from sim.batch.energy import PowerProfile
from sim.batch.model import BatchCluster

ON, OFF, BOOTING = 0, 1, 2


class NodePool:
    """Free CPUs, memory and GPUs per node, the jobs on each node and its power state."""

    def __init__(
        self,
        cluster: BatchCluster,
        partition_nodes: list[list[int]],
        profiles: list[PowerProfile],
        start: int,
    ) -> None:
        self.cap_cpu = [n.cpus for n in cluster.nodes]
        self.cap_mem = [n.memory for n in cluster.nodes]
        self.cap_gpu = [n.gpus for n in cluster.nodes]
        self.free_cpu = list(self.cap_cpu)
        self.free_mem = list(self.cap_mem)
        self.free_gpu = list(self.cap_gpu)
        self.jobs_on: list[list[int]] = [[] for _ in cluster.nodes]
        self.partition_nodes = partition_nodes
        self.state = [ON] * len(cluster.nodes)
        self.ready_at = [start] * len(cluster.nodes)
        self.idle_since = [start] * len(cluster.nodes)
        self.profiles = profiles
        self.energy_j = [0.0] * len(cluster.nodes)
        self.off_s = [0] * len(cluster.nodes)
        self.busy_cpu_s = [0] * len(cluster.nodes)
        self._last = [start] * len(cluster.nodes)

    # --- fitting and choosing -----------------------------------------------------------
    def fits_now(self, i: int, c: int, m: int, g: int) -> bool:
        return self.free_cpu[i] >= c and self.free_mem[i] >= m and self.free_gpu[i] >= g

    def fits_empty(self, i: int, c: int, m: int, g: int) -> bool:
        return self.cap_cpu[i] >= c and self.cap_mem[i] >= m and self.cap_gpu[i] >= g

    def choose(self, candidates: list[int], count: int, best_fit: bool) -> list[int]:
        """``count`` of ``candidates`` in allocation preference order."""
        state, free = self.state, self.free_cpu
        if best_fit:
            return sorted(candidates, key=lambda i: (state[i] == OFF, free[i], i))[:count]
        return sorted(candidates, key=lambda i: (state[i] == OFF, 0, i))[:count]

    def pick(self, candidates: list[int], count: int, order: str) -> list[int]:
        """``count`` of ``candidates`` as ``order`` (a ``SchedulerConfig.node_order``) picks."""
        if order == "consecutive":
            return consecutive(candidates, count)
        return self.choose(candidates, count, order == "best_fit")

    # --- allocation ---------------------------------------------------------------------
    def allocate(
        self, job: int, nodes: list[int], c: int, m: int, g: int, now: int, boot_s: int
    ) -> int:
        """Take the resources; returns when the job can run (later if a node must boot)."""
        ready = now
        for i in nodes:
            self._charge(i, now)
            if self.state[i] == OFF:
                self.state[i] = BOOTING
                self.ready_at[i] = now + boot_s
            if self.state[i] == BOOTING:
                ready = max(ready, self.ready_at[i])
            self.free_cpu[i] -= c
            self.free_mem[i] -= m
            self.free_gpu[i] -= g
            self.jobs_on[i].append(job)
        return ready

    def release(self, job: int, nodes: list[int], c: int, m: int, g: int, now: int) -> list[int]:
        """Give the resources back; returns the nodes left with no job."""
        idle = []
        for i in nodes:
            self._charge(i, now)
            self.free_cpu[i] += c
            self.free_mem[i] += m
            self.free_gpu[i] += g
            self.jobs_on[i].remove(job)
            if not self.jobs_on[i]:
                self.idle_since[i] = now
                idle.append(i)
        return idle

    def boot_done(self, i: int, now: int) -> None:
        if self.state[i] == BOOTING and self.ready_at[i] <= now:
            self._charge(i, now)
            self.state[i] = ON

    def power_off(self, i: int, now: int) -> None:
        self._charge(i, now)
        self.state[i] = OFF

    # --- energy -------------------------------------------------------------------------
    def power_w(self, i: int) -> float:
        p = self.profiles[i]
        if self.state[i] == OFF:
            return p.off_w
        if self.state[i] == BOOTING:
            return p.boot_w
        cpu_share = (self.cap_cpu[i] - self.free_cpu[i]) / self.cap_cpu[i]
        return p.idle_w + p.cpu_w * cpu_share + p.gpu_w * (self.cap_gpu[i] - self.free_gpu[i])

    def _charge(self, i: int, now: int) -> None:
        dt = now - self._last[i]
        if dt > 0:
            self.energy_j[i] += self.power_w(i) * dt
            self.busy_cpu_s[i] += (self.cap_cpu[i] - self.free_cpu[i]) * dt
            if self.state[i] == OFF:
                self.off_s[i] += dt
        self._last[i] = now

    def finish(self, now: int) -> None:
        """Charge every node up to ``now`` (the end of the simulated period)."""
        for i in range(len(self.cap_cpu)):
            self._charge(i, now)


def consecutive(candidates: list[int], count: int) -> list[int]:
    """Slurm's choice of ``count`` nodes among ``candidates`` (each able to host the job's
    per-node request; cons_tres ``_eval_nodes_consec``): the candidates form runs of
    consecutive node indices; the shortest run with enough nodes gives them, its first ones
    (each node offers the job its per-node request, so runs compare by length; the first of
    equal runs wins); if no run is long enough, the longest is taken whole and the search
    goes on for the rest. Measured on the local cluster (sacct NodeList against the free CPUs
    at each start): 61 of 64 placements, against 58 for the fewest-free-CPUs best fit, and
    both two-node jobs best fit placed elsewhere."""
    runs: list[list[int]] = []
    for i in sorted(candidates):
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    chosen: list[int] = []
    need = count
    while need > 0 and runs:
        enough = [r for r in runs if len(r) >= need]
        if enough:
            run = min(enough, key=len)
            chosen += run[:need]
            break
        run = max(runs, key=len)
        chosen += run
        need -= len(run)
        runs.remove(run)
    return sorted(chosen)
