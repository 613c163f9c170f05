"""Ranking maths of list schedulers: mean costs, upward/downward ranks, optimistic cost table.

Small pure functions over (workflow, platform), on the lowest floor so that the list
schedulers of ``policy``, the learned policies and the simulator's own ``eft`` baseline
(:mod:`sim.placement`) rank tasks with one formula. Costs follow the simulator's model (as
:mod:`policy.costs` spells out for planning): a task's mean compute time averages over the nodes
that can host it; an edge's mean communication time is the mean over node pairs of the time its
files take (they move in parallel, so the largest file sets it), which is
``mean latency + largest file * mean(1 / bottleneck bandwidth)``.

Two conventions for "mean over node pairs" exist in the wild:

* ``"distinct"`` (Topcuoglu et al. 2002): over ordered pairs of *distinct* nodes, the cost of
  an edge whose endpoints are on different processors.
* ``"saga"`` (SAGA 2.0.2's ``upward_rank``): over SAGA's network edges, i.e. unordered pairs
  *including* each node with itself (cost 0), so the mean shrinks by ``(n - 1) / (n + 1)`` on a
  homogeneous network. Used only to cross-check against SAGA.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from sim.model import Node, Platform, Workflow, compute_time, hosts

PairConvention = Literal["distinct", "saga"]


@dataclass(frozen=True, slots=True)
class CommunicationMeans:
    """Mean latency and mean inverse bottleneck bandwidth over node pairs."""

    latency: float
    inverse_bandwidth: float

    def time(self, size: float) -> float:
        return self.latency + size * self.inverse_bandwidth


def communication_means(
    platform: Platform, convention: PairConvention = "distinct"
) -> CommunicationMeans:
    """Average the pairwise transfer cost model of ``platform`` under ``convention``."""
    nodes = platform.nodes
    inverse = [1.0 / min(a.bandwidth, b.bandwidth) for a, b in combinations(nodes, 2)]
    pairs = len(inverse)
    if convention == "saga":
        pairs += len(nodes)  # self-pairs: zero cost, counted in the mean
    if pairs == 0:  # a single node never communicates
        return CommunicationMeans(0.0, 0.0)
    latency = platform.latency * len(inverse) / pairs
    return CommunicationMeans(latency, sum(inverse) / pairs)


def mean_compute_times(workflow: Workflow, platform: Platform) -> dict[str, float]:
    """Each task's mean compute time over the nodes that can host it (w-bar in HEFT), the
    hosts found once per distinct need (cores, memory, GPUs)."""
    fitting: dict[tuple[int, int, int], tuple[Node, ...]] = {}
    means: dict[str, float] = {}
    for t in workflow.tasks:
        need = (t.cores, t.memory, t.gpus)
        candidates = fitting.get(need)
        if candidates is None:
            candidates = fitting[need] = hosts(t, platform) or platform.nodes
        means[t.id] = sum(compute_time(t, n) for n in candidates) / len(candidates)
    return means


def mean_edge_time(workflow: Workflow, parent: str, child: str, means: CommunicationMeans) -> float:
    """Mean time of the transfers along one edge (c-bar in HEFT); 0 for a control edge."""
    files = workflow.edge_files[(parent, child)]
    if not files:
        return 0.0
    return means.time(max(workflow.file_by_id[f].size for f in files))


def upward_rank(
    workflow: Workflow, platform: Platform, convention: PairConvention = "distinct"
) -> dict[str, float]:
    """rank_u(t) = w(t) + max over children c of (c(t, c) + rank_u(c)).

    Topcuoglu, Hariri, Wu: "Performance-effective and low-complexity task scheduling for
    heterogeneous computing", IEEE TPDS 13(3), 2002, eq. (5).
    """
    means = communication_means(platform, convention)
    compute = mean_compute_times(workflow, platform)
    rank: dict[str, float] = {}
    for task in reversed(workflow.topological_order):
        tail = max(
            (mean_edge_time(workflow, task, c, means) + rank[c] for c in workflow.children[task]),
            default=0.0,
        )
        rank[task] = compute[task] + tail
    return rank


def downward_rank(
    workflow: Workflow, platform: Platform, convention: PairConvention = "distinct"
) -> dict[str, float]:
    """rank_d(t) = max over parents p of (rank_d(p) + w(p) + c(p, t)); 0 for entry tasks.

    Topcuoglu et al. 2002, eq. (6).
    """
    means = communication_means(platform, convention)
    compute = mean_compute_times(workflow, platform)
    rank: dict[str, float] = {}
    for task in workflow.topological_order:
        rank[task] = max(
            (
                rank[p] + compute[p] + mean_edge_time(workflow, p, task, means)
                for p in workflow.parents[task]
            ),
            default=0.0,
        )
    return rank


def saga_downward_rank(workflow: Workflow, platform: Platform) -> dict[str, float]:
    """SAGA 2.0.2's variant: rank_d(t) = max_p (rank_d(p) + c(p, t)) + work(t) / mean speed.

    It counts the task's own work (at the mean node speed) instead of its parent's, and SAGA
    adds a zero-cost super source to graphs with several entry tasks, so those entries get
    ``work / mean speed`` while a unique entry gets 0. Only for the SAGA cross-check.
    """
    means = communication_means(platform, "saga")
    mean_speed = sum(n.speed for n in platform.nodes) / len(platform.nodes)
    several_entries = len(workflow.entry_tasks) > 1
    rank: dict[str, float] = {}
    for task in workflow.topological_order:
        own = workflow.task_by_id[task].work / mean_speed
        parents = workflow.parents[task]
        if not parents:
            rank[task] = own if several_entries else 0.0
            continue
        rank[task] = max(rank[p] + mean_edge_time(workflow, p, task, means) for p in parents)
        rank[task] += own
    return rank


def optimistic_cost_table(workflow: Workflow, platform: Platform) -> dict[tuple[str, str], float]:
    """OCT(t, p) = max over children c of min over nodes q of (OCT(c, q) + w(c, q) + c'(t, c)).

    c'(t, c) is the mean edge time when q != p and 0 otherwise; OCT of an exit task is 0.
    Arabnejad and Barbosa: "List scheduling algorithm for heterogeneous systems by an
    optimistic cost table", IEEE TPDS 25(3), 2014, eq. (7).
    """
    means = communication_means(platform)
    table: dict[tuple[str, str], float] = {}
    for task in reversed(workflow.topological_order):
        for p in platform.nodes:
            worst = 0.0
            for c in workflow.children[task]:
                child = workflow.task_by_id[c]
                edge = mean_edge_time(workflow, task, c, means)
                best = min(
                    table[(c, q.name)]
                    + compute_time(child, q)
                    + (0.0 if q.name == p.name else edge)
                    for q in (hosts(child, platform) or platform.nodes)
                )
                worst = max(worst, best)
            table[(task, p.name)] = worst
    return table


def oct_rank(table: Mapping[tuple[str, str], float], platform: Platform) -> dict[str, float]:
    """rank_oct(t): the mean of OCT(t, p) over nodes (Arabnejad and Barbosa 2014, eq. 8)."""
    sums: dict[str, float] = {}
    for (task, _node), value in table.items():
        sums[task] = sums.get(task, 0.0) + value
    return {task: total / len(platform.nodes) for task, total in sums.items()}
