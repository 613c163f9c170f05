"""Small random instances: random DAGs and heterogeneous platforms from an explicit Generator.

Used by the optimality-gap study, the SAGA cross-check and the test zoo. Each edge carries its
own file (so an edge's data is one transfer, as in SAGA's task graphs); optionally entry tasks
read a workflow input file from the shared filesystem.
"""

from __future__ import annotations

import numpy as np

from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow


def random_dag(
    rng: np.random.Generator,
    n_tasks: int,
    edge_probability: float = 0.3,
    mean_runtime: float = 10.0,
    mean_edge_seconds: float = 5.0,
    with_inputs: bool = False,
    name: str = "random-dag",
) -> Workflow:
    """A layered-order random DAG: edge i -> j (i < j) with ``edge_probability``.

    Runtimes (on the reference machine) and edge sizes (in seconds at 1 GB/s) are exponential
    around their means, so ties are improbable.
    """
    children: dict[int, list[int]] = {i: [] for i in range(n_tasks)}
    for i in range(n_tasks):
        for j in range(i + 1, n_tasks):
            if rng.random() < edge_probability:
                children[i].append(j)
    files: list[File] = []
    inputs: dict[int, list[str]] = {i: [] for i in range(n_tasks)}
    outputs: dict[int, list[str]] = {i: [] for i in range(n_tasks)}
    for i, kids in children.items():
        for j in kids:
            fid = f"f{i}_{j}"
            files.append(File(fid, int(rng.exponential(mean_edge_seconds) * 1e9) + 1))
            outputs[i].append(fid)
            inputs[j].append(fid)
    if with_inputs:
        for i in range(n_tasks):
            if not inputs[i]:
                fid = f"in{i}"
                files.append(File(fid, int(rng.exponential(mean_edge_seconds) * 1e9) + 1))
                inputs[i].append(fid)
    tasks = tuple(
        Task(
            id=f"t{i}",
            work=float(rng.exponential(mean_runtime) + 0.1) * REFERENCE_SPEED,
            inputs=tuple(inputs[i]),
            outputs=tuple(outputs[i]),
        )
        for i in range(n_tasks)
    )
    return Workflow(name, tasks, tuple(files))


def random_platform(
    rng: np.random.Generator,
    n_nodes: int,
    cores: int = 1,
    heterogeneous: bool = True,
    latency: float = 0.0,
    name: str = "random-platform",
) -> Platform:
    """Nodes with speeds in [0.5, 2] x reference and NICs in [0.5, 2] GB/s when heterogeneous."""
    nodes = []
    for k in range(n_nodes):
        speed = float(rng.uniform(0.5, 2.0)) if heterogeneous else 1.0
        bandwidth = float(rng.uniform(0.5, 2.0)) if heterogeneous else 1.0
        nodes.append(
            Node(
                name=f"n{k}",
                cores=cores,
                speed=speed * REFERENCE_SPEED,
                bandwidth=bandwidth * 1e9,
            )
        )
    return Platform(name, tuple(nodes), latency=latency)
