"""Is a replay's schedule possible at all? Checks any scheduler's result, learned ones included.

A schedule is valid when every started job starts no earlier than its submission and
eligibility and after every job it depends on has ended, holds exactly ``nnodes`` distinct
nodes of its partition, and no node's CPUs, memory or GPUs are ever allocated beyond its
capacity (a job holds its resources from its start to its end plus ``completing_s``).
"""

from __future__ import annotations

import numpy as np

from sim.batch.model import BatchCluster, Workload
from sim.batch.requests import resolve
from sim.batch.result import BatchResult


def schedule_problems(
    cluster: BatchCluster, w: Workload, result: BatchResult, completing_s: int = 0, limit: int = 20
) -> list[str]:
    """Up to ``limit`` problems of ``result`` as one line each; empty when it is valid."""
    problems: list[str] = []
    start, end = result.start_s, result.end_s
    ran = start >= 0
    for j in np.flatnonzero(ran & ((start < w.submit_s) | (start < w.earliest_s))):
        problems.append(f"job {w.job_ids[j]} starts at {start[j]} before it may")
    for j in np.flatnonzero(ran):
        for parent in w.parents(int(j)).tolist():
            if end[parent] < 0 or start[j] < end[parent]:
                problems.append(f"job {w.job_ids[j]} starts before its dependency ends")
    part = resolve(cluster, w).partition
    members = [set(cluster.node_index_of(p.nodes)) for p in cluster.partitions]
    for j in np.flatnonzero(ran):
        nodes = result.nodes_of(int(j))
        if len(set(nodes)) != w.nnodes[j] or not set(nodes) <= members[part[j]]:
            problems.append(f"job {w.job_ids[j]} holds {nodes}, not {w.nnodes[j]} of its nodes")
    problems += _over_capacity(cluster, w, result, completing_s)
    return problems[:limit]


def _over_capacity(
    cluster: BatchCluster, w: Workload, result: BatchResult, completing_s: int
) -> list[str]:
    """Sweep each node's allocations in time (releases before starts at the same second)."""
    jobs = np.repeat(np.arange(len(w)), np.diff(result.alloc_ptr))
    nodes = result.alloc_nodes
    if not len(jobs):
        return []
    begin, finish = result.start_s[jobs], result.end_s[jobs] + completing_s
    node = np.concatenate([nodes, nodes])
    time = np.concatenate([begin, finish])
    is_start = np.concatenate([np.ones(len(jobs), np.int64), np.zeros(len(jobs), np.int64)])
    sign = np.where(is_start == 1, 1, -1)
    order = np.lexsort((is_start, time, node))
    problems = []
    for name, per_job, cap in (
        ("CPUs", w.cpus_per_node, [n.cpus for n in cluster.nodes]),
        ("memory", w.mem_per_node, [n.memory for n in cluster.nodes]),
        ("GPUs", w.gpus_per_node, [n.gpus for n in cluster.nodes]),
    ):
        amount = (np.concatenate([per_job[jobs], per_job[jobs]]) * sign)[order]
        sorted_nodes = node[order]
        level = np.cumsum(amount)
        first_of_node = np.r_[0, np.flatnonzero(np.diff(sorted_nodes)) + 1]
        offset = np.repeat(
            np.r_[0, level[first_of_node[1:] - 1]], np.diff(np.r_[first_of_node, len(level)])
        )
        used = level - offset
        over = np.flatnonzero(used > np.asarray(cap)[sorted_nodes])
        for k in over[:5]:
            problems.append(
                f"node {cluster.nodes[sorted_nodes[k]].name} holds {used[k]} {name} "
                f"at {time[order][k]}, more than it has"
            )
    return problems
