"""What PPO's placement policy (:mod:`policy.learned.agent`) and the DQN's
(:mod:`policy.learned.dqn_agent`) share: the instance they were reset on, encoded once by their
network, and the upward-rank priority their tasks are released in. One definition, so the two
learned schedulers cannot drift apart in how they see an instance."""

from __future__ import annotations

import torch

from policy.learned.features import build_graph
from policy.learned.instance_context import InstanceContext, Spreads
from policy.learned.model import GraphEncoder
from sim.model import Platform, Workflow


class EncodedInstance:
    """The instance a learned policy was last reset on, and its node embeddings."""

    _ctx: InstanceContext | None = None
    _emb: dict[str, torch.Tensor]

    def encode_instance(
        self, net: GraphEncoder, workflow: Workflow, platform: Platform, spreads: Spreads = ()
    ) -> None:
        """Build the instance's context and embed its graph with ``net`` (no gradients)."""
        self._ctx = InstanceContext.of(workflow, platform, spreads)
        with torch.no_grad():
            self._emb = net.encode(build_graph(self._ctx))

    @property
    def context(self) -> InstanceContext:
        assert self._ctx is not None, "reset() first"
        return self._ctx

    def priority(self, task: str) -> float:
        """The task's upward rank: tasks are released in HEFT's order."""
        return self.context.upward[task]
