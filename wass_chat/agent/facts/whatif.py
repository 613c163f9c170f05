"""What-if simulations: the same workflow on a changed platform or under another scheduler.

A what-if changes one thing against a baseline (workflow, platform, scheduler): nodes added
(copies of the platform's most common node type) or removed (by name, or the last ``n``), every
bandwidth scaled by a factor, or another scheduler. Changing two things at once would credit one
with the effect of the other, so it is refused. Both the baseline and the variant are simulated,
so the reported change is the difference of two simulations, never an estimate; the facts carry
the Gantt trace of the run they describe last (the variant, else the baseline), so front ends
draw what was simulated instead of simulating again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from policy.base import plan_and_simulate
from policy.registry import canonical_name, get_scheduler
from sim.errors import InputError, UnknownName
from sim.gantt import trace
from sim.model import Node, Platform, Workflow
from sim.schedule import NetworkModel, SimResult
from wass_chat.agent.cancellation import current_work
from wass_chat.answers.comparison import ComparisonFacts
from wass_chat.answers.simulation import Changes, Outcome, SimulationFacts

TIE_TOLERANCE_S = 0.05
"""Makespans closer than this are a tie: the answers show one decimal of a second."""


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
            who = "it" if len(self.remove_nodes) == 1 else "they"
            notes.append(", ".join(self.remove_nodes) + f" removed (as if {who} failed)")
        if self.bandwidth_factor != 1.0:
            notes.append(f"bandwidth x{self.bandwidth_factor:g}")
        if self.scheduler:
            notes.append(f"scheduler {self.scheduler}")
        return notes

    def check_single(self) -> None:
        """Refuse a what-if that changes more than one thing (InputError naming them)."""
        notes = self.notes()
        if len(notes) > 1:
            raise InputError(
                "what-if",
                [
                    "a what-if changes one thing at a time, this one asks for "
                    + " and ".join(notes)
                    + ": ask for each separately"
                ],
            )


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
        if unknown:  # refused with the nearest nodes, never replaced by one of them
            where = f"on platform {platform.name!r}"
            raise UnknownName("node", unknown[0], platform.node_by_name, where)
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


def gantt_trace(result: SimResult, workflow: Workflow, platform: Platform) -> dict[str, Any]:
    """The run's Gantt trace (:func:`sim.gantt.trace`) without its transfers, which no view of
    the chat draws and which would swell every conversation that keeps it."""
    data = trace(result, workflow, platform)
    data.pop("transfers", None)
    return data


def outcome(result: SimResult, platform: Platform) -> Outcome:
    """The facts of one simulation that answers quote."""
    return Outcome(
        platform=platform.name,
        nodes=len(platform),
        scheduler=result.scheduler,
        makespan_s=result.makespan,
        cross_node_bytes=result.cross_node_bytes,
        energy_j=result.energy,
        mean_wait_s=result.mean_wait,
    )


def what_if(
    workflow: Workflow,
    platform: Platform,
    scheduler: str,
    change: WhatIf,
    network_model: NetworkModel = "fair",
) -> SimulationFacts:
    """Simulate the baseline and, if ``change`` changes anything (one thing), the variant."""
    change.check_single()
    scheduler = canonical_name(scheduler)
    variant_platform = changed_platform(platform, change)  # bad changes fail before simulating
    work = current_work()
    work.check()
    base = run_scheduler(workflow, platform, scheduler, network_model)
    facts = SimulationFacts(
        kind="simulation",
        workflow=workflow.name,
        network_model=network_model,
        baseline=outcome(base, platform),
    )
    if change.is_baseline:
        facts["gantt"] = gantt_trace(base, workflow, platform)
        return facts
    variant_scheduler = canonical_name(change.scheduler) if change.scheduler else scheduler
    work.check()
    work.report(f"simulated the baseline ({scheduler}); now the what-if")
    variant = run_scheduler(workflow, variant_platform, variant_scheduler, network_model)
    delta = variant.makespan - base.makespan
    facts["variant"] = outcome(variant, variant_platform)
    facts["changes"] = Changes(
        add_nodes=change.add_nodes,
        remove_nodes=change.remove_nodes
        if isinstance(change.remove_nodes, int)
        else list(change.remove_nodes),
        bandwidth_factor=change.bandwidth_factor,
        scheduler=variant_scheduler if change.scheduler else None,
    )
    facts["change_notes"] = change.notes()
    facts["delta_s"] = delta
    facts["delta_pct"] = 100.0 * delta / base.makespan if base.makespan else 0.0
    facts["gantt"] = gantt_trace(variant, workflow, variant_platform)
    return facts


def compare(
    workflow: Workflow,
    platform: Platform,
    schedulers: Sequence[str],
    network_model: NetworkModel = "fair",
    challengers: Sequence[tuple[str, float]] = (),
) -> ComparisonFacts:
    """Simulate ``workflow`` under each scheduler; best first, ties named, the best's trace.

    ``challengers`` are (scheduler, makespan) pairs that past cases of the same workflow
    recorded: after ``schedulers``, each one whose recorded makespan ties or beats the fastest
    so far is simulated too (``from_cases`` names them), so a scheduler the app cites from its
    knowledge base is ranked here, on this run, instead of being left out of the ranking.
    ``best`` is the first of the fastest; ``tied_best`` every scheduler within
    :data:`TIE_TOLERANCE_S` of it (one decimal of a second, as the answers show makespans).
    """
    names = list(dict.fromkeys(canonical_name(s) for s in schedulers))
    work = current_work()
    runs: dict[str, SimResult] = {}
    for index, name in enumerate(names):
        work.check()
        work.report(f"simulating {name} ({index + 1} of {len(names)})")
        runs[name] = run_scheduler(workflow, platform, name, network_model)
    from_cases: list[str] = []
    for challenger, recorded in sorted(challengers, key=lambda c: (c[1], c[0])):
        name = canonical_name(challenger)
        fastest = min((r.makespan for r in runs.values()), default=float("inf"))
        if name in runs or recorded - fastest >= TIE_TOLERANCE_S:
            continue
        work.check()
        work.report(f"simulating {name}, which a past case ran in {recorded:.1f} s")
        runs[name] = run_scheduler(workflow, platform, name, network_model)
        from_cases.append(name)
    results = sorted(
        (outcome(result, platform) for result in runs.values()),
        key=lambda r: (r["makespan_s"], r["scheduler"]),
    )
    facts = ComparisonFacts(
        kind="comparison",
        workflow=workflow.name,
        platform=platform.name,
        network_model=network_model,
        results=results,
        best=None,
        tied_best=[],
        from_cases=from_cases,
    )
    if results:
        fastest = results[0]["makespan_s"]
        tied = [r["scheduler"] for r in results if r["makespan_s"] - fastest < TIE_TOLERANCE_S]
        for r in results:
            r["tied_best"] = r["scheduler"] in tied
        best = results[0]["scheduler"]
        facts["best"], facts["tied_best"] = best, tied
        facts["gantt"] = gantt_trace(runs[best], workflow, platform)
    return facts
