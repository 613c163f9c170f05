"""Decima's graph network, small and on CPU: per-task embeddings by message passing from
children to parents over each workflow's remaining DAG, a summary per workflow, a global one,
and a score per task; a masked softmax over the executable tasks picks the next.

After Mao et al., "Learning Scheduling Algorithms for Data Processing Clusters" (SIGCOMM
2019), section 5.1: ``e_v = h(x_v) + g(sum over children u of f(e_u))``, computed exactly
level by level from the sinks up (Decima's own exact aggregation over the job DAG);
``y_w = g_w(sum over v in w of f_w([x_v, e_v]))``; ``z = g_z(sum over w of f_z(y_w))``;
``q_v = q([x_v, e_v, y_w(v), z])``. Decima's parallelism-limit head and executor classes are not
here: placement is DEFT with duplication (:mod:`policy.dispatch`).

The state (:class:`GraphState`) is built by :mod:`policy.learned.decima` at each dispatch
event; this module only holds tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from policy.torch_checkpoint import load_weights, save_weights

TASK_FEATURES = 9
"""Columns of :attr:`GraphState.features` (see ``policy.learned.decima.task_features``)."""


@dataclass(frozen=True)
class DecimaConfig:
    """The network's shape."""

    hidden: int = 16
    features: int = TASK_FEATURES


@dataclass(frozen=True)
class GraphState:
    """The remaining tasks of every arrived workflow at one dispatch event, as tensors."""

    features: Tensor
    """(V, F) float: one row per remaining task."""
    levels: tuple[tuple[Tensor, Tensor, Tensor], ...]
    """Per level above the sinks, in order: (parents at that level, edge parents, edge
    children), indices into the rows; every child sits on a lower level."""
    workflow: Tensor
    """(V,) long: each row's workflow, 0..W-1."""
    workflows: int
    executable: Tensor
    """(E,) long: the rows that may be chosen (the mask of the softmax)."""
    graph: Tensor | None = None
    """(W,) long: each workflow's state when several are batched (None: one state)."""
    graphs: int = 1


def batch_states(states: list[GraphState]) -> GraphState:
    """Several states as one disjoint graph (levels merged by height), so one forward and one
    backward pass serve a whole training step; logits come out state after state."""
    rows = workflows = 0
    features, workflow, executable, graph = [], [], [], []
    levels: dict[int, tuple[list[Tensor], list[Tensor], list[Tensor]]] = {}
    for k, state in enumerate(states):
        features.append(state.features)
        workflow.append(state.workflow + workflows)
        executable.append(state.executable + rows)
        graph.append(torch.full((state.workflows,), k, dtype=torch.long))
        for height, level in enumerate(state.levels):
            merged = levels.setdefault(height, ([], [], []))
            for part, indices in zip(merged, level, strict=True):
                part.append(indices + rows)
        rows += len(state.features)
        workflows += state.workflows
    return GraphState(
        torch.cat(features),
        tuple(tuple(torch.cat(part) for part in levels[h]) for h in sorted(levels)),  # type: ignore[misc]
        torch.cat(workflow),
        workflows,
        torch.cat(executable),
        torch.cat(graph),
        len(states),
    )


def _mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(inputs, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, outputs))


class DecimaNet(nn.Module):
    """Scores of the executable tasks from a :class:`GraphState`."""

    def __init__(self, cfg: DecimaConfig) -> None:
        super().__init__()
        self.cfg = cfg
        h, f = cfg.hidden, cfg.features
        self.own = _mlp(f, h, h)
        self.message = _mlp(h, h, h)
        self.gather = _mlp(h, h, h)
        self.workflow_in = _mlp(f + h, h, h)
        self.workflow_out = _mlp(h, h, h)
        self.global_in = _mlp(h, h, h)
        self.global_out = _mlp(h, h, h)
        self.score = _mlp(f + 3 * h, h, 1)

    def embed(self, state: GraphState) -> Tensor:
        """(V, H) task embeddings, children's messages summed into their parents."""
        emb = self.own(state.features)
        for parents, edge_parent, edge_child in state.levels:
            summed = torch.zeros_like(emb).index_add(0, edge_parent, self.message(emb[edge_child]))
            emb = emb.index_add(0, parents, self.gather(summed[parents]))
        return emb

    def logits(self, state: GraphState) -> Tensor:
        """(E,) scores of ``state.executable``, in that order."""
        emb = self.embed(state)
        rows = torch.cat([state.features, emb], dim=1)
        per_workflow = torch.zeros(state.workflows, self.cfg.hidden).index_add(
            0, state.workflow, self.workflow_in(rows)
        )
        summary = self.workflow_out(per_workflow)
        graph = state.graph if state.graph is not None else torch.zeros_like(summary[:, 0]).long()
        per_graph = torch.zeros(state.graphs, self.cfg.hidden).index_add(
            0, graph, self.global_in(summary)
        )
        total = self.global_out(per_graph)
        picked = state.executable
        owner = state.workflow[picked]
        inputs = torch.cat([rows[picked], summary[owner], total[graph[owner]]], dim=1)
        return self.score(inputs).squeeze(-1)


def initial_net(seed: int = 0, cfg: DecimaConfig | None = None) -> DecimaNet:
    """The network at its seeded initialisation (the ``decima-untrained`` ablation)."""
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        net = DecimaNet(cfg or DecimaConfig())
    finally:
        torch.random.set_rng_state(generator_state)
    return net.eval()


def save_decima(net: DecimaNet, path: str, extra: dict[str, object] | None = None) -> None:
    """Weights, network shape and training metadata in one small ``.pt`` file."""
    save_weights(net, net.cfg, path, extra)


def load_decima(path: str) -> tuple[DecimaNet, dict[str, object]]:
    """A network in eval mode and its metadata; a file that is not one raises
    :class:`~sim.errors.InputError`."""
    return load_weights(path, lambda cfg: DecimaNet(DecimaConfig(**cfg)), "Decima")
