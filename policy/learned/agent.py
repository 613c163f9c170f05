"""The learned policy as a dynamic scheduler, and the episode recorder PPO trains from.

:class:`LearnedPolicy` encodes the workflow once (``reset``), then scores every candidate node
for each ready task (``choose_node``): greedy at inference, sampled during training. Ready
tasks are taken by decreasing upward rank, like HEFT. Every decision can be recorded
(:class:`Trajectory`) so the trainer can recompute log-probabilities with gradients.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np
import torch

from policy.learned.encoded_instance import EncodedInstance
from policy.learned.features import candidate_features
from policy.learned.instance_context import InstanceContext, Spreads
from policy.learned.model import PolicyNet
from sim.model import Platform, Workflow
from sim.schedule import ClusterView

Mode = Literal["greedy", "sample", "forced"]


@dataclass
class Trajectory:
    """One episode's decisions, in order (arrays stacked by :meth:`arrays`)."""

    task_idx: list[int] = field(default_factory=list)
    feats: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    logps: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    progress: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    """Per-decision shaped reward (the teacher's R_RAG); the terminal reward is added after."""
    best: list[np.ndarray] = field(default_factory=list)
    """Lookahead episodes only: per decision, the nodes whose completion tied for the shortest
    makespan (the imitation target: any of them is right, so ties between identical nodes are
    not forced onto one arbitrary label)."""

    def __len__(self) -> int:
        return len(self.actions)


class LearnedPolicy(EncodedInstance):
    """GNN + MLP placement policy (``greedy`` by default)."""

    name: str = "policy"
    description: ClassVar[str] = "learned GNN + PPO placement policy (dynamic form)"

    def __init__(
        self, net: PolicyNet, mode: Mode = "greedy", seed: int = 0, spreads: Spreads = ()
    ) -> None:
        self.net = net
        self.spreads = spreads
        """Retrieved runtime spreads per task category (the candidates' spread feature)."""
        self.mode: Mode = mode
        self.rng = np.random.default_rng(seed)
        self.forced: dict[str, str] = {}
        """In ``forced`` mode, the node each task must go to (imitation of a teacher)."""
        self.trajectory = Trajectory()
        self.record = mode != "greedy"
        self._ctx: InstanceContext | None = None
        self._emb: dict[str, torch.Tensor] = {}
        self._placed = 0

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self.encode_instance(self.net, workflow, platform, self.spreads)
        self.trajectory = Trajectory()
        self._placed = 0

    def choose_node(self, task: str, view: ClusterView) -> str:
        ctx = self.context
        feats, mask = candidate_features(ctx, task, view)
        t_idx = ctx.task_index[task]
        progress = self._placed / len(ctx.workflow.tasks)
        with torch.no_grad():
            inputs = self.net.candidate_inputs(
                self._emb, torch.tensor([t_idx]), torch.from_numpy(feats).unsqueeze(0)
            )
            m = torch.from_numpy(mask).unsqueeze(0)
            logits = self.net.logits(inputs, m)[0]
            if self.mode == "greedy":
                action = int(torch.argmax(logits))
            elif self.mode == "forced":
                action = ctx.node_index[self.forced[task]]
            else:
                probs = torch.softmax(logits, dim=-1).numpy().astype(np.float64)
                probs[~mask] = 0.0
                action = int(self.rng.choice(len(probs), p=probs / probs.sum()))
            if self.record:
                logp = torch.log_softmax(logits, dim=-1)[action]
                value = self.net.value(inputs, m, torch.tensor([progress]))[0]
                tr = self.trajectory
                tr.task_idx.append(t_idx)
                tr.feats.append(feats)
                tr.masks.append(mask)
                tr.actions.append(action)
                tr.logps.append(float(logp))
                tr.values.append(float(value))
                tr.progress.append(progress)
                tr.rewards.append(0.0)
        self._placed += 1
        return ctx.platform.nodes[action].name
