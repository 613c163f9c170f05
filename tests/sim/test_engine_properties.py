"""Invariants of the simulator on random DAGs and platforms (hypothesis), and HEFT replay."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine import simulate
from sim.metrics import critical_path_bound, work_bound
from sim.model import File, Node, Platform, Task, Workflow, node_fits
from sim.placement import EarliestFinishPlacement
from sim.schedule import SHARED_FS, SimResult, StaticSchedule

EPS = 1e-9


def random_instance(seed: int, n_tasks: int, n_nodes: int) -> tuple[Workflow, Platform]:
    """A random DAG with files on edges, some workflow inputs and control edges, and a cluster."""
    rng = np.random.default_rng(seed)
    nodes = tuple(
        Node(
            f"n{i}",
            cores=int(rng.integers(1, 5)),
            speed=float(rng.choice([0.5e9, 1e9, 2e9])),
            memory=int(rng.integers(4, 17)) * 2**30,
            bandwidth=float(rng.choice([0.25e9, 1e9, 1.25e9])),
        )
        for i in range(n_nodes)
    )
    max_cores = max(n.cores for n in nodes)
    files: list[File] = []
    tasks: list[Task] = []
    for i in range(n_tasks):
        inputs: list[str] = []
        parents: list[str] = []
        for j in range(i):
            roll = rng.random()
            if roll < 0.25:
                inputs.append(f"f{j}")
            elif roll < 0.3:
                parents.append(f"t{j}")
        if rng.random() < 0.3:
            name = f"in{i}"
            files.append(File(name, int(rng.integers(0, 3 * 10**9))))
            inputs.append(name)
        if rng.random() < 0.2 and i > 0:
            inputs.append("in-shared")
        tasks.append(
            Task(
                f"t{i}",
                work=float(rng.integers(0, 5 * 10**9)),
                cores=int(rng.integers(1, max_cores + 1)),
                memory=int(rng.integers(0, 4)) * 2**30,
                inputs=tuple(inputs),
                outputs=(f"f{i}",),
                parents=tuple(parents),
            )
        )
        files.append(File(f"f{i}", int(rng.integers(0, 2 * 10**9))))
    files.append(File("in-shared", int(1e9)))
    latency = float(rng.choice([0.0, 1e-4, 0.05]))
    return (
        Workflow(f"random-{seed}", tuple(tasks), tuple(files)),
        Platform("random", nodes, latency, shared_fs_bandwidth=float(rng.choice([1e9, 5e9]))),
    )


def random_static(wf: Workflow, pf: Platform, seed: int) -> StaticSchedule:
    """Random fitting placement; per-node order a random topological order."""
    rng = np.random.default_rng(seed + 1)
    assignment = {}
    for task in wf.tasks:
        fitting = [n.name for n in pf.nodes if node_fits(task, n)]
        assignment[task.id] = fitting[int(rng.integers(len(fitting)))]
    keys = {t: float(rng.random()) for t in wf.topological_order}
    level: dict[str, float] = {}
    for t in wf.topological_order:  # random priority that respects dependencies
        level[t] = max([level[p] for p in wf.parents[t]], default=0.0) + 1.0 + keys[t]
    return StaticSchedule.from_priorities(assignment, level, "random")


def check_invariants(result: SimResult, wf: Workflow, pf: Platform) -> None:
    assert len(result.tasks) == len(wf.tasks)
    # Lower bounds.
    assert result.makespan >= critical_path_bound(wf, pf) * (1 - EPS) - EPS
    assert result.makespan >= work_bound(wf, pf) * (1 - EPS) - EPS
    # Core capacity at every start instant.
    by_node = defaultdict(list)
    for r in result.tasks:
        by_node[r.node].append(r)
    for node_name, records in by_node.items():
        cores = pf.node_by_name[node_name].cores
        for r in records:
            in_use = sum(wf.task_by_id[o.task].cores for o in records if o.start <= r.start < o.end)
            assert in_use <= cores
    # Inputs are on the node before a task starts; parents end first.
    arrival = {(t.file, t.destination): t.end for t in result.transfers}
    assert len(arrival) == len(result.transfers), "one copy per (file, node)"
    rec = result.record_by_task
    for t in wf.tasks:
        r = rec[t.id]
        assert r.ready <= r.start + EPS
        for p in wf.parents[t.id]:
            assert rec[p].end <= r.start + EPS
        for f in t.inputs:
            producer = wf.producer.get(f)
            if producer is not None and rec[producer].node == r.node:
                continue
            assert arrival[(f, r.node)] <= r.start + EPS
    for x in result.transfers:
        assert x.start <= x.end
        if x.source != SHARED_FS:
            assert rec[wf.producer[x.file]].end <= x.start + EPS


instances = st.tuples(
    st.integers(0, 2**31), st.integers(1, 14), st.integers(1, 4), st.sampled_from(["fair", "ideal"])
)


@settings(max_examples=60, deadline=None)
@given(instances)
def test_static_runs_respect_every_invariant_and_replay_exactly(case: tuple) -> None:
    seed, n_tasks, n_nodes, model = case
    wf, pf = random_instance(seed, n_tasks, n_nodes)
    schedule = random_static(wf, pf, seed)
    result = simulate(wf, pf, schedule, model)
    check_invariants(result, wf, pf)
    assert simulate(wf, pf, schedule, model) == result
    assert simulate(wf, pf, result.to_schedule(), model).makespan == result.makespan


@settings(max_examples=60, deadline=None)
@given(instances)
def test_dynamic_runs_respect_every_invariant_and_are_deterministic(case: tuple) -> None:
    seed, n_tasks, n_nodes, model = case
    wf, pf = random_instance(seed, n_tasks, n_nodes)
    result = simulate(wf, pf, EarliestFinishPlacement(), model)
    check_invariants(result, wf, pf)
    assert simulate(wf, pf, EarliestFinishPlacement(), model) == result
    replay = simulate(wf, pf, result.to_schedule(), model)
    check_invariants(replay, wf, pf)
    assert replay.placements == result.placements


def heft_plan(wf: Workflow, pf: Platform) -> tuple[dict[str, str], dict[str, float], float]:
    """Insertion-based HEFT under the ideal model (one core per node): placement and starts.

    Data-ready time of a task on a node: each input produced elsewhere arrives ``latency +
    size / min(bandwidths)`` after its producer ends (workflow inputs: from t=0 off the shared
    filesystem); explicit parents must end first.
    """
    mean_speed = sum(n.speed for n in pf.nodes) / len(pf.nodes)
    rank: dict[str, float] = {}
    for t in reversed(wf.topological_order):
        tail = max((rank[c] for c in wf.children[t]), default=0.0)
        rank[t] = wf.task_by_id[t].work / mean_speed + tail
    order = sorted(wf.topological_order, key=lambda t: -rank[t])
    busy: dict[str, list[tuple[float, float]]] = {n.name: [] for n in pf.nodes}
    where: dict[str, str] = {}
    start: dict[str, float] = {}
    end: dict[str, float] = {}
    for t in order:
        task = wf.task_by_id[t]
        best = None
        for n in pf.nodes:
            ready = 0.0
            for f in task.inputs:
                size = wf.file_by_id[f].size
                p = wf.producer.get(f)
                if p is None:
                    up = pf.shared_fs_bandwidth
                    ready = max(ready, pf.latency + size / min(up, n.bandwidth))
                elif where[p] == n.name:
                    ready = max(ready, end[p])
                else:
                    up = pf.node_by_name[where[p]].bandwidth
                    ready = max(ready, end[p] + (pf.latency + size / min(up, n.bandwidth)))
            for p in task.parents:
                ready = max(ready, end[p])
            duration = task.work / (n.speed * task.cores)
            slot, previous_end = ready, 0.0
            for s, e in busy[n.name]:
                if max(ready, previous_end) + duration <= s:
                    break
                previous_end = e
            slot = max(ready, previous_end)
            if best is None or slot + duration < best[0]:
                best = (slot + duration, slot, n.name)
        assert best is not None
        finish, slot, name = best
        where[t], start[t], end[t] = name, slot, finish
        busy[name].append((slot, finish))
        busy[name].sort()
    return where, start, max(end.values())


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 16), st.integers(1, 4))
def test_ideal_network_replays_a_heft_plan_exactly(seed: int, n_tasks: int, n_nodes: int) -> None:
    wf, pf = random_instance(seed, n_tasks, n_nodes)
    single = Platform(
        pf.name,
        tuple(Node(n.name, 1, n.speed, n.memory, 0, n.bandwidth) for n in pf.nodes),
        pf.latency,
        pf.shared_fs_bandwidth,
    )
    wf = Workflow(wf.name, tuple(_one_core(t) for t in wf.tasks), wf.files)
    where, planned, planned_makespan = heft_plan(wf, single)
    schedule = StaticSchedule.from_priorities(where, planned, "heft")
    result = simulate(wf, single, schedule, "ideal")
    for r in result.tasks:
        assert r.start == pytest.approx(planned[r.task], rel=1e-12, abs=1e-12)
    assert result.makespan >= planned_makespan - 1e-9


def _one_core(t: Task) -> Task:
    return Task(t.id, t.work, cores=1, inputs=t.inputs, outputs=t.outputs, parents=t.parents)
