"""Exact minimum makespan for small instances with OR-Tools CP-SAT (ideal network model).

The model: each task picks one node (optional interval per node), nodes hold their tasks in a
cumulative resource of their cores (a no-overlap on one-core nodes), an edge whose endpoints sit
on different nodes waits ``max over its files of (latency + size / min bandwidth)``, a workflow
input waits its shared-filesystem read; minimise the last end. This is the simulator's ideal
model, so on one-core nodes the optimal order, replayed, reaches the optimum.

CP-SAT needs integers: every duration is rounded *up* to ticks of ``resolution`` seconds, so
the solver's schedule stays feasible in real time; the true optimum lies within
``lower_bound`` and ``makespan`` (they differ by at most one tick per task and edge on a path).
Meant for about 10 tasks on 3 nodes; larger instances hit ``time_limit`` (status FEASIBLE).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from policy.costs import shared_fs_read_time, transfer_time
from sim.model import Platform, Workflow, check_fits, compute_time, node_fits
from sim.schedule import StaticSchedule


@dataclass(frozen=True)
class OptimalSolution:
    """The solver's schedule, its makespan and a proven lower bound (seconds)."""

    schedule: StaticSchedule
    makespan: float
    lower_bound: float
    proven_optimal: bool


def _edge_time(
    workflow: Workflow, platform: Platform, parent: str, child: str, a: str, b: str
) -> float:
    """Transfer time of an edge's files between nodes ``a`` and ``b`` (they move in parallel)."""
    nodes = platform.node_by_name
    files = workflow.edge_files[(parent, child)]
    return max(
        (transfer_time(workflow.file_by_id[f].size, platform, nodes[a], nodes[b]) for f in files),
        default=0.0,
    )


def solve_optimal(
    workflow: Workflow,
    platform: Platform,
    time_limit: float = 30.0,
    resolution: float | None = None,
) -> OptimalSolution:
    """Minimum-makespan schedule of ``workflow`` on ``platform`` (see the module docstring)."""
    from ortools.sat.python import cp_model

    check_fits(workflow, platform)
    nodes = platform.nodes
    tasks = workflow.tasks
    if resolution is None:  # ~1e-6 of a serial execution on the slowest node
        slowest = min(n.speed for n in nodes)
        resolution = max(workflow.total_work / slowest * 1e-6, 1e-9)

    def ticks(seconds: float) -> int:
        return math.ceil(seconds / resolution - 1e-9)

    model = cp_model.CpModel()
    duration = {(t.id, n.name): ticks(compute_time(t, n)) for t in tasks for n in nodes}
    horizon = sum(max(duration[(t.id, n.name)] for n in nodes) for t in tasks)
    horizon += sum(
        ticks(_edge_time(workflow, platform, p, c, a.name, b.name))
        for (p, c) in workflow.edge_files
        for a in nodes
        for b in nodes
        if a.name != b.name
    ) + sum(ticks(shared_fs_read_time(f.size, platform, n)) for f in workflow.files for n in nodes)
    start = {t.id: model.new_int_var(0, horizon, f"start_{t.id}") for t in tasks}
    end = {t.id: model.new_int_var(0, horizon, f"end_{t.id}") for t in tasks}
    on: dict[tuple[str, str], cp_model.IntVar] = {}
    per_node: dict[str, list[tuple[cp_model.IntervalVar, int, int]]] = {n.name: [] for n in nodes}
    for t in tasks:
        for n in nodes:
            if not node_fits(t, n):
                continue
            lit = model.new_bool_var(f"on_{t.id}_{n.name}")
            on[(t.id, n.name)] = lit
            d = duration[(t.id, n.name)]
            interval = model.new_optional_interval_var(
                start[t.id], d, end[t.id], lit, f"run_{t.id}_{n.name}"
            )
            per_node[n.name].append((interval, t.cores, t.memory))
            for f in t.inputs:
                if f not in workflow.producer:
                    read = ticks(shared_fs_read_time(workflow.file_by_id[f].size, platform, n))
                    model.add(start[t.id] >= read).only_enforce_if(lit)
        model.add_exactly_one(on[(t.id, n.name)] for n in nodes if (t.id, n.name) in on)
    for n in nodes:
        intervals = [i for i, _, _ in per_node[n.name]]
        if n.cores == 1:
            model.add_no_overlap(intervals)
        else:
            model.add_cumulative(intervals, [c for _, c, _ in per_node[n.name]], n.cores)
        if any(m for _, _, m in per_node[n.name]):
            model.add_cumulative(intervals, [m for _, _, m in per_node[n.name]], n.memory)
    for parent, child in workflow.edge_files:
        model.add(start[child] >= end[parent])
        for a in nodes:
            for b in nodes:
                if a.name == b.name or (parent, a.name) not in on or (child, b.name) not in on:
                    continue
                delay = ticks(_edge_time(workflow, platform, parent, child, a.name, b.name))
                if delay > 0:
                    model.add(start[child] >= end[parent] + delay).only_enforce_if(
                        [on[(parent, a.name)], on[(child, b.name)]]
                    )
    makespan = model.new_int_var(0, horizon, "makespan")
    model.add_max_equality(makespan, list(end.values()))
    model.minimize(makespan)

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 1  # deterministic
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"CP-SAT found no schedule within {time_limit} s")
    assignment = {
        t.id: n.name
        for t in tasks
        for n in nodes
        if (t.id, n.name) in on and solver.value(on[(t.id, n.name)])
    }
    starts = {t.id: float(solver.value(start[t.id])) for t in tasks}
    schedule = StaticSchedule.from_priorities(
        assignment, starts, "optimal", solver.objective_value * resolution
    )
    # Each rounded-up quantity on the critical path added less than one tick.
    slack = (2 * len(tasks) + 1) * resolution
    return OptimalSolution(
        schedule=schedule,
        makespan=solver.objective_value * resolution,
        lower_bound=max(solver.best_objective_bound * resolution - slack, 0.0),
        proven_optimal=status == cp_model.OPTIMAL,
    )
