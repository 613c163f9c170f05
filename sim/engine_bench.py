"""Engine speed on WfCommons workflows: what ``wass-chat sim bench`` prints.

For each workflow family, a fixed 32-node heterogeneous platform (by default) and both network
models, it times a dynamic run with earliest-finish placement and the static replay of the
schedule that run realised, and reports the median wall time of several runs. Timings are
measured here, outside the simulation (which never reads the clock).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from sim.engine import simulate
from sim.generators import generate_workflow
from sim.model import Platform, Workflow
from sim.placement import EarliestFinishPlacement
from sim.platforms import ClusterSpec, generate_platform
from sim.schedule import NetworkModel, SimResult


def median_seconds(run: Callable[[], SimResult], runs: int) -> tuple[float, SimResult]:
    """Median wall time of ``runs`` calls (after one warm-up call) and the last result."""
    result = run()
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        result = run()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings), result


def _dynamic_run(workflow: Workflow, platform: Platform, network: NetworkModel) -> SimResult:
    return simulate(workflow, platform, EarliestFinishPlacement(), network)


def run_bench(
    families: Iterable[str], tasks: int, nodes: int, runs: int, seed: int = 0
) -> list[dict[str, Any]]:
    """One row per (family, mode, network model) with the median time in milliseconds."""
    platform = generate_platform(ClusterSpec(nodes=nodes, heterogeneous=True), seed=seed)
    rows = []
    for family in families:
        workflow = generate_workflow(family, tasks, seed=seed)
        for model in ("fair", "ideal"):
            network: NetworkModel = "fair" if model == "fair" else "ideal"
            dynamic_s, dynamic = median_seconds(
                partial(_dynamic_run, workflow, platform, network), runs
            )
            schedule = dynamic.to_schedule()
            static_s, static = median_seconds(
                partial(simulate, workflow, platform, schedule, network), runs
            )
            for mode, seconds, result in (
                ("static replay", static_s, static),
                ("dynamic eft", dynamic_s, dynamic),
            ):
                rows.append(
                    {
                        "workflow": workflow.name,
                        "tasks": len(workflow.tasks),
                        "platform": platform.name,
                        "mode": mode,
                        "network_model": model,
                        "transfers": len(result.transfers),
                        "makespan": result.makespan,
                        "median_ms": seconds * 1000,
                    }
                )
    return rows
