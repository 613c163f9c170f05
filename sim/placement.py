"""A simple built-in dynamic scheduler: earliest estimated finish time (``eft``).

Used where the simulator needs a reasonable schedule without the ``policy`` package (which sits
above ``sim``): the SimGrid cross-check, benchmarks, and the CLI's fallback. Among tasks ready at
once, the one with the longest path to the end (upward rank, Topcuoglu et al., "Performance-
effective and low-complexity task scheduling for heterogeneous computing", IEEE TPDS 2002) goes
first; each task goes to the node where the view estimates it would finish first.
"""

from __future__ import annotations

from sim.model import Platform, Workflow, node_fits
from sim.schedule import ClusterView


def upward_rank(workflow: Workflow, platform: Platform) -> dict[str, float]:
    """Mean compute time plus the longest mean-cost path to an exit task, per task."""
    mean_speed = sum(n.speed for n in platform.nodes) / len(platform.nodes)
    mean_bandwidth = sum(n.bandwidth for n in platform.nodes) / len(platform.nodes)
    rank: dict[str, float] = {}
    for task_id in reversed(workflow.topological_order):
        task = workflow.task_by_id[task_id]
        tail = 0.0
        for child in workflow.children[task_id]:
            comm = workflow.edge_bytes(task_id, child) / mean_bandwidth
            tail = max(tail, comm + rank[child])
        rank[task_id] = task.work / (mean_speed * task.cores) + tail
    return rank


class EarliestFinishPlacement:
    """Place each ready task on the node with the earliest estimated finish (ties: node order)."""

    name = "eft"

    def __init__(self) -> None:
        self._rank: dict[str, float] = {}
        self._candidates: dict[str, tuple[tuple[int, str], ...]] = {}

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self._rank = upward_rank(workflow, platform)
        # Nodes that fit, per distinct (cores, memory, GPUs) need: a workflow has few of them.
        fitting: dict[tuple[int, int, int], tuple[tuple[int, str], ...]] = {}
        self._candidates = {}
        for t in workflow.tasks:
            need = (t.cores, t.memory, t.gpus)
            nodes = fitting.get(need)
            if nodes is None:
                nodes = fitting[need] = tuple(
                    (i, n.name) for i, n in enumerate(platform.nodes) if node_fits(t, n)
                )
            self._candidates[t.id] = nodes

    def priority(self, task: str) -> float:
        return self._rank[task]

    def choose_node(self, task: str, view: ClusterView) -> str:
        best, best_finish = "", float("inf")
        finishes = view.estimate_finish_all(task)
        for index, node in self._candidates[task]:
            finish = finishes[index]
            if finish < best_finish:
                best, best_finish = node, finish
        return best
