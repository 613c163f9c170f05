"""A simple built-in dynamic scheduler: earliest estimated finish time (``eft``).

Used where the simulator needs a reasonable schedule without the ``policy`` package (which sits
above ``sim``): the SimGrid cross-check, benchmarks, and the CLI's fallback. Among tasks ready at
once, the one with the longest path to the end goes first: the upward rank of HEFT's paper
(:func:`sim.ranks.upward_rank`, the one HEFT, CPOP and the learned policies use); each task goes
to the node where the view estimates it would finish first.
"""

from __future__ import annotations

from sim.model import Platform, Workflow, node_fits
from sim.ranks import upward_rank
from sim.schedule import ClusterView


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
