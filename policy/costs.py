"""Exact per-task and per-file costs of the simulator's model, for planning.

These mirror ``sim.engine`` under the ``ideal`` network model, so a static schedule planned
with them on one-core nodes is replayed by the simulator with the planned makespan:

* a task runs :func:`sim.model.compute_time` (``work / (speed * cores)`` on its cores, or on its
  GPUs at the GPU type's speed), not before its ``release`` (its workflow's arrival);
* a file moving between two distinct nodes takes ``latency + size / min(bandwidths)``;
* a workflow input file is read from the shared filesystem from the task's release, taking
  ``latency + size / min(shared_fs_bandwidth, node bandwidth)``;
* a file already on the consumer's node costs nothing; files move in parallel.
"""

from __future__ import annotations

from collections.abc import Mapping

from sim.model import Node, Platform, Workflow


def transfer_time(size: float, platform: Platform, source: Node, destination: Node) -> float:
    """Uncontended seconds to move ``size`` bytes between two nodes (0 on the same node)."""
    if source.name == destination.name:
        return 0.0
    return platform.latency + size / min(source.bandwidth, destination.bandwidth)


def shared_fs_read_time(size: float, platform: Platform, destination: Node) -> float:
    """Uncontended seconds to read ``size`` bytes from the shared filesystem onto a node."""
    bandwidth = min(platform.shared_fs_bandwidth, destination.bandwidth)
    return platform.latency + size / bandwidth


def data_ready_time(
    workflow: Workflow,
    platform: Platform,
    task_id: str,
    node: Node,
    placement: Mapping[str, str],
    finish: Mapping[str, float],
) -> float:
    """Earliest time every input of ``task_id`` is on ``node``, every parent has finished and
    the task is released.

    ``placement`` and ``finish`` give the node and finish time of every parent; transfers start
    when their producer finishes (or at the task's release on the shared filesystem: the
    simulator reads a workflow's inputs from its arrival) and run in parallel.
    """
    nodes = platform.node_by_name
    task = workflow.task_by_id[task_id]
    ready = task.release
    for parent in workflow.parents[task_id]:
        ready = max(ready, finish[parent])
    for file_id in task.inputs:
        size = workflow.file_by_id[file_id].size
        producer = workflow.producer.get(file_id)
        if producer is None:
            arrival = task.release + shared_fs_read_time(size, platform, node)
        elif producer == task_id:
            continue
        else:
            source = nodes[placement[producer]]
            arrival = finish[producer] + transfer_time(size, platform, source, node)
        ready = max(ready, arrival)
    return ready
