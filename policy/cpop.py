"""CPOP: Critical Path On a Processor (Topcuoglu, Hariri, Wu, IEEE TPDS 2002).

Priority = upward rank + downward rank. Tasks on the critical path (priority equal to the entry
task's) all go to the one node that runs them fastest in total (on a busy cluster: counting
from when other jobs leave it); the others, taken from a ready queue by decreasing priority, go
to their earliest-finish node (insertion-based).

``convention="saga"`` reproduces SAGA 2.0.2's variant for the cross-check: its downward rank
(:func:`sim.ranks.saga_downward_rank`), its mean over node pairs, and its critical path as
"every task whose priority is close to the entry's" rather than a walk from entry to exit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from policy.base import ListScheduler
from policy.plan import Plan, ready_by_priority
from sim.model import Node, Platform, Workflow, compute_time, hosts, node_fits
from sim.occupancy import Occupancy
from sim.ranks import downward_rank, saga_downward_rank, upward_rank


def _close(a: float, b: float) -> bool:
    """numpy.isclose's test (rtol 1e-5, atol 1e-8), which both conventions tolerate."""
    return abs(a - b) <= 1e-8 + 1e-5 * abs(b)


def critical_path(workflow: Workflow, priority: dict[str, float]) -> list[str]:
    """From the highest-priority entry, follow the child whose priority equals |CP| to an exit."""
    length = max(priority[t] for t in workflow.entry_tasks)
    task = max(workflow.entry_tasks, key=lambda t: priority[t])
    path = [task]
    while workflow.children[task]:
        on_path = [c for c in workflow.children[task] if _close(priority[c], length)]
        if not on_path:
            break
        task = max(on_path, key=lambda c: priority[c])
        path.append(task)
    return path


@dataclass(frozen=True)
class CPOP(ListScheduler):
    """CPOP on multi-core nodes, insertion-based."""

    name: str = "cpop"
    description: ClassVar[str] = "CPOP: critical path pinned to its fastest node, rest by EFT"
    convention: Literal["topcuoglu", "saga"] = "topcuoglu"

    def priorities(self, workflow: Workflow, platform: Platform) -> dict[str, float]:
        if self.convention == "saga":
            up = upward_rank(workflow, platform, "saga")
            down = saga_downward_rank(workflow, platform)
        else:
            up = upward_rank(workflow, platform)
            down = downward_rank(workflow, platform)
        return {t: up[t] + down[t] for t in workflow.topological_order}

    def critical_tasks(
        self, workflow: Workflow, platform: Platform, priority: dict[str, float]
    ) -> list[str]:
        if self.convention == "topcuoglu":
            return critical_path(workflow, priority)
        entries = workflow.entry_tasks
        if len(entries) > 1:  # SAGA's zero-cost super source carries the largest upward rank
            up = upward_rank(workflow, platform, "saga")
            length = max(up[t] for t in entries)
        else:
            length = priority[entries[0]]
        return [t for t in workflow.topological_order if _close(priority[t], length)]

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> Plan:
        priority = self.priorities(workflow, platform)
        critical = self.critical_tasks(workflow, platform, priority)
        tasks = workflow.task_by_id
        able = [n for n in platform.nodes if all(node_fits(tasks[t], n) for t in critical)]
        plan = Plan(workflow, platform, insertion=True, occupancy=occupancy)
        pinned: Node | None = None
        if able:  # on a busy cluster, counting from when other jobs leave the node
            pinned = min(
                able,
                key=lambda n: (
                    plan.timelines[n.name].available_time
                    + sum(compute_time(tasks[t], n) for t in critical)
                ),
            )
        on_path = set(critical) if pinned is not None else set()

        for task in ready_by_priority(workflow, priority):
            if task in on_path and pinned is not None:
                plan.place(plan.slot(task, pinned))
            else:
                plan.place(plan.best_slot(task, hosts(tasks[task], platform)))
        return plan
