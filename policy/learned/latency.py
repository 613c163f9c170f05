"""Inference latency of the learned schedulers: what ``wass-chat train bench`` prints.

Per decision: the whole ``choose_node`` call (candidate features from the simulator's view plus
the scoring head) and the head alone; the same per-decision call for the DQN. Per workflow: the
client-side encoding (instance context with the OCT table, graph, GNN forward). Retrieval is
timed by the caller, which owns the knowledge base.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from policy.learned.agent import LearnedPolicy
from policy.learned.dqn_agent import DQNPolicy
from policy.learned.dqn_model import QNet
from policy.learned.features import build_graph
from policy.learned.instance_context import InstanceContext
from policy.learned.model import PolicyNet
from sim.model import Platform, Workflow
from sim.schedule import ClusterView


@dataclass(frozen=True)
class LatencyReport:
    decisions: int
    decision_p50_ms: float
    decision_p95_ms: float
    head_p50_ms: float
    encode_ms: float
    """Median of repeated client-side encodings of the workflow (context, graph, GNN)."""


class _TimedPolicy(LearnedPolicy):
    """The greedy policy, timing every decision."""

    def __init__(self, net: PolicyNet) -> None:
        super().__init__(net)
        self.seconds: list[float] = []

    def choose_node(self, task: str, view: ClusterView) -> str:
        start = time.perf_counter()
        node = super().choose_node(task, view)
        self.seconds.append(time.perf_counter() - start)
        return node


def dqn_decision_ms(net: QNet, workflow: Workflow, platform: Platform) -> tuple[float, float]:
    """(p50, p95) milliseconds of the greedy DQN's ``choose_node`` over one simulated run."""
    from sim.engine import simulate

    torch.set_num_threads(1)
    seconds: list[float] = []

    class Timed(DQNPolicy):
        def choose_node(self, task: str, view: ClusterView) -> str:
            start = time.perf_counter()
            node = super().choose_node(task, view)
            seconds.append(time.perf_counter() - start)
            return node

    simulate(workflow, platform, Timed(net), "fair")
    ms = np.array(seconds) * 1e3
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def measure_latency(
    net: PolicyNet, workflow: Workflow, platform: Platform, repeats: int = 5
) -> LatencyReport:
    from sim.engine import simulate

    torch.set_num_threads(1)
    policy = _TimedPolicy(net)
    simulate(workflow, platform, policy, "fair")
    decisions = np.array(policy.seconds) * 1e3
    ctx = policy.context
    emb = net.encode(build_graph(ctx))
    n = len(platform.nodes)
    head_times = []
    feats = torch.zeros((1, n, net.head[0].in_features - 2 * net.cfg.hidden))
    mask = torch.ones((1, n), dtype=torch.bool)
    with torch.no_grad():
        for i in range(200):
            start = time.perf_counter()
            net.logits(net.candidate_inputs(emb, torch.tensor([i % len(workflow)]), feats), mask)
            head_times.append(time.perf_counter() - start)
        encodes = []
        for _ in range(repeats):
            start = time.perf_counter()
            net.encode(build_graph(InstanceContext.build(workflow, platform)))
            encodes.append(time.perf_counter() - start)
    return LatencyReport(
        decisions=len(decisions),
        decision_p50_ms=float(np.percentile(decisions, 50)),
        decision_p95_ms=float(np.percentile(decisions, 95)),
        head_p50_ms=float(np.median(head_times) * 1e3),
        encode_ms=float(np.median(encodes) * 1e3),
    )
