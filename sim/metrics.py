"""Schedule quality metrics, the one definition: makespan, lower bounds, SLR, speedup, efficiency.

``wass-chat simulate``, ``wass-chat bench`` and the knowledge base's case records all compute
them here, so one run gets the same figures wherever it is reported.

SLR, speedup and efficiency follow Topcuoglu, Hariri and Wu, "Performance-effective and
low-complexity task scheduling for heterogeneous computing", IEEE TPDS 13(3), 2002, section 5.1:

* SLR (schedule length ratio) = makespan / the critical path's length when each task takes its
  minimum compute time over the nodes and communication costs nothing (their CP_MIN). No
  schedule beats that path, so SLR >= 1; lower is better.
* speedup = sequential time / makespan, the sequential time being every task run one after
  another on the single node that does them all fastest;
* efficiency = speedup / number of nodes.

Our nodes have several cores and a task reserves ``cores`` of them: its compute time on a node
is :func:`sim.model.compute_time` (``work / (speed * cores)``, or on the node's GPUs when it uses
them), and only the nodes able to host it (cores, memory, GPUs) count. A task released later
(its workflow arrived then) starts its path no earlier than its release.
When no single node can host every task, the sequential time runs each task on its own fastest
host instead (still one at a time): the paper's processors can all run every task, ours cannot.

Lower bounds hold for every schedule under our execution model, so ``makespan >= lower_bound``
is an invariant the tests check: the critical-path bound above, and the work bound (total work
over the platform's aggregate compute rate, every core busy). A ratio whose denominator is 0 (a
workflow without work, a run of length 0) is undefined: ``nan``.
"""

from __future__ import annotations

import math
from typing import Any

from sim.arrivals import workflow_prefix
from sim.model import Platform, Task, Workflow, compute_time, node_fits
from sim.schedule import SimResult


def makespan(result: SimResult) -> float:
    """Time from the start of the run to the end of its last task or transfer."""
    return result.makespan


def fastest_runtime(task: Task, platform: Platform) -> float:
    """The task's compute time on the fastest node able to host it."""
    times = [compute_time(task, n) for n in platform.nodes if node_fits(task, n)]
    if not times:
        raise ValueError(f"task {task.id!r} fits no node of {platform.name!r}")
    return min(times)


def earliest_finishes(workflow: Workflow, platform: Platform) -> dict[str, float]:
    """Each task's finish on the critical-path bound's terms: after its parents and its release,
    at its fastest-host compute time, communication free."""
    finish: dict[str, float] = {}
    for task_id in workflow.topological_order:
        task = workflow.task_by_id[task_id]
        start = max((finish[p] for p in workflow.parents[task_id]), default=task.release)
        finish[task_id] = max(start, task.release) + fastest_runtime(task, platform)
    return finish


def critical_path_bound(workflow: Workflow, platform: Platform) -> float:
    """Longest dependency chain of fastest-host compute times, communication free (CP_MIN);
    each chain starts no earlier than its tasks' releases."""
    return max(earliest_finishes(workflow, platform).values(), default=0.0)


def work_bound(workflow: Workflow, platform: Platform) -> float:
    """Total work over aggregate compute rate: the makespan if every core were always busy."""
    return workflow.total_work / platform.total_capacity


def lower_bound(workflow: Workflow, platform: Platform) -> float:
    """The tighter of the critical-path and work bounds."""
    return max(critical_path_bound(workflow, platform), work_bound(workflow, platform))


def sequential_time(workflow: Workflow, platform: Platform) -> float:
    """Every task one after another on the single node that runs them all fastest (Topcuoglu
    et al. 2002); on a platform where no node hosts every task, each task on its fastest host."""
    able = [n for n in platform.nodes if all(node_fits(t, n) for t in workflow.tasks)]
    if able:
        return min(sum(compute_time(t, n) for t in workflow.tasks) for n in able)
    return sum(fastest_runtime(t, platform) for t in workflow.tasks)


def schedule_length_ratio(makespan: float, critical_path: float) -> float:
    """SLR: ``makespan`` over the :func:`critical_path_bound` (>= 1; lower is better)."""
    return makespan / critical_path if critical_path > 0 else math.nan


def speedup(makespan: float, sequential: float) -> float:
    """The :func:`sequential_time` over ``makespan``."""
    return sequential / makespan if makespan > 0 else math.nan


def efficiency(makespan: float, sequential: float, nodes: int) -> float:
    """Speedup per node of the platform."""
    return speedup(makespan, sequential) / nodes


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


def stream_summary(result: SimResult, workflow: Workflow, platform: Platform) -> dict[str, Any]:
    """The metrics of a stream of workflows (:mod:`sim.arrivals`) run as one merged workflow.

    ``makespan`` is the last end (the first arrival is at 0); ``speedup`` the whole stream's
    sequential time over it; ``slr`` the mean over workflows of each one's response time (its
    last end minus its arrival) over its own critical path (Topcuoglu et al.'s SLR, per
    workflow, then averaged, as multi-workflow studies report it); ``stream_slr`` the makespan
    over the stream's critical-path bound (arrivals included).
    """
    bound = earliest_finishes(workflow, platform)
    arrival: dict[str, float] = {}
    path_end: dict[str, float] = {}
    for t in workflow.tasks:
        key = workflow_prefix(t.id)
        arrival[key] = min(arrival.get(key, t.release), t.release)
        path_end[key] = max(path_end.get(key, 0.0), bound[t.id])
    last_end: dict[str, float] = {}
    for r in result.tasks:
        key = workflow_prefix(r.task)
        last_end[key] = max(last_end.get(key, 0.0), r.end)
    responses = {k: last_end[k] - arrival[k] for k in arrival}
    slrs = [schedule_length_ratio(responses[k], path_end[k] - arrival[k]) for k in arrival]
    sequential = sequential_time(workflow, platform)
    return {
        "workflows": len(arrival),
        "tasks": len(workflow.tasks),
        "makespan": result.makespan,
        "speedup": speedup(result.makespan, sequential),
        "slr": math.fsum(slrs) / len(slrs),
        "stream_slr": schedule_length_ratio(result.makespan, max(bound.values())),
        "mean_response": math.fsum(responses.values()) / len(responses),
        "sequential_time": sequential,
        "mean_utilization": mean_utilization(result, platform),
        "cross_node_bytes": result.cross_node_bytes,
    }


def summary(result: SimResult, workflow: Workflow, platform: Platform) -> dict[str, Any]:
    """Every metric of one run, JSON-ready (what ``wass-chat simulate --json`` prints)."""
    critical_path = critical_path_bound(workflow, platform)
    sequential = sequential_time(workflow, platform)
    return {
        "workflow": result.workflow,
        "platform": result.platform,
        "scheduler": result.scheduler,
        "network_model": result.network_model,
        "backend": result.backend,
        "tasks": len(result.tasks),
        "makespan": result.makespan,
        "critical_path_bound": critical_path,
        "work_bound": work_bound(workflow, platform),
        "sequential_time": sequential,
        "slr": schedule_length_ratio(result.makespan, critical_path),
        "speedup": speedup(result.makespan, sequential),
        "efficiency": efficiency(result.makespan, sequential, len(platform.nodes)),
        "mean_utilization": mean_utilization(result, platform),
        "utilization": utilization(result, platform),
        "mean_wait": result.mean_wait,
        "transfers": len(result.transfers),
        "cross_node_bytes": result.cross_node_bytes,
        "energy_joules": result.energy,
    }
