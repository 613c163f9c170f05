"""Candidate features on the engine's own view: :func:`~policy.learned.features.candidate_features`
computed per decision in a few whole-array operations (``features`` dispatches here; both read
the columns and the instance's constants from :mod:`policy.learned.instance_context`).

The same numbers as the generic path (IEEE float64, the same operations in the same order, then
one cast to float32), instead of one view call per node and per input file: the rollouts of
``policy-lookahead`` make tens of thousands of decisions per plan, so this is where its time goes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from policy.learned.instance_context import (
    CANDIDATE_FEATURES,
    PLANNED_COMPUTE,
    PRIOR_COST_TO_GO,
    PRIOR_GAP,
    RELATIVE_FINISH_CLIP,
    SPREAD,
    InstanceContext,
)
from sim.model import compute_time
from sim.view import EngineView


@dataclass(frozen=True)
class TaskConstants:
    """What :func:`candidate_features` needs of one task that no decision changes."""

    mask: np.ndarray
    unfit: np.ndarray
    inputs: tuple[tuple[int, int], ...]
    """(file index, size) per input, duplicates kept, as the task lists them."""
    from_fs: int
    """Bytes of its inputs that start on the shared filesystem (they never leave it)."""
    serve: np.ndarray
    compute: np.ndarray
    """Compute seconds on every node (:func:`sim.model.compute_time`)."""


@dataclass(frozen=True)
class InstanceConstants:
    """Per-node constants of an instance, and its tasks' constants as decisions need them."""

    context: InstanceContext
    bandwidth: np.ndarray
    speed_share: np.ndarray
    cores: np.ndarray
    file_index: dict[str, int]
    """File id -> the engine's file index (declaration order, as :mod:`sim.compiled`)."""
    unwritten: frozenset[str]
    tasks: dict[str, TaskConstants]


_instance_constants: dict[int, InstanceConstants] = {}


def constants_of(ctx: InstanceContext, task: str) -> tuple[TaskConstants, InstanceConstants]:
    """What no decision changes about ``task`` and the instance's nodes, computed once each."""
    instance = _instance_constants.get(id(ctx))
    if instance is None or instance.context is not ctx:
        if len(_instance_constants) >= 64:
            _instance_constants.clear()
        pf = ctx.platform
        instance = _instance_constants[id(ctx)] = InstanceConstants(
            context=ctx,
            bandwidth=np.array([n.bandwidth for n in pf.nodes], dtype=np.float64),
            speed_share=np.array([n.speed / pf.fastest_core_speed for n in pf.nodes]),
            cores=np.array([n.cores for n in pf.nodes]),
            file_index={f.id: i for i, f in enumerate(ctx.workflow.files)},
            unwritten=frozenset(ctx.workflow.input_files),
            tasks={},
        )
    constants = instance.tasks.get(task)
    if constants is None:
        constants = instance.tasks[task] = _task_constants(instance, task)
    return constants, instance


def _task_constants(instance: InstanceConstants, task: str) -> TaskConstants:
    ctx = instance.context
    wf, pf = ctx.workflow, ctx.platform
    t = wf.task_by_id[task]
    mask = np.array(
        [n.cores >= t.cores and n.memory >= t.memory and n.gpus >= t.gpus for n in pf.nodes],
        dtype=bool,
    )
    file_index, unwritten = instance.file_index, instance.unwritten
    return TaskConstants(
        mask=mask,
        unfit=~mask,
        inputs=tuple((file_index[f], wf.file_by_id[f].size) for f in t.inputs),
        from_fs=sum(wf.file_by_id[f].size for f in t.inputs if f in unwritten),
        serve=np.array([ctx.served_bytes[task] / n.bandwidth for n in pf.nodes]),
        compute=np.array([compute_time(t, n) for n in pf.nodes]),
    )


def engine_candidate_features(
    ctx: InstanceContext, task: str, view: EngineView
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~policy.learned.features.candidate_features` on the engine's own view."""
    constants, nodes = constants_of(ctx, task)
    mask = constants.mask
    now, scale = view.now, ctx.scale
    local = np.zeros(len(mask), dtype=np.float64)
    located = view.located
    for f, size in constants.inputs:
        for where in located[f]:
            local[where] += size
    fs_time = constants.from_fs / ctx.platform.shared_fs_bandwidth
    finish = np.array(view.estimate_finish_all(task), dtype=np.float64)
    inbound = np.maximum((ctx.input_bytes[task] - local) / nodes.bandwidth, fs_time)
    serve = constants.serve
    aware = np.maximum(finish, now + inbound + constants.compute) + serve
    own = max(ctx.mean_runtime[task], 1e-9)
    block = fixed_columns(ctx, task)
    block[:, 0] = (finish - now) / scale
    block[:, 1] = (finish - finish[mask].min()) / scale
    block[:, 2] = np.maximum(np.array(view.available_times()) - now, 0.0) / scale
    block[:, 3] = local / max(ctx.input_bytes[task], 1)
    block[:, 5] = np.array(view.free_cores_all()) / nodes.cores
    block[:, PRIOR_GAP] = (aware - aware[mask].min()) / own
    block[:, 9] = inbound / scale
    return to_features(block, constants.unfit), mask.copy()


FIXED_COLUMNS = (4, 6, PRIOR_COST_TO_GO, 10, PLANNED_COMPUTE, SPREAD)
"""Candidate columns that depend on the task and the node only, not on the decision."""


def fixed_columns(ctx: InstanceContext, task: str) -> np.ndarray:
    """A float64 (nodes, features) block with :data:`FIXED_COLUMNS` filled, the rest zero."""
    constants, nodes = constants_of(ctx, task)
    own = max(ctx.mean_runtime[task], 1e-9)
    scale = ctx.scale
    block = np.zeros((len(constants.mask), CANDIDATE_FEATURES), dtype=np.float64)
    block[:, 4] = nodes.speed_share
    block[:, 6] = ctx.upward[task] / scale
    block[:, PRIOR_COST_TO_GO] = ctx.lookahead[ctx.task_index[task]] / own
    block[:, 10] = constants.serve / scale
    block[:, PLANNED_COMPUTE] = constants.compute / scale
    block[:, SPREAD] = ctx.log_spread[ctx.task_index[task]] * constants.compute / own
    return block


def to_features(block: np.ndarray, unfit: np.ndarray) -> np.ndarray:
    """The float32 features of a float64 block: rows of nodes that cannot host the task keep
    only the task's upward rank, and every column is clipped."""
    feats = block.astype(np.float32)
    if unfit.any():
        feats[unfit] = 0.0
        feats[unfit, 6] = block[0, 6]
    np.minimum(feats, RELATIVE_FINISH_CLIP, out=feats)
    return feats
