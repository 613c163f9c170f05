"""The placement network: a heterogeneous GNN encoder and a per-candidate scoring head.

:class:`GraphEncoder` runs the HeteroConv (GraphSAGE) encoder over
:func:`~policy.learned.features.build_graph` once per workflow and joins, per decision, the
ready task's embedding, each node's embedding and the decision's candidate features. Two heads
sit on it: :class:`PolicyNet` (PPO), whose ``logits`` score every compute node and whose
``value`` estimates the normalised return, and the DQN's Q-network
(:mod:`policy.learned.dqn_model`). Masked candidates get the dtype's minimum, so they are never
chosen and carry no probability mass.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.data import HeteroData
from torch_geometric.nn import HeteroConv, SAGEConv

from policy.learned.features import FILE_FEATURES, NODE_FEATURES, TASK_FEATURES, graph_metadata
from policy.learned.instance_context import CANDIDATE_FEATURES, PRIOR_COST_TO_GO, PRIOR_GAP
from policy.learned.net_config import NetConfig
from policy.torch_checkpoint import load_weights, save_weights

INPUT_FEATURES = {"task": TASK_FEATURES, "compute": NODE_FEATURES, "file": FILE_FEATURES}


def candidate_mlp(hidden: int, extra_inputs: int = 0) -> nn.Sequential:
    """One hidden layer from a candidate's inputs (its task's and node's embeddings, the
    candidate features, ``extra_inputs`` more) to one number: PPO's scorer and critic, the
    DQN's two streams."""
    return nn.Sequential(
        nn.Linear(2 * hidden + CANDIDATE_FEATURES + extra_inputs, hidden),
        nn.ReLU(),
        nn.Linear(hidden, 1),
    )


class GraphEncoder(nn.Module):
    """The heterogeneous-graph encoder both learned schedulers share (PPO's and the DQN's)."""

    def __init__(self, cfg: NetConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg or NetConfig()
        h = self.cfg.hidden
        node_types, edge_types = graph_metadata()
        self.project = nn.ModuleDict({t: nn.Linear(INPUT_FEATURES[t], h) for t in node_types})
        self.convs = nn.ModuleList(
            HeteroConv({et: SAGEConv(h, h) for et in edge_types}, aggr="sum")
            for _ in range(self.cfg.layers)
        )

    def encode(self, graph: HeteroData) -> dict[str, Tensor]:
        """Node embeddings per type after message passing."""
        x = {t: torch.relu(self.project[t](graph[t].x)) for t in self.project}
        for conv in self.convs:
            out = conv(x, graph.edge_index_dict)
            x = {t: torch.relu(out[t]) + x[t] if t in out else x[t] for t in x}
        return x

    def candidate_inputs(self, emb: dict[str, Tensor], task_idx: Tensor, feats: Tensor) -> Tensor:
        """Per-decision, per-candidate head input: [task emb, node emb, candidate features].

        ``task_idx``: (D,) indices of the ready tasks; ``feats``: (D, N, F). Returns (D, N, 2h+F).
        """
        d, n, _ = feats.shape
        task = emb["task"][task_idx].unsqueeze(1).expand(d, n, -1)
        nodes = emb["compute"].unsqueeze(0).expand(d, n, -1)
        return torch.cat([task, nodes, feats], dim=-1)


class PolicyNet(GraphEncoder):
    """GNN encoder + candidate scorer + value head."""

    def __init__(self, cfg: NetConfig | None = None) -> None:
        super().__init__(cfg)
        h = self.cfg.hidden
        self.head = candidate_mlp(h)
        # Earliest-finish prior: logits start as -eft_prior * (finish - best finish) in units of
        # the task's runtime, the finish counting the NIC time of the task's data (features.py),
        # so an untrained policy already behaves like a data-aware dynamic EFT (sampling
        # explores only among near-ties) and learning adds corrections.
        self.eft_prior = nn.Parameter(torch.tensor(40.0))
        self.lookahead_weight = nn.Parameter(torch.tensor(0.0))
        """Weight of PEFT's cost-to-go next to the finish gap in the prior (learned)."""
        self.critic = candidate_mlp(h, extra_inputs=1)

    def logits(self, inputs: Tensor, mask: Tensor) -> Tensor:
        """(D, N) masked logits from :meth:`candidate_inputs`."""
        base = 2 * self.cfg.hidden
        relative_finish = inputs[..., base + PRIOR_GAP]
        lookahead = inputs[..., base + PRIOR_COST_TO_GO]
        prior = self.eft_prior * (relative_finish + self.lookahead_weight * lookahead)
        raw = self.head(inputs).squeeze(-1) - prior
        return raw.masked_fill(~mask, torch.finfo(raw.dtype).min)

    def value(self, inputs: Tensor, mask: Tensor, progress: Tensor) -> Tensor:
        """(D,) state values: mean over valid candidates, plus the fraction of tasks placed."""
        weights = mask.float().unsqueeze(-1)
        pooled = (inputs * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return self.critic(torch.cat([pooled, progress.unsqueeze(-1)], dim=-1)).squeeze(-1)


def save_checkpoint(net: PolicyNet, path: str, extra: dict[str, object] | None = None) -> None:
    """Weights, network shape and training metadata in one small ``.pt`` file."""
    save_weights(net, net.cfg, path, extra)


def load_checkpoint(path: str) -> tuple[PolicyNet, dict[str, object]]:
    """A network in eval mode and the metadata it was saved with; a file that is not one
    raises :class:`~sim.errors.InputError`."""
    return load_weights(path, lambda cfg: PolicyNet(NetConfig(**cfg)), "policy")
