"""Tiny workflows and platforms, built directly with sim.model, for the simulator's tests."""

from __future__ import annotations

from sim.model import File, Node, Platform, Task, Workflow
from sim.schedule import StaticSchedule

GB = 1_000_000_000


def node(name: str, cores: int = 1, bandwidth: float = 1e9, **kw: float) -> Node:
    """A node with round numbers: 1 Gflop/s per core, 1 GB/s NIC unless told otherwise."""
    return Node(name, cores, speed=1e9, bandwidth=bandwidth, **kw)  # type: ignore[arg-type]


def platform(*nodes: Node, latency: float = 0.0, fs_bandwidth: float = 1e9) -> Platform:
    return Platform("test-platform", nodes, latency=latency, shared_fs_bandwidth=fs_bandwidth)


def workflow(tasks: list[Task], files: dict[str, int], name: str = "test-wf") -> Workflow:
    return Workflow(name, tuple(tasks), tuple(File(f, s) for f, s in files.items()))


def pinned(assignment: dict[str, str], order: dict[str, list[str]] | None = None) -> StaticSchedule:
    """A static schedule; per-node order defaults to the assignment's insertion order."""
    if order is None:
        order = {}
        for task, n in assignment.items():
            order.setdefault(n, []).append(task)
    return StaticSchedule(assignment, {n: tuple(ts) for n, ts in order.items()}, "pinned")
