"""Integer-indexed views of a workflow and a platform for the simulator's hot loop.

The engine runs millions of times during knowledge-base seeding and training, so it never walks
string-keyed dictionaries per event: tasks, files and nodes become list positions, and every
per-task fact it needs (work, cores, parents, input files...) sits in a plain list. A workflow is
compiled once and the result is cached for as long as the workflow object lives.

:func:`gpus_on` and :func:`duration` are :func:`sim.model.gpus_used` and
:func:`sim.model.compute_time` on indices, with the same arithmetic (the engines' hot loops call
them only for tasks that use GPUs; the others keep the inline ``work / (speed * cores)``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from sim.model import Platform, Workflow


@dataclass(frozen=True, slots=True)
class CompiledWorkflow:
    """A workflow as parallel lists indexed by task position (declaration order) and file index."""

    task_ids: tuple[str, ...]
    work: tuple[float, ...]
    cores: tuple[int, ...]
    memory: tuple[int, ...]
    gpus: tuple[int, ...]
    parents: tuple[tuple[int, ...], ...]
    children: tuple[tuple[int, ...], ...]
    inputs: tuple[tuple[int, ...], ...]
    """Distinct input files of each task."""
    outputs: tuple[tuple[int, ...], ...]
    topo_rank: tuple[int, ...]
    """Position of each task in the workflow's topological order (deterministic tie-break)."""
    file_ids: tuple[str, ...]
    file_size: tuple[int, ...]
    producer: tuple[int, ...]
    """Task index writing each file, -1 for workflow inputs (they live on the shared filesystem)."""
    consumers: tuple[tuple[int, ...], ...]
    task_index: dict[str, int]
    file_index: dict[str, int]
    prefers_gpu: tuple[int, ...]
    """1 for a task that takes one GPU where the node has them (``Task.prefers_gpu``)."""
    release: tuple[float, ...]
    """Earliest start of each task (its workflow's arrival; 0 for most)."""
    release_times: tuple[float, ...]
    """The distinct positive releases, ascending: one engine event each."""
    released_tasks: tuple[tuple[int, ...], ...]
    """Per release time, the tasks released then (each waits for it like for a parent)."""
    released_inputs: tuple[tuple[int, ...], ...]
    """Per release time, the workflow input files whose first reader is released then: in
    static mode their eager reads from the shared filesystem start at that time, not at 0."""

    @property
    def n_tasks(self) -> int:
        return len(self.task_ids)


@dataclass(frozen=True, slots=True)
class CompiledPlatform:
    """A platform as parallel lists indexed by node position."""

    names: tuple[str, ...]
    cores: tuple[int, ...]
    speed: tuple[float, ...]
    memory: tuple[int, ...]
    gpus: tuple[int, ...]
    bandwidth: tuple[float, ...]
    latency: float
    fs_bandwidth: float
    node_index: dict[str, int]
    n_nodes: int
    link_bandwidth: tuple[tuple[float, ...], ...]
    """``link_bandwidth[s][d]``: uncontended bandwidth from node ``s`` to node ``d``, the smaller
    of the two ends; the last row (index -1) is the shared filesystem's."""
    gpu_speed: tuple[float, ...]
    """Per node, its GPU type's speed per device (0.0: untyped or no GPUs)."""


def gpus_on(wf: CompiledWorkflow, pf: CompiledPlatform, task: int, node: int) -> int:
    """GPUs ``task`` reserves on ``node`` (:func:`sim.model.gpus_used`)."""
    gpus = wf.gpus[task]
    if gpus:
        return gpus
    return 1 if wf.prefers_gpu[task] and pf.gpus[node] > 0 else 0


def duration(wf: CompiledWorkflow, pf: CompiledPlatform, task: int, node: int) -> float:
    """Compute seconds of ``task`` on ``node`` (:func:`sim.model.compute_time`)."""
    used = gpus_on(wf, pf, task, node)
    if used and pf.gpu_speed[node] > 0:
        return wf.work[task] / (pf.gpu_speed[node] * used)
    return wf.work[task] / (pf.speed[node] * wf.cores[task])


_workflow_cache: dict[int, tuple[weakref.ref[Workflow], CompiledWorkflow]] = {}
_platform_cache: dict[int, tuple[weakref.ref[Platform], CompiledPlatform]] = {}


def compile_workflow(workflow: Workflow) -> CompiledWorkflow:
    """The indexed view of ``workflow``, built once per workflow object."""
    key = id(workflow)
    cached = _workflow_cache.get(key)
    if cached is not None and cached[0]() is workflow:
        return cached[1]
    compiled = _build_workflow(workflow)
    forget = weakref.ref(workflow, lambda _: _workflow_cache.pop(key, None))
    _workflow_cache[key] = (forget, compiled)
    return compiled


def compile_platform(platform: Platform) -> CompiledPlatform:
    """The indexed view of ``platform``, built once per platform object."""
    key = id(platform)
    cached = _platform_cache.get(key)
    if cached is not None and cached[0]() is platform:
        return cached[1]
    nodes = platform.nodes
    compiled = CompiledPlatform(
        names=tuple(n.name for n in nodes),
        cores=tuple(n.cores for n in nodes),
        speed=tuple(n.speed for n in nodes),
        memory=tuple(n.memory for n in nodes),
        gpus=tuple(n.gpus for n in nodes),
        bandwidth=tuple(n.bandwidth for n in nodes),
        latency=platform.latency,
        fs_bandwidth=platform.shared_fs_bandwidth,
        node_index={n.name: i for i, n in enumerate(nodes)},
        n_nodes=len(nodes),
        link_bandwidth=tuple(
            tuple(min(up, d.bandwidth) for d in nodes)
            for up in [*(n.bandwidth for n in nodes), platform.shared_fs_bandwidth]
        ),
        gpu_speed=tuple(n.gpu_type.speed if n.gpu_type is not None else 0.0 for n in nodes),
    )
    forget = weakref.ref(platform, lambda _: _platform_cache.pop(key, None))
    _platform_cache[key] = (forget, compiled)
    return compiled


def _build_workflow(wf: Workflow) -> CompiledWorkflow:
    task_index = {t.id: i for i, t in enumerate(wf.tasks)}
    file_index = {f.id: i for i, f in enumerate(wf.files)}
    producer = [-1] * len(wf.files)
    consumers: list[list[int]] = [[] for _ in wf.files]
    inputs: list[tuple[int, ...]] = []
    for i, t in enumerate(wf.tasks):
        for f in t.outputs:
            producer[file_index[f]] = i
        distinct = tuple(dict.fromkeys(file_index[f] for f in t.inputs))
        inputs.append(distinct)
        for f_idx in distinct:
            consumers[f_idx].append(i)
    rank = {tid: k for k, tid in enumerate(wf.topological_order)}
    release = tuple(float(t.release) for t in wf.tasks)
    release_times = tuple(sorted({r for r in release if r > 0}))
    group = {r: k for k, r in enumerate(release_times)}
    released_tasks: list[list[int]] = [[] for _ in release_times]
    for i, r in enumerate(release):
        if r > 0:
            released_tasks[group[r]].append(i)
    first_read = [
        0.0 if p >= 0 or not readers else min(release[c] for c in readers)
        for p, readers in zip(producer, consumers, strict=True)
    ]
    released_inputs: list[list[int]] = [[] for _ in release_times]
    for file, r in enumerate(first_read):
        if r > 0:
            released_inputs[group[r]].append(file)
    return CompiledWorkflow(
        task_ids=tuple(t.id for t in wf.tasks),
        work=tuple(float(t.work) for t in wf.tasks),
        cores=tuple(t.cores for t in wf.tasks),
        memory=tuple(t.memory for t in wf.tasks),
        gpus=tuple(t.gpus for t in wf.tasks),
        parents=tuple(tuple(task_index[p] for p in wf.parents[t.id]) for t in wf.tasks),
        children=tuple(tuple(task_index[c] for c in wf.children[t.id]) for t in wf.tasks),
        inputs=tuple(inputs),
        outputs=tuple(tuple(dict.fromkeys(file_index[f] for f in t.outputs)) for t in wf.tasks),
        topo_rank=tuple(rank[t.id] for t in wf.tasks),
        file_ids=tuple(f.id for f in wf.files),
        file_size=tuple(f.size for f in wf.files),
        producer=tuple(producer),
        consumers=tuple(tuple(c) for c in consumers),
        task_index=task_index,
        file_index=file_index,
        prefers_gpu=tuple(int(t.prefers_gpu) for t in wf.tasks),
        release=release,
        release_times=release_times,
        released_tasks=tuple(tuple(g) for g in released_tasks),
        released_inputs=tuple(tuple(g) for g in released_inputs),
    )
