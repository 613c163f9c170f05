"""The greedy network's decisions inside the simulator's compiled core: :func:`compiled_chooser`.

``policy-lookahead``'s rollouts make tens of thousands of greedy decisions per plan; each one
through Python (a call out of the core, the candidate features in NumPy, the head in torch) cost
~0.3 ms, 90% of a plan. :func:`compiled_chooser` hands the core (``sim._core.Chooser``,
sim/csrc/chooser.c) what those decisions need, once per plan: the per-task constants of
:mod:`policy.learned.engine_features`, the float32 feature columns no decision changes, and the
head's weights with the embeddings' part of its first layer already multiplied out.

The plans do not change. The core computes the changing features with the same float64
operations as :func:`~policy.learned.engine_features.engine_candidate_features` (bit-identical,
tested on every decision of rollouts), and the head in float64 with a rigorous bound on torch's
float32 rounding: it decides only when the winner's margin exceeds that bound, so torch's
argmax is certainly the same node; otherwise (near-ties between identical nodes, say) it asks
the Python continuation, which runs the network as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from policy.learned.engine_features import constants_of, fixed_columns, to_features
from policy.learned.instance_context import InstanceContext
from policy.learned.model import PolicyNet
from sim.compiled import compile_workflow


def _fixed_features(ctx: InstanceContext, task: str) -> np.ndarray:
    """The float32 values of the columns no decision changes, for ``task`` on every node (the
    others zero; the core fills them per decision)."""
    return to_features(fixed_columns(ctx, task), constants_of(ctx, task)[0].unfit)


def _head_arrays(net: PolicyNet, emb: dict[str, torch.Tensor]) -> dict[str, Any]:
    """The head's weights in float64, its first layer's embedding part multiplied out."""
    h = net.cfg.hidden
    w1 = net.head[0].weight.detach().double().numpy()
    b1 = net.head[0].bias.detach().double().numpy()
    task = emb["task"].detach().double().numpy()
    nodes = emb["compute"].detach().double().numpy()
    w_task, w_node, w_feat = w1[:, :h], w1[:, h : 2 * h], w1[:, 2 * h :]
    return {
        "base": b1 + task @ w_task.T,
        "base_abs": np.abs(b1) + np.abs(task) @ np.abs(w_task).T,
        "node": nodes @ w_node.T,
        "node_abs": np.abs(nodes) @ np.abs(w_node).T,
        "w1f": np.ascontiguousarray(w_feat.T),
        "w2": net.head[2].weight.detach().double().numpy()[0],
        "b2": float(net.head[2].bias.detach().double().item()),
    }


def _bytes(a: Any, dtype: Any) -> bytes:
    return np.ascontiguousarray(a, dtype=dtype).tobytes()


def compiled_chooser(
    ctx: InstanceContext, net: PolicyNet, emb: dict[str, torch.Tensor], priority: dict[str, float]
) -> Any:
    """A ``sim._core.Chooser`` that decides as the greedy network on ``ctx``'s instance.

    ``priority``: the scheduler's placement priority per task (ties: topological order, as
    :meth:`sim.dispatch.Dispatcher.order`), so the core orders ready tasks itself.
    """
    from sim import _core  # type: ignore[attr-defined]

    wf, pf = ctx.workflow, ctx.platform
    nt, nn = len(wf.tasks), len(pf.nodes)
    per_task = [constants_of(ctx, t.id) for t in wf.tasks]
    nodes = per_task[0][1]
    in_off = np.cumsum([0] + [len(c.inputs) for c, _ in per_task])
    inputs = [pair for c, _ in per_task for pair in c.inputs]
    topo = compile_workflow(wf).topo_rank
    order = sorted(range(nt), key=lambda t: (-priority[wf.tasks[t].id], topo[t]))
    rank = np.empty(nt, dtype=np.int32)
    rank[order] = np.arange(nt, dtype=np.int32)
    head = _head_arrays(net, emb)
    f64 = np.float64
    return _core.Chooser(
        nt,
        nn,
        net.cfg.hidden,
        _bytes([c.mask for c, _ in per_task], np.uint8),
        _bytes(in_off, np.int32),
        _bytes([f for f, _ in inputs], np.int32),
        _bytes([float(size) for _, size in inputs], f64),
        _bytes([c.from_fs / pf.shared_fs_bandwidth for c, _ in per_task], f64),
        _bytes([float(ctx.input_bytes[t.id]) for t in wf.tasks], f64),
        _bytes([float(max(ctx.input_bytes[t.id], 1)) for t in wf.tasks], f64),
        _bytes([max(ctx.mean_runtime[t.id], 1e-9) for t in wf.tasks], f64),
        _bytes(nodes.bandwidth, f64),
        _bytes(nodes.cores, f64),
        _bytes([c.serve for c, _ in per_task], f64),
        _bytes([c.compute for c, _ in per_task], f64),
        _bytes([_fixed_features(ctx, t.id) for t in wf.tasks], np.float32),
        _bytes(head["base"], f64),
        _bytes(head["base_abs"], f64),
        _bytes(head["node"], f64),
        _bytes(head["node_abs"], f64),
        _bytes(head["w1f"], f64),
        _bytes(head["w2"], f64),
        head["b2"],
        float(net.eft_prior.item()),
        float(net.lookahead_weight.item()),
        _bytes(rank, np.int32),
        ctx.scale,
    )
