"""The DQN's Q-network: the PPO policy's graph encoder with a Q-value head per candidate node.

``q_values`` estimates, for the ready task, the return of placing it on each compute node:
minus the (discounted) time this and the following tasks take to finish, in units of the
instance's time scale (:mod:`policy.learned.dqn_agent`). Dueling form (Wang et al., "Dueling
Network Architectures for Deep Reinforcement Learning", ICML 2016): ``Q = V(s) + A(s, a) -
mean over valid a of A(s, a)``, the state value read from the valid candidates' inputs pooled,
the advantage per candidate
from [task embedding, node embedding, candidate features] minus the PPO network's data-aware
earliest-finish prior written in the return's own units: ``prior * (aware - best aware)``, with
``aware = max(finish - now, inbound + compute) + serve`` from the candidate columns (the
simulator's estimate, or the time the task's data needs through the node's NIC, whichever is
later, plus serving its outputs; docs/learned.md), the weight learned and the advantage's last
layer starting at zero. So an untrained network places like the PPO policy's prior, and its
advantage starts at the one-step reward difference between nodes. (With the prior in the PPO
network's units, the task's own runtime, it outweighed every learned correction tenfold and
training drifted away from it.) Invalid nodes get the dtype's minimum: never
the argmax, never the target's max.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from policy.learned.instance_context import (
    FINISH_FROM_NOW,
    INBOUND,
    PLANNED_COMPUTE,
    SERVE,
)
from policy.learned.model import GraphEncoder, candidate_mlp
from policy.learned.net_config import NetConfig
from policy.torch_checkpoint import load_weights, save_weights


class QNet(GraphEncoder):
    """Graph encoder + per-candidate Q head."""

    def __init__(self, cfg: NetConfig | None = None) -> None:
        super().__init__(cfg)
        h = self.cfg.hidden
        self.advantage = candidate_mlp(h)
        self.state_value = candidate_mlp(h)
        nn.init.zeros_(self.advantage[-1].weight)  # untrained: the prior alone decides
        nn.init.zeros_(self.advantage[-1].bias)
        self.prior = nn.Parameter(torch.tensor(1.0))
        """Weight of the data-aware earliest-finish prior (:meth:`aware_gap`)."""

    def aware_gap(self, inputs: Tensor, mask: Tensor) -> Tensor:
        """(D, N) each valid node's data-aware finish minus the best one's (time units)."""
        f = inputs[..., 2 * self.cfg.hidden :]
        compute = f[..., PLANNED_COMPUTE]
        aware = torch.maximum(f[..., FINISH_FROM_NOW], f[..., INBOUND] + compute) + f[..., SERVE]
        best = aware.masked_fill(~mask, torch.inf).min(dim=-1, keepdim=True).values
        return (aware - best).masked_fill(~mask, 0.0)

    def q_values(self, inputs: Tensor, mask: Tensor) -> Tensor:
        """(D, N) Q-values from :meth:`candidate_inputs`, invalid nodes at the dtype's minimum."""
        advantage = self.advantage(inputs).squeeze(-1) - self.prior * self.aware_gap(inputs, mask)
        valid = mask.float()
        count = valid.sum(-1, keepdim=True).clamp(min=1.0)
        pooled = (inputs * valid.unsqueeze(-1)).sum(1) / count
        mean_advantage = (advantage * valid).sum(-1, keepdim=True) / count
        q = self.state_value(pooled) + advantage - mean_advantage
        return q.masked_fill(~mask, torch.finfo(q.dtype).min)


def save_qnet(net: QNet, path: str, extra: dict[str, object] | None = None) -> None:
    """Weights, network shape and training metadata in one small ``.pt`` file."""
    save_weights(net, net.cfg, path, extra)


def load_qnet(path: str) -> tuple[QNet, dict[str, object]]:
    """A network in eval mode and the metadata it was saved with; a file that is not one
    raises :class:`~sim.errors.InputError`."""
    return load_weights(path, lambda cfg: QNet(NetConfig(**cfg)), "DQN")
