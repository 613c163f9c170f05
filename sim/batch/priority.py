"""Slurm's multifactor job priority in simplified form, and the queue orders built on it.

priority = w_age * min(age / max_age, 1) + w_fairshare * F(user) + w_size * size
         + w_partition * PriorityJobFactor / max + w_qos * QOS priority / max,
truncated to an integer as Slurm stores it. ``size`` is the mean of the job's node and
CPU fractions of the cluster (1 - that with ``favor_small``), as Slurm 22.05 computes it
(checked with sprio on the local cluster: a 1-CPU job on 4 nodes / 16 CPUs gets
1000 x (1/4 + 1/16) / 2). ``F`` is classic fair share, ``2^(-U/S)``: ``U`` the user's share
of the decayed usage (CPU-seconds, half-life ``decay_half_life_s``), ``S`` the user's share of the
shares, equal for every user seen so far. Slurm 22.05 defaults to the Fair Tree algorithm,
which ranks associations instead; with one account level both favour the users who used
least. Not in Slurm: ``estimate``, a weight on log2 of the job's runtime estimate (over
:data:`ESTIMATE_LOG2_SCALE`), which the learned scheduler uses (negative favours short jobs).
Priorities are recomputed every ``calc_period_s`` (PriorityCalcPeriod) and at
submission, as Slurm does.
"""

from __future__ import annotations

import math

import numpy as np

from sim.batch.config import SchedulerConfig
from sim.batch.model import BatchCluster, Workload

ESTIMATE_LOG2_SCALE = 28.0
"""log2 of ~8.5 years in seconds: the estimate factor log2(estimate) / this lies in [0, 1]."""


class PriorityModel:
    """Priorities and fair-share usage over one simulation."""

    def __init__(
        self,
        cfg: SchedulerConfig,
        cluster: BatchCluster,
        w: Workload,
        part_of_job: np.ndarray,
        estimate_s: np.ndarray | None = None,
    ) -> None:
        """``estimate_s``: the scheduler's estimates as the engine resolved them (capped by
        the limit); the workload's column when not given."""
        weights = cfg.weights
        self.weights = weights
        estimate_s = w.estimate_s if estimate_s is None else estimate_s
        n_nodes = len(cluster.nodes)
        total_cpus = cluster.total_cpus
        node_frac = w.nnodes / max(n_nodes, 1)
        cpu_frac = (w.nnodes * w.cpus_per_node) / max(total_cpus, 1)
        size = np.clip((node_frac + cpu_frac) / 2.0, 0.0, 1.0)
        if weights.favor_small:
            size = 1.0 - size
        factors = np.array([p.priority_job_factor for p in cluster.partitions], np.float64)
        part = factors[part_of_job] / max(float(factors.max()), 1.0) if len(factors) else 0.0
        qos_of = dict(weights.qos_priority)
        qos_values = np.array([qos_of.get(name, 0) for name in w.qos_names], np.float64)
        top = max(float(qos_values.max()) if len(qos_values) else 0.0, 0.0)
        qos = qos_values[w.qos] / top if top > 0 else np.zeros(len(w))
        static = weights.job_size * size + weights.partition * part + weights.qos * qos
        if weights.estimate:
            log_estimate = (
                np.log2(np.maximum(estimate_s, 1).astype(np.float64)) / ESTIMATE_LOG2_SCALE
            )
            static = static + weights.estimate * log_estimate
        self.static: list[float] = np.asarray(static, np.float64).tolist()
        self.users = w.user.tolist()
        self.usage = [0.0] * len(w.users)
        self.running_cpus = [0] * len(w.users)
        self.seen = [False] * len(w.users)
        self.n_seen = 0
        self.last_tick = 0

    def see(self, user: int) -> None:
        if not self.seen[user]:
            self.seen[user] = True
            self.n_seen += 1

    def fairshare(self, user: int) -> float:
        """2^(-U/S): 1 for a user with no usage while others have some, 0.5 at exactly their
        share (and for everyone before anyone used anything)."""
        total = sum(self.usage)
        if total <= 0.0 or self.n_seen == 0:
            return 0.5
        share = max(self.usage[user], 0.0) / total
        return math.pow(2.0, -share * self.n_seen)

    def priority(self, job: int, eligible_s: int, now: int) -> int:
        wts = self.weights
        value = self.static[job]
        if wts.age:
            value += (
                wts.age * min((now - eligible_s) / wts.max_age_s, 1.0)
                if wts.max_age_s > 0
                else wts.age
            )
        if wts.fairshare:
            value += wts.fairshare * self.fairshare(self.users[job])
        return int(value)

    # --- usage: charged continuously, in CPU-seconds ------------------------------------
    def job_started(self, job: int, cpus: int, now: int) -> None:
        user = self.users[job]
        self.running_cpus[user] += cpus
        self.usage[user] -= cpus * (now - self.last_tick)

    def job_ended(self, job: int, cpus: int, now: int) -> None:
        user = self.users[job]
        self.running_cpus[user] -= cpus
        self.usage[user] += cpus * (now - self.last_tick)

    def tick(self, now: int) -> None:
        """Decay past usage and charge the running jobs since the last tick."""
        dt = now - self.last_tick
        half = self.weights.decay_half_life_s
        decay = math.pow(0.5, dt / half) if half > 0 else 1.0
        self.usage = [
            u * decay + r * dt for u, r in zip(self.usage, self.running_cpus, strict=True)
        ]
        self.last_tick = now
