"""Schedule quality metrics as pure functions of a result, its workflow and its platform.

Lower bounds hold for every schedule under our execution model, so ``makespan >= lower_bound``
is an invariant the tests check:

* critical path: the longest dependency chain with each task on the fastest node that can host
  it and zero communication;
* work: total work divided by the platform's aggregate compute rate (every core busy).

SLR (schedule length ratio) is makespan over the critical-path bound; speedup is the best
sequential time (one task at a time, each on the fastest node that can host it) over makespan;
efficiency is speedup per node.
"""

from __future__ import annotations

from typing import Any

from sim.model import Platform, Task, Workflow, node_fits
from sim.schedule import SimResult


def makespan(result: SimResult) -> float:
    """Time from the start of the run to the end of its last task or transfer."""
    return result.makespan


def fastest_runtime(task: Task, platform: Platform) -> float:
    """The task's compute time on the fastest node able to host it."""
    speed = max((n.speed for n in platform.nodes if node_fits(task, n)), default=0.0)
    if speed <= 0.0:
        raise ValueError(f"task {task.id!r} fits no node of {platform.name!r}")
    return task.work / (speed * task.cores)


def critical_path_bound(workflow: Workflow, platform: Platform) -> float:
    """Longest chain of fastest-node compute times, communication free."""
    finish: dict[str, float] = {}
    for task_id in workflow.topological_order:
        task = workflow.task_by_id[task_id]
        start = max((finish[p] for p in workflow.parents[task_id]), default=0.0)
        finish[task_id] = start + fastest_runtime(task, platform)
    return max(finish.values(), default=0.0)


def work_bound(workflow: Workflow, platform: Platform) -> float:
    """Total work over aggregate compute rate: the makespan if every core were always busy."""
    return workflow.total_work / platform.total_capacity


def lower_bound(workflow: Workflow, platform: Platform) -> float:
    """The tighter of the critical-path and work bounds."""
    return max(critical_path_bound(workflow, platform), work_bound(workflow, platform))


def sequential_time(workflow: Workflow, platform: Platform) -> float:
    """Tasks one after another, each on the fastest node able to host it, no communication."""
    return sum(fastest_runtime(t, platform) for t in workflow.tasks)


def slr(result: SimResult, workflow: Workflow, platform: Platform) -> float:
    """Schedule length ratio: makespan / critical-path bound (>= 1; lower is better)."""
    bound = critical_path_bound(workflow, platform)
    return result.makespan / bound if bound > 0 else 1.0


def speedup(result: SimResult, workflow: Workflow, platform: Platform) -> float:
    """Best sequential time / makespan."""
    return sequential_time(workflow, platform) / result.makespan if result.makespan > 0 else 1.0


def efficiency(result: SimResult, workflow: Workflow, platform: Platform) -> float:
    """Speedup per node."""
    return speedup(result, workflow, platform) / len(platform.nodes)


def utilization(result: SimResult, platform: Platform) -> dict[str, float]:
    """Per node, reserved core-seconds over available core-seconds during the makespan."""
    if result.makespan <= 0:
        return {n.name: 0.0 for n in platform.nodes}
    busy = result.node_busy_core_seconds
    return {n.name: busy.get(n.name, 0.0) / (n.cores * result.makespan) for n in platform.nodes}


def mean_utilization(result: SimResult, platform: Platform) -> float:
    """Reserved core-seconds over all core-seconds of the platform during the makespan."""
    if result.makespan <= 0:
        return 0.0
    busy = sum(result.node_busy_core_seconds.values())
    return busy / (platform.total_cores * result.makespan)


def mean_wait(result: SimResult) -> float:
    """Mean time from a task being ready (parents done) to its start."""
    return result.mean_wait


def summary(result: SimResult, workflow: Workflow, platform: Platform) -> dict[str, Any]:
    """Every metric of one run, JSON-ready (what ``wass-chat simulate --json`` prints)."""
    return {
        "workflow": result.workflow,
        "platform": result.platform,
        "scheduler": result.scheduler,
        "network_model": result.network_model,
        "backend": result.backend,
        "tasks": len(result.tasks),
        "makespan": result.makespan,
        "critical_path_bound": critical_path_bound(workflow, platform),
        "work_bound": work_bound(workflow, platform),
        "slr": slr(result, workflow, platform),
        "speedup": speedup(result, workflow, platform),
        "efficiency": efficiency(result, workflow, platform),
        "mean_utilization": mean_utilization(result, platform),
        "utilization": utilization(result, platform),
        "mean_wait": result.mean_wait,
        "transfers": len(result.transfers),
        "cross_node_bytes": result.cross_node_bytes,
        "energy_joules": result.energy,
    }
