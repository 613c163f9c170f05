"""One-step lookahead over the learned policy: the expert of expert iteration, and a planner.

:class:`LookaheadPolicy` places each ready task by trying the network's ``k`` best nodes for it:
for every candidate it fixes the decisions taken so far plus that candidate, completes the
schedule with the greedy network, replays the realised static plan (what Slurm would run) and
keeps the candidate with the shortest makespan; a tie keeps the network's own choice. This is
Bertsekas' rollout algorithm with the greedy network as the base policy: with ties resolved
towards the base, the result is never worse than the greedy rollout it improves on, and every
decision gets an exact counterfactual answer from the simulator (per-decision credit, where
PPO's terminal reward is spread over 50-200 decisions).

Training imitates it (expert iteration, Anthony et al. 2017: the network learns to reproduce
the search's choices without the search, then the improved network is the next search's base);
``policy-lookahead`` runs it at planning time. It costs ``k`` full simulations per decision:
about 18 s per 50-200-task instance on average (36 held-out instances in 5.3-5.7 min on 2
workers), against 0.1-0.2 s for the greedy rollout. Measured: the network imitates it poorly
(docs/learned.md), so the search is worth running at planning time.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from policy.learned.agent import LearnedPolicy
from policy.learned.features import candidate_features
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.model import NetConfig, PolicyNet
from policy.learned.planner import LearnedPlanner
from policy.learned.rollout import Episode, reference_makespan, replayed_makespan
from sim.errors import InputError
from sim.model import Platform, Workflow, check_fits
from sim.schedule import ClusterView, NetworkModel, StaticSchedule

MAX_TASKS = 400
"""Largest workflow ``policy-lookahead`` plans: its cost grows with the square of the task count
(k simulations of the whole workflow per task), so far larger plans would take many minutes."""
DEFAULT_K = 3
"""Candidates tried per decision (a choice, not tuned: every figure in docs/learned.md uses 3);
the cost grows linearly with it."""


class _Prefix(LearnedPolicy):
    """The greedy network, except that the tasks in ``fixed`` go where it says."""

    def __init__(self, net: PolicyNet, fixed: dict[str, str]) -> None:
        super().__init__(net, mode="greedy")
        self.fixed = fixed

    def choose_node(self, task: str, view: ClusterView) -> str:
        node = self.fixed.get(task)
        if node is None:
            return super().choose_node(task, view)
        self._placed += 1
        return node


class LookaheadPolicy(LearnedPolicy):
    """Rollout improvement of the greedy network; records its choices as imitation labels.

    The trajectory holds one row per decision: ``actions`` is the chosen (expert) node and
    ``best`` every candidate that tied for the shortest completion, the imitation target
    (:func:`policy.learned.imitation.imitation_loss`).
    """

    name: str = "policy-lookahead"

    def __init__(
        self,
        net: PolicyNet,
        workflow: Workflow,
        platform: Platform,
        network_model: NetworkModel = "fair",
        k: int = DEFAULT_K,
    ) -> None:
        super().__init__(net, mode="greedy")
        self.workflow, self.platform = workflow, platform
        self.network_model: NetworkModel = network_model
        self.k = k
        self.decided: dict[str, str] = {}
        self.simulations = 0
        self.changed = 0
        """Decisions where the lookahead overruled the network's greedy choice."""

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        super().reset(workflow, platform)
        self.decided = {}

    def _completion(self, task: str, action: int) -> float:
        """Replayed makespan of the decisions so far, ``task`` on ``action``, then greedy."""
        fixed = {**self.decided, task: self.context.platform.nodes[action].name}
        self.simulations += 1
        return replayed_makespan(
            self.workflow, self.platform, _Prefix(self.net, fixed), self.network_model
        )[0]

    def choose_node(self, task: str, view: ClusterView) -> str:
        ctx = self.context
        feats, mask = candidate_features(ctx, task, view)
        t_idx = ctx.task_index[task]
        with torch.no_grad():
            inputs = self.net.candidate_inputs(
                self._emb, torch.tensor([t_idx]), torch.from_numpy(feats).unsqueeze(0)
            )
            logits = self.net.logits(inputs, torch.from_numpy(mask).unsqueeze(0))[0]
        ranked = [int(i) for i in torch.argsort(logits, descending=True) if mask[int(i)]]
        candidates = ranked[: self.k]
        choice = candidates[0]
        best = np.zeros(len(mask), dtype=bool)
        best[choice] = True
        if len(candidates) > 1:
            spans = [self._completion(task, action) for action in candidates]
            shortest = min(spans)
            if shortest < spans[0] * (1 - 1e-9):  # strictly better, or keep the network's choice
                choice = candidates[spans.index(shortest)]
            for action, span in zip(candidates, spans, strict=True):
                best[action] = span <= shortest * (1 + 1e-9)
        self.changed += choice != candidates[0]
        tr = self.trajectory
        tr.best.append(best)
        tr.task_idx.append(t_idx)
        tr.feats.append(feats)
        tr.masks.append(mask)
        tr.actions.append(choice)
        tr.logps.append(0.0)
        tr.values.append(0.0)
        tr.progress.append(self._placed / len(ctx.workflow.tasks))
        tr.rewards.append(0.0)
        node = ctx.platform.nodes[choice].name
        self.decided[task] = node
        self._placed += 1
        return node


def lookahead_episode(
    net: PolicyNet, spec: InstanceSpec, network_model: NetworkModel, k: int = DEFAULT_K
) -> Episode:
    """The expert's episode on ``spec``: its labelled decisions and its replayed makespan."""
    workflow, platform = materialize(spec)
    expert = LookaheadPolicy(net, workflow, platform, network_model, k)
    makespan, _ = replayed_makespan(workflow, platform, expert, network_model)
    return Episode(spec, expert.trajectory, makespan, reference_makespan(spec, network_model))


def _worker(
    state: dict[str, Any], cfg: NetConfig, specs: Sequence[InstanceSpec],
    network_model: NetworkModel, k: int,
) -> list[Episode]:  # fmt: skip
    torch.set_num_threads(1)
    net = PolicyNet(cfg)
    net.load_state_dict(state)
    net.eval()
    return [lookahead_episode(net, spec, network_model, k) for spec in specs]


def collect_lookahead(
    net: PolicyNet,
    specs: Sequence[InstanceSpec],
    network_model: NetworkModel,
    pool: ProcessPoolExecutor | None,
    k: int = DEFAULT_K,
    workers: int = 2,
) -> list[Episode]:
    """Expert episodes on ``specs``, spread over ``workers`` pool processes (or in process)."""
    net.eval()
    if pool is None or len(specs) < 2:
        return [lookahead_episode(net, spec, network_model, k) for spec in specs]
    state = {key: v.detach().clone() for key, v in net.state_dict().items()}
    # Interleave, so each worker gets a mix of sizes (cost grows with tasks x decisions).
    chunks = [list(specs[i::workers]) for i in range(workers)]
    futures = [
        pool.submit(_worker, state, net.cfg, chunk, network_model, k) for chunk in chunks if chunk
    ]
    return [ep for f in futures for ep in f.result()]


class LookaheadPlanner(LearnedPlanner):
    """The learned policy with a one-step lookahead at planning time (``policy-lookahead``).

    Never worse than the greedy ``policy`` on the simulator's account of the instance; costs
    ``k`` simulations per decision, so plan time is seconds, not milliseconds.
    """

    name: str = "policy-lookahead"
    description: ClassVar[str] = "learned policy + one-step rollout lookahead (3 candidates)"

    def __init__(
        self,
        network_model: NetworkModel = "fair",
        checkpoint: str | Path | None = None,
        k: int = DEFAULT_K,
    ) -> None:
        super().__init__(network_model, checkpoint)
        self.k = k

    def schedule(self, workflow: Workflow, platform: Platform) -> StaticSchedule:
        check_fits(workflow, platform)
        if len(workflow.tasks) > MAX_TASKS:
            raise InputError(workflow.name, [
                f"policy-lookahead plans at most {MAX_TASKS} tasks (this one has "
                f"{len(workflow.tasks)}; its cost grows with the square of the task count): "
                "use policy or rag-guarded"
            ])  # fmt: skip
        expert = LookaheadPolicy(self.net, workflow, platform, self.network_model, self.k)
        makespan, plan = replayed_makespan(workflow, platform, expert, self.network_model)
        return StaticSchedule(plan.assignment, plan.order, self.name, makespan)
