"""State encoding of the learned policy: a heterogeneous graph per workflow, features per decision.

Two parts, split by how often they change:

* :func:`build_graph` turns a workflow on a platform into a PyG ``HeteroData`` with task nodes
  (work, cores, memory, GPUs, mean runtime, depth, upward rank), compute nodes (cores, speed,
  memory, GPUs, bandwidth), file nodes (size, starts on the shared filesystem) and the edges
  task->task, file->task, task->file, file->compute (where a file is), reverse edges always
  added. The GNN encoder reads it once per workflow.
* :func:`candidate_features` describes, at one decision, every compute node as a candidate for
  the ready task: estimated finish there, time the node stays busy, input bytes already local,
  speed, free cores, the time the task's data needs through that node's NIC, and what the
  planning view says the task computes there with the retrieved spread of that runtime. The scoring
  head reads these per decision (tens of microseconds), which is what keeps per-decision
  inference far below a millisecond and lets the head run on its own (the job_submit plugin's
  inference mode).

Times are divided by a per-instance scale (:attr:`InstanceContext.scale`) so features are
comparable across workflows of very different sizes. The instance's constants and the candidate
columns live in :mod:`policy.learned.instance_context`; :func:`candidate_features` on the
engine's own view is computed in whole arrays by :mod:`policy.learned.engine_features`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch_geometric.data import HeteroData

from policy.learned.engine_features import engine_candidate_features
from policy.learned.instance_context import (
    CANDIDATE_FEATURES,
    PLANNED_COMPUTE,
    PRIOR_COST_TO_GO,
    PRIOR_GAP,
    RELATIVE_FINISH_CLIP,
    SPREAD,
    InstanceContext,
)
from sim.model import REFERENCE_SPEED, Workflow, compute_time, hosts, node_fits
from sim.schedule import SHARED_FS, ClusterView
from sim.view import EngineView

TASK_FEATURES = 8
NODE_FEATURES = 6
FILE_FEATURES = 2

EDGE_TYPES: tuple[tuple[str, str, str], ...] = (
    ("task", "precedes", "task"),
    ("file", "feeds", "task"),
    ("task", "writes", "file"),
    ("file", "located_on", "compute"),
)


def _depths(workflow: Workflow) -> dict[str, int]:
    depth: dict[str, int] = {}
    for t in workflow.topological_order:
        depth[t] = 1 + max((depth[p] for p in workflow.parents[t]), default=-1)
    return depth


def build_graph(ctx: InstanceContext) -> HeteroData:
    """The workflow and platform as a heterogeneous graph with reverse edges."""
    wf, pf = ctx.workflow, ctx.platform
    depth = _depths(wf)
    max_depth = max(max(depth.values()), 1)
    max_cores = max(n.cores for n in pf.nodes)
    max_mem = max(max(n.memory for n in pf.nodes), 1)
    max_speed = pf.fastest_core_speed
    max_bw = max(n.bandwidth for n in pf.nodes)
    log_work_max = max(math.log1p(t.work / REFERENCE_SPEED) for t in wf.tasks) or 1.0
    task_x = np.array(
        [
            [
                math.log1p(t.work / REFERENCE_SPEED) / log_work_max,
                t.cores / max_cores,
                t.memory / max_mem,
                float(t.gpus > 0),
                ctx.mean_runtime[t.id] / ctx.scale,
                depth[t.id] / max_depth,
                ctx.upward[t.id] / ctx.scale,
                len(hosts(t, pf)) / len(pf.nodes),
            ]
            for t in wf.tasks
        ],
        dtype=np.float32,
    )
    node_x = np.array(
        [
            [
                n.cores / max_cores,
                n.speed / max_speed,
                n.memory / max_mem,
                float(n.gpus > 0),
                n.bandwidth / max_bw,
                n.cores * n.speed / pf.total_capacity,
            ]
            for n in pf.nodes
        ],
        dtype=np.float32,
    )
    files = wf.files
    file_index = {f.id: i for i, f in enumerate(files)}
    log_size_max = max((math.log1p(f.size) for f in files), default=1.0) or 1.0
    inputs = set(wf.input_files)
    file_x = np.array(
        [[math.log1p(f.size) / log_size_max, float(f.id in inputs)] for f in files],
        dtype=np.float32,
    ).reshape(len(files), FILE_FEATURES)

    ti = ctx.task_index
    precedes = [(ti[p], ti[c]) for c in wf.task_by_id for p in wf.parents[c]]
    feeds = [(file_index[f], ti[t.id]) for t in wf.tasks for f in t.inputs]
    writes = [(ti[t.id], file_index[f]) for t in wf.tasks for f in t.outputs]
    data = HeteroData()
    data["task"].x = torch.from_numpy(task_x)
    data["compute"].x = torch.from_numpy(node_x)
    data["file"].x = torch.from_numpy(file_x)
    # Where files are at the start: workflow inputs are on the shared filesystem, which is no
    # compute node, so the location edges start empty and fill in as outputs are produced.
    located: list[tuple[int, int]] = []
    for (src, rel, dst), pairs in zip(EDGE_TYPES, (precedes, feeds, writes, located), strict=True):
        data[src, rel, dst].edge_index = _edges(pairs)
        data[dst, f"rev_{rel}", src].edge_index = _edges([(b, a) for a, b in pairs])
    return data


def _edges(pairs: list[tuple[int, int]]) -> torch.Tensor:
    if not pairs:
        return torch.empty((2, 0), dtype=torch.long)
    return torch.tensor(pairs, dtype=torch.long).t().contiguous()


def graph_metadata() -> tuple[list[str], list[tuple[str, str, str]]]:
    """Node and edge types of :func:`build_graph` (reverse edges included), for the model."""
    edges = list(EDGE_TYPES) + [(d, f"rev_{r}", s) for s, r, d in EDGE_TYPES]
    return ["task", "compute", "file"], edges


def candidate_features(
    ctx: InstanceContext, task: str, view: ClusterView
) -> tuple[np.ndarray, np.ndarray]:
    """Features of every compute node as a candidate for ``task``, and the validity mask.

    Columns, times in units of the instance's scale and clipped at ``RELATIVE_FINISH_CLIP``:

    0. estimated finish if placed there (the simulator's estimate), relative to now;
    1. the same, relative to the best candidate;
    2. time until the node drains;
    3. share of the task's input bytes already there;
    4. speed relative to the fastest node;
    5. free-core share;
    6. the task's upward rank;
    7. (:data:`PRIOR_GAP`) gap to the best *data-aware* finish (below), in units of the task's
       own mean runtime: the scale on which "a node that finishes this task much later" is
       visible, which the model's earliest-finish prior reads;
    8. (:data:`PRIOR_COST_TO_GO`) PEFT's optimistic cost-to-go from that node, same units;
    9. time to pull the inputs not already there through the node's NIC (or the shared
       filesystem, whichever is slower);
    10. time to serve the task's outputs to every reader through the node's NIC;
    11. (:data:`PLANNED_COMPUTE`) the task's compute time there on the planning view;
    12. (:data:`SPREAD`) the retrieved log-spread of its runtime times that compute time, in
        units of its own mean runtime: how uncertain the finish there is.

    The data-aware finish is ``max(estimate, now + column 9 + compute) + column 10``. The
    simulator's estimate, like HEFT's, charges each source's largest missing file as if it were
    alone on the network; when hundreds of inputs converge on one NIC, or one task's outputs fan
    out to a hundred readers, the fair network shares that NIC and the estimate misses most of
    the transfer time. On data-intensive instances (CCR 1) this alone moved the untrained
    policy per evaluation seed (docs/results-log.md, the data-aware prior entry).
    """
    if isinstance(view, EngineView):
        return engine_candidate_features(ctx, task, view)
    wf, pf = ctx.workflow, ctx.platform
    t = wf.task_by_id[task]
    now = view.now
    n = len(pf.nodes)
    feats = np.zeros((n, CANDIDATE_FEATURES), dtype=np.float32)
    mask = np.zeros(n, dtype=bool)
    total_in = max(ctx.input_bytes[task], 1)
    local = np.zeros(n, dtype=np.float64)
    sizes = wf.file_by_id
    from_fs = 0
    for f in t.inputs:
        locations = view.file_locations(f)
        from_fs += sizes[f].size if SHARED_FS in locations else 0
        for where in locations:
            if where != SHARED_FS:
                local[ctx.node_index[where]] += sizes[f].size
    finish = np.full(n, np.inf)
    aware = np.full(n, np.inf)
    fastest = pf.fastest_core_speed
    fs_time = from_fs / pf.shared_fs_bandwidth
    own = max(ctx.mean_runtime[task], 1e-9)
    for i, node in enumerate(pf.nodes):
        if not node_fits(t, node):
            continue
        mask[i] = True
        finish[i] = view.estimate_finish(task, node.name)
        inbound = max((ctx.input_bytes[task] - local[i]) / node.bandwidth, fs_time)
        serve = ctx.served_bytes[task] / node.bandwidth
        compute = compute_time(t, node)
        aware[i] = max(finish[i], now + inbound + compute) + serve
        feats[i, 2] = max(view.available_time(node.name) - now, 0.0) / ctx.scale
        feats[i, 3] = local[i] / total_in
        feats[i, 4] = node.speed / fastest
        feats[i, 5] = view.free_cores(node.name) / node.cores
        feats[i, 9] = inbound / ctx.scale
        feats[i, 10] = serve / ctx.scale
        feats[i, PLANNED_COMPUTE] = compute / ctx.scale
        feats[i, SPREAD] = ctx.log_spread[ctx.task_index[task]] * compute / own
    best = finish[mask].min()
    feats[mask, 0] = (finish[mask] - now) / ctx.scale
    feats[mask, 1] = (finish[mask] - best) / ctx.scale
    feats[:, 6] = ctx.upward[task] / ctx.scale
    feats[mask, PRIOR_GAP] = (aware[mask] - aware[mask].min()) / own
    feats[mask, PRIOR_COST_TO_GO] = ctx.lookahead[ctx.task_index[task], mask] / own
    np.minimum(feats, RELATIVE_FINISH_CLIP, out=feats)
    return feats, mask
