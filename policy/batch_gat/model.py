"""The queue policy's network: graph attention over a job-partition graph, actor and critic.

Tokens are the window's pending jobs and the cluster's partitions. The graph: every job is
linked to every other job of the window (they compete for the same free resources) and to
its own partition; a partition is linked to its jobs; every token to itself. Each layer is
multi-head dot-product attention restricted to those edges (a graph attention layer in the
transformer form: the attention weights are a softmax over a token's neighbours only), then a
feed-forward block, both residual. It is dense (one (tokens x tokens) mask per decision)
rather than PyG's sparse GATv2Conv because a window is at most a few dozen tokens and PPO
batches thousands of decisions: one batched matrix product beats building edge lists.

The actor scores each job token; masked jobs get the dtype's minimum, so they are never
chosen and carry no probability. ``head_bias`` is added to the queue head's logit: it starts
at ``NetConfig.head_prior`` (0: the untrained policy picks nearly uniformly among the valid
jobs; 2, the first shipped run's: it mostly does what FIFO-EASY does). The critic reads the
mean of the job and partition tokens and the share of jobs started.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from policy.torch_checkpoint import load_weights, save_weights
from sim.batch.chosen import JOB_FEATURES, PARTITION_FEATURES, DecisionView

IS_HEAD = JOB_FEATURES.index("is_head")


@dataclass(frozen=True)
class NetConfig:
    """Shape of the network (stored in checkpoints)."""

    hidden: int = 32
    heads: int = 4
    layers: int = 2
    window: int = 32
    head_prior: float = 0.0
    """Initial bias on the queue head's logit (learned from there)."""


@dataclass
class Batch:
    """Decisions stacked for the network: ``B`` decisions, ``K`` jobs, ``P`` partitions."""

    jobs: Tensor  # (B, K, Fj)
    job_partition: Tensor  # (B, K) int, -1 padding
    mask: Tensor  # (B, K) bool
    partitions: Tensor  # (B, P, Fp)
    progress: Tensor  # (B,)

    @classmethod
    def of(cls, views: list[DecisionView]) -> Batch:
        parts = max(v.partitions.shape[0] for v in views)
        pad = [np.pad(v.partitions, ((0, parts - v.partitions.shape[0]), (0, 0))) for v in views]
        return cls(
            jobs=torch.from_numpy(np.stack([v.jobs for v in views])),
            job_partition=torch.from_numpy(np.stack([v.job_partition for v in views])),
            mask=torch.from_numpy(np.stack([v.mask for v in views])),
            partitions=torch.from_numpy(np.stack(pad)),
            progress=torch.tensor([v.progress for v in views], dtype=torch.float32),
        )


def adjacency(job_partition: Tensor, n_partitions: int) -> Tensor:
    """(B, K+P, K+P) bool: who attends to whom (the job-partition graph plus self loops)."""
    b, k = job_partition.shape
    real = job_partition >= 0
    jobs = real.unsqueeze(2) & real.unsqueeze(1)
    part_ids = torch.arange(n_partitions)
    member = job_partition.unsqueeze(2) == part_ids.view(1, 1, -1)  # (B, K, P)
    top = torch.cat([jobs, member], dim=2)
    bottom = torch.cat(
        [member.transpose(1, 2), torch.zeros(b, n_partitions, n_partitions, dtype=torch.bool)],
        dim=2,
    )
    adj = torch.cat([top, bottom], dim=1)
    return adj | torch.eye(k + n_partitions, dtype=torch.bool).unsqueeze(0)


class GraphAttention(nn.Module):
    """One masked multi-head attention layer and a feed-forward block, residual, normalised."""

    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.ff = nn.Sequential(
            nn.Linear(hidden, 2 * hidden), nn.ReLU(), nn.Linear(2 * hidden, hidden)
        )
        self.norm1 = nn.LayerNorm(hidden)
        self.norm2 = nn.LayerNorm(hidden)

    def forward(self, x: Tensor, adj: Tensor) -> Tensor:
        b, n, h = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=adj.unsqueeze(1))
        x = self.norm1(x + self.out(att.transpose(1, 2).reshape(b, n, h)))
        return self.norm2(x + self.ff(x))


class QueuePolicy(nn.Module):
    """Encoder, actor (per-job logits) and critic (one value per decision)."""

    def __init__(self, cfg: NetConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg or NetConfig()
        h = self.cfg.hidden
        self.job_in = nn.Linear(len(JOB_FEATURES), h)
        self.part_in = nn.Linear(len(PARTITION_FEATURES), h)
        self.layers = nn.ModuleList(
            GraphAttention(h, self.cfg.heads) for _ in range(self.cfg.layers)
        )
        self.actor = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1))
        self.critic = nn.Sequential(nn.Linear(2 * h + 1, h), nn.ReLU(), nn.Linear(h, 1))
        self.head_bias = nn.Parameter(torch.tensor(self.cfg.head_prior))

    def forward(self, batch: Batch) -> tuple[Tensor, Tensor]:
        """(B, K) masked logits and (B,) values."""
        k = batch.jobs.shape[1]
        p = batch.partitions.shape[1]
        x = torch.cat([self.job_in(batch.jobs), self.part_in(batch.partitions)], dim=1)
        adj = adjacency(batch.job_partition, p)
        for layer in self.layers:
            x = layer(x, adj)
        jobs, parts = x[:, :k], x[:, k:]
        raw = self.actor(jobs).squeeze(-1) + self.head_bias * batch.jobs[..., IS_HEAD]
        logits = raw.masked_fill(~batch.mask, torch.finfo(raw.dtype).min)
        real = (batch.job_partition >= 0).float().unsqueeze(-1)
        pooled = (jobs * real).sum(1) / real.sum(1).clamp(min=1.0)
        value = self.critic(torch.cat([pooled, parts.mean(1), batch.progress.unsqueeze(-1)], -1))
        return logits, value.squeeze(-1)


def save_checkpoint(net: QueuePolicy, path: str, extra: dict[str, object] | None = None) -> None:
    """Weights, network shape and training metadata in one small ``.pt`` file."""
    save_weights(net, net.cfg, path, extra)


def load_checkpoint(path: str) -> tuple[QueuePolicy, dict[str, object]]:
    """A network in eval mode and the metadata it was saved with; a file that is not one
    raises :class:`~sim.errors.InputError`."""
    return load_weights(path, lambda cfg: QueuePolicy(NetConfig(**cfg)), "queue-policy")
