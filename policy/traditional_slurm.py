"""Traditional Slurm: the workflow-agnostic baseline of the WASS-RAG paper.

Each task is an independent job submitted when its parents finish, in submission order (first
come, first served; simultaneous submissions by job id, i.e. declaration order). It goes to the
first node in the partition with enough free cores right now; when none has, to the node that
frees up earliest. Where the input data sits plays no part.
"""

from __future__ import annotations

from typing import ClassVar

from policy.dynamic_hosts import host_names
from sim.model import Platform, Workflow
from sim.schedule import ClusterView


class TraditionalSlurm:
    """First-come first-served, first node with free cores, ignoring data location."""

    name: str = "slurm"
    description: ClassVar[str] = "Traditional Slurm: FCFS jobs, first node with free cores"

    def __init__(self) -> None:
        self._hosts: dict[str, tuple[str, ...]] = {}
        self._job_id: dict[str, int] = {}

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self._hosts = host_names(workflow, platform)
        self._job_id = {t.id: i for i, t in enumerate(workflow.tasks)}

    def priority(self, task: str) -> float:
        return -float(self._job_id[task])

    def choose_node(self, task: str, view: ClusterView) -> str:
        cores = view.workflow.task_by_id[task].cores
        candidates = self._hosts[task]
        for node in candidates:
            if view.free_cores(node) >= cores:
                return node
        return min(candidates, key=view.available_time)
