"""The WASS heuristic: data-locality-aware online placement from the WASS-RAG paper.

A ready task goes to the node that already holds the most bytes of its input files, so the
least data moves; ties (e.g. entry tasks, whose inputs all sit on the shared filesystem) go to
the node with the earliest estimated finish. Ready tasks are taken by decreasing upward rank,
so the workflow's critical path is served first.
"""

from __future__ import annotations

from typing import ClassVar

from policy.dynamic_hosts import host_names
from sim.model import Platform, Workflow
from sim.ranks import upward_rank
from sim.schedule import ClusterView


class WassHeuristic:
    """Most local input bytes first, earliest finish second."""

    name: str = "wass"
    description: ClassVar[str] = "WASS heuristic: most local input bytes, then earliest finish"

    def __init__(self) -> None:
        self._hosts: dict[str, tuple[str, ...]] = {}
        self._rank: dict[str, float] = {}

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self._hosts = host_names(workflow, platform)
        self._rank = upward_rank(workflow, platform)

    def priority(self, task: str) -> float:
        return self._rank[task]

    def choose_node(self, task: str, view: ClusterView) -> str:
        wf = view.workflow
        local: dict[str, int] = dict.fromkeys(self._hosts[task], 0)
        for file_id in wf.task_by_id[task].inputs:
            size = wf.file_by_id[file_id].size
            for location in view.file_locations(file_id):
                if location in local:
                    local[location] += size
        return min(
            self._hosts[task],
            key=lambda n: (-local[n], view.estimate_finish(task, n)),
        )
