"""A simulation and its what-if (kind ``simulation``): the verdict and the Markdown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from wass_chat.agent.safety import literal as lit
from wass_chat.agent.units import percent, seconds, size
from wass_chat.answers.kind import Facts, Kind


class Outcome(TypedDict):
    """One simulated schedule, as answers quote it."""

    platform: str
    nodes: int
    scheduler: str
    makespan_s: float
    cross_node_bytes: float
    energy_j: float
    mean_wait_s: float
    tied_best: NotRequired[bool]
    """In a comparison: whether it ties the fastest (within :data:`TIE_TOLERANCE_S`)."""


class Changes(TypedDict):
    add_nodes: int
    remove_nodes: int | list[str]
    bandwidth_factor: float
    scheduler: str | None


class SimulationFacts(TypedDict, total=False):
    """What ``simulate`` returns (kind ``simulation``): the baseline, and with a change the
    variant, the change and the difference; the Gantt trace of the last schedule."""

    kind: str
    workflow: str
    network_model: str
    baseline: Outcome
    variant: Outcome
    changes: Changes
    change_notes: list[str]
    delta_s: float
    delta_pct: float
    gantt: dict[str, Any]
    run_id: str


NEGLIGIBLE_S = 0.05
"""Makespan differences below this (the answers' one decimal) count as none."""


def _simulation_words(f: Mapping[str, Any], v: Mapping[str, Any]) -> str:
    base = f["baseline"]
    variant = f.get("variant")
    if variant is None:
        return (
            f"{lit(f['workflow'])} takes {base['makespan_s']:.1f} s with {lit(base['scheduler'])} "
            f"on {base['nodes']} nodes of {lit(base['platform'])} (simulated)."
        )
    change = "; ".join(f.get("change_notes") or []) or "the change"
    delta = f["delta_s"]
    if abs(delta) < NEGLIGIBLE_S:
        return f"With {change}, the makespan stays at {base['makespan_s']:.1f} s."
    word = "shorter" if delta < 0 else "longer"
    return (
        f"With {change}, the workflow finishes in {variant['makespan_s']:.1f} s instead of "
        f"{base['makespan_s']:.1f} s: {abs(delta):.1f} s {word} ({f['delta_pct']:+.1f}%)."
    )


def _outcome(label: str, o: Mapping[str, Any]) -> str:
    return (
        f"- {label}: {o['nodes']} nodes on {lit(o['platform'])}, {lit(o['scheduler'])}: "
        f"makespan {seconds(o['makespan_s'])}, {size(o['cross_node_bytes'])} across the network"
    )


def render_simulation(f: Facts) -> str:
    """A simulation, and with what-if changes, the change against the baseline."""
    subject = f"run {lit(f['run_id'])}" if f.get("run_id") else lit(f["workflow"])
    head = (
        f"**Simulation of {subject}** ({lit(f['workflow'])}, {lit(f['baseline']['scheduler'])}; "
        f"{f['network_model']} network model)"
    )
    lines = [
        _simulation_words(f, f.get("verdict") or {}),
        "",
        head,
        _outcome("baseline", f["baseline"]),
    ]
    variant = f.get("variant")
    if variant is not None:
        lines.append(_outcome("what-if (" + "; ".join(f["change_notes"]) + ")", variant))
        delta = f["delta_s"]
        if abs(delta) < 0.05:
            lines += [
                "",
                "The makespan does not change: the added capacity is not on the "
                "critical path under this scheduler.",
            ]
        else:
            verdict = "shorter" if delta < 0 else "longer"
            lines += [
                "",
                f"The makespan changes by {seconds(delta)} ({percent(f['delta_pct'])}): "
                f"{seconds(abs(delta))} {verdict} than the baseline.",
            ]
    return "\n".join(lines)


KIND = Kind(
    "simulation",
    "a workflow simulated, and with a what-if change, against the baseline",
    render_simulation,
    facts=SimulationFacts,
)
