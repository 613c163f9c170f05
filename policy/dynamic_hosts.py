"""Shared facts for the online (dynamic) schedulers: which nodes can host each task."""

from __future__ import annotations

from sim.model import Platform, Workflow, check_fits, hosts


def host_names(workflow: Workflow, platform: Platform) -> dict[str, tuple[str, ...]]:
    """Task id -> names of the nodes that can ever run it, in platform order."""
    check_fits(workflow, platform)
    return {t.id: tuple(n.name for n in hosts(t, platform)) for t in workflow.tasks}
