"""Per-run quality metrics: schedule length ratio, speedup, efficiency (pure functions).

SLR and speedup follow Topcuoglu et al. (IEEE TPDS 2002, section 5.1): SLR divides the
makespan by the critical path's length counted with each task's fastest compute time and no
communication (a lower bound, so SLR >= 1); speedup divides the best sequential time on a single
node by the makespan.
"""

from __future__ import annotations

from policy.costs import compute_time, hosts
from sim.model import Platform, Workflow


def critical_path_lower_bound(workflow: Workflow, platform: Platform) -> float:
    """Longest path where each task takes its minimum compute time over nodes, edges 0."""
    fastest = {
        t.id: min(compute_time(t, n) for n in hosts(t, platform) or platform.nodes)
        for t in workflow.tasks
    }
    longest: dict[str, float] = {}
    for task in workflow.topological_order:
        before = max((longest[p] for p in workflow.parents[task]), default=0.0)
        longest[task] = before + fastest[task]
    return max(longest.values(), default=0.0)


def sequential_time(workflow: Workflow, platform: Platform) -> float:
    """Shortest time to run every task one after another on one node that hosts them all."""
    able = [n for n in platform.nodes if all(n in hosts(t, platform) for t in workflow.tasks)]
    candidates = able or list(platform.nodes)
    return min(sum(compute_time(t, n) for t in workflow.tasks) for n in candidates)


def schedule_length_ratio(makespan: float, lower_bound: float) -> float:
    return makespan / lower_bound if lower_bound > 0 else float("nan")


def speedup(makespan: float, sequential: float) -> float:
    return sequential / makespan if makespan > 0 else float("nan")
