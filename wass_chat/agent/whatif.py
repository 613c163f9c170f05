"""What-if simulations: the same workflow on a changed platform or under another scheduler.

A what-if names changes against a baseline (workflow, platform, scheduler): nodes added (copies
of the platform's most common node type) or removed (by name, or the last ``n``), every
bandwidth scaled by a factor, another scheduler. Both the baseline and the variant are simulated,
so the reported change is the difference of two simulations, never an estimate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from policy.base import plan_and_simulate
from policy.registry import canonical_name, get_scheduler
from sim.errors import InputError
from sim.model import Node, Platform, Workflow
from sim.schedule import NetworkModel, SimResult


@dataclass(frozen=True)
class WhatIf:
    """Changes to apply to a baseline; the default changes nothing."""

    add_nodes: int = 0
    remove_nodes: Sequence[str] | int = ()
    bandwidth_factor: float = 1.0
    scheduler: str | None = None

    @property
    def is_baseline(self) -> bool:
        return (
            self.add_nodes == 0
            and not self.remove_nodes
            and self.bandwidth_factor == 1.0
            and self.scheduler is None
        )

    def notes(self) -> list[str]:
        """The changes in words, for the answer."""
        notes = []
        if self.add_nodes:
            notes.append(f"{self.add_nodes} nodes added")
        if isinstance(self.remove_nodes, int) and self.remove_nodes:
            notes.append(f"{self.remove_nodes} nodes removed")
        elif not isinstance(self.remove_nodes, int) and self.remove_nodes:
            notes.append("removed " + ", ".join(self.remove_nodes))
        if self.bandwidth_factor != 1.0:
            notes.append(f"bandwidth x{self.bandwidth_factor:g}")
        if self.scheduler:
            notes.append(f"scheduler {self.scheduler}")
        return notes


def changed_platform(platform: Platform, change: WhatIf) -> Platform:
    """``platform`` with nodes added or removed and bandwidths scaled (validated anew)."""
    problems = []
    if change.add_nodes < 0:
        problems.append(f"cannot add a negative number of nodes ({change.add_nodes})")
    if change.bandwidth_factor <= 0:
        problems.append(f"bandwidth factor must be positive, not {change.bandwidth_factor}")
    nodes = list(platform.nodes)
    if isinstance(change.remove_nodes, int):
        if change.remove_nodes < 0 or change.remove_nodes >= len(nodes):
            problems.append(
                f"cannot remove {change.remove_nodes} of the {len(nodes)} nodes of "
                f"{platform.name!r}"
            )
        else:
            nodes = nodes[: len(nodes) - change.remove_nodes]
    else:
        unknown = [n for n in change.remove_nodes if n not in platform.node_by_name]
        problems += [f"platform {platform.name!r} has no node {n!r}" for n in unknown]
        nodes = [n for n in nodes if n.name not in set(change.remove_nodes)]
    if problems:
        raise InputError("what-if", problems)
    if change.add_nodes:
        nodes += _new_nodes(platform, change.add_nodes)
    factor = change.bandwidth_factor
    if factor != 1.0:
        nodes = [replace(n, bandwidth=n.bandwidth * factor) for n in nodes]
    return Platform(
        name=f"{platform.name}+whatif",
        nodes=tuple(nodes),
        latency=platform.latency,
        shared_fs_bandwidth=platform.shared_fs_bandwidth * factor,
    )


def _new_nodes(platform: Platform, count: int) -> list[Node]:
    """``count`` copies of the most common node type, with fresh names."""
    template_key = Counter(
        (n.cores, n.speed, n.memory, n.gpus, n.bandwidth) for n in platform.nodes
    )
    key = template_key.most_common(1)[0][0]
    template = next(
        n for n in platform.nodes if (n.cores, n.speed, n.memory, n.gpus, n.bandwidth) == key
    )
    taken = set(platform.node_names)
    added: list[Node] = []
    index = 1
    while len(added) < count:
        name = f"extra{index}"
        index += 1
        if name not in taken:
            added.append(replace(template, name=name))
    return added


def run_scheduler(
    workflow: Workflow, platform: Platform, scheduler: str, network_model: NetworkModel
) -> SimResult:
    """Plan ``workflow`` with the named scheduler and simulate it (seed 0 for seeded ones)."""
    return plan_and_simulate(get_scheduler(scheduler, seed=0), workflow, platform, network_model)


def outcome(result: SimResult, platform: Platform) -> dict[str, Any]:
    """The facts of one simulation that answers quote."""
    return {
        "platform": platform.name,
        "nodes": len(platform),
        "scheduler": result.scheduler,
        "makespan_s": result.makespan,
        "cross_node_bytes": result.cross_node_bytes,
        "energy_j": result.energy,
        "mean_wait_s": result.mean_wait,
    }


def what_if(
    workflow: Workflow,
    platform: Platform,
    scheduler: str,
    change: WhatIf,
    network_model: NetworkModel = "fair",
) -> dict[str, Any]:
    """Simulate the baseline and, if ``change`` changes anything, the variant."""
    scheduler = canonical_name(scheduler)
    base = run_scheduler(workflow, platform, scheduler, network_model)
    facts: dict[str, Any] = {
        "kind": "simulation",
        "workflow": workflow.name,
        "network_model": network_model,
        "baseline": outcome(base, platform),
    }
    if change.is_baseline:
        return facts
    variant_platform = changed_platform(platform, change)
    variant_scheduler = canonical_name(change.scheduler) if change.scheduler else scheduler
    variant = run_scheduler(workflow, variant_platform, variant_scheduler, network_model)
    delta = variant.makespan - base.makespan
    facts.update(
        variant=outcome(variant, variant_platform),
        changes={
            "add_nodes": change.add_nodes,
            "remove_nodes": change.remove_nodes
            if isinstance(change.remove_nodes, int)
            else list(change.remove_nodes),
            "bandwidth_factor": change.bandwidth_factor,
            "scheduler": variant_scheduler if change.scheduler else None,
        },
        change_notes=change.notes(),
        delta_s=delta,
        delta_pct=100.0 * delta / base.makespan if base.makespan else 0.0,
    )
    return facts


def compare(
    workflow: Workflow,
    platform: Platform,
    schedulers: Sequence[str],
    network_model: NetworkModel = "fair",
) -> dict[str, Any]:
    """Simulate ``workflow`` under each scheduler; best first."""
    results = [
        outcome(run_scheduler(workflow, platform, canonical_name(s), network_model), platform)
        for s in dict.fromkeys(schedulers)
    ]
    results.sort(key=lambda r: (r["makespan_s"], r["scheduler"]))
    return {
        "kind": "comparison",
        "workflow": workflow.name,
        "platform": platform.name,
        "network_model": network_model,
        "results": results,
        "best": results[0]["scheduler"] if results else None,
    }
