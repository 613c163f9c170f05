"""Gantt traces of simulations, computed with the real simulator for the run panel.

The agent's simulate tool may put its trace under ``data["gantt"]`` (then the TUI draws it as
is). When a simulation's facts come without one, the panel recomputes the same run here: the
named demo workflow on the demo platform (changed as the what-if says), planned by
``policy.registry.get_scheduler`` (seed 0, as the agent does) and simulated by
``sim.engine.simulate`` through :func:`policy.base.plan_and_simulate`. The model is
deterministic, so this is the very schedule the agent reported. CPU-bound: call it from a thread
worker. Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim.model import Platform, Workflow
from sim.schedule import NetworkModel
from tui.gantt_data import trace_from_sim_result


def simulate_trace(
    workflow: Workflow, platform: Platform, scheduler: str, network_model: NetworkModel = "fair"
) -> dict[str, Any]:
    """Plan ``workflow`` with the named scheduler, simulate it, and return its JSON trace."""
    from policy.base import plan_and_simulate
    from policy.registry import get_scheduler

    result = plan_and_simulate(get_scheduler(scheduler, seed=0), workflow, platform, network_model)
    return trace_from_sim_result(result, platform)


def trace_for_simulation_facts(facts: Mapping[str, Any]) -> dict[str, Any] | None:
    """The trace of the run a simulate tool's facts describe (the what-if variant when there is
    one), or None when the facts do not name a demo workflow on the demo platform."""
    from sim.demo import demo_platform, demo_workflow, demo_workflow_names
    from wass_chat.agent.whatif import WhatIf, changed_platform

    if facts.get("kind") != "simulation" or facts.get("workflow") not in demo_workflow_names():
        return None
    baseline = facts.get("baseline")
    platform = demo_platform()
    if not isinstance(baseline, Mapping) or baseline.get("platform") != platform.name:
        return None
    network_model: NetworkModel = "ideal" if facts.get("network_model") == "ideal" else "fair"
    scheduler = str(baseline.get("scheduler") or "heft")
    changes = facts.get("changes")
    if isinstance(facts.get("variant"), Mapping) and isinstance(changes, Mapping):
        removed = changes.get("remove_nodes") or ()
        change = WhatIf(
            add_nodes=int(changes.get("add_nodes") or 0),
            remove_nodes=removed if isinstance(removed, int) else tuple(removed),
            bandwidth_factor=float(changes.get("bandwidth_factor") or 1.0),
            scheduler=changes.get("scheduler"),
        )
        platform = changed_platform(platform, change)
        scheduler = str(facts["variant"].get("scheduler") or scheduler)
    return simulate_trace(demo_workflow(str(facts["workflow"])), platform, scheduler, network_model)
