"""Lachesis-style: our PPO policy's task scores choose which ready task of which arrived workflow
goes next, DEFT places it with duplication; not Lachesis' own network or training.

Lachesis (Luo et al., "Learning to Optimize DAG Scheduling in Heterogeneous Environment", 2021)
has two halves: a learned task-selection policy (a GNN scoring the executable tasks of every
arrived job, trained with RL) and a heuristic executor assignment with duplication (DEFT).
This module joins the two halves this project already has, with no new training:

* **Scores** (:class:`PolicyScores`): when a workflow arrives, the shipped PPO checkpoint
  (``policy/learned/checkpoints/policy.pt``, docs/learned.md) places that workflow alone on the
  idle cluster (its greedy rollout in the simulator); each task's score is the network's
  highest logit for it at its decision there. Computed once per task, from what has arrived
  only. That network was trained to choose a *node* for a given task, with a softmax over
  nodes: how its logits compare *across tasks* was never trained. So this is the learned
  policy's signal put where Lachesis' task selector sits, not a trained task selector.
* **Selection** (:meth:`Lachesis.plan`, the dispatcher of :mod:`policy.dispatch`, shared with
  ``decima``): a dispatcher walks the plan's events (arrivals and
  planned finishes). A task is executable once its workflow has arrived and its parents'
  originals are planned to have finished; at each event the executable tasks of every arrived
  workflow are tried by decreasing score (ties: larger upward rank, then topological
  position) and each one is placed if it can start without waiting for cores, memory or GPUs
  (only for its data);
  after ``patience`` that would wait, the rest wait for the next event. With no event left,
  the backlog is placed in score order as is.
* **Placement**: FIFO-DEFT's (:func:`policy.fifo_deft.deft_choice`): earliest finish over the
  nodes, with a copy of the critical parent where that finishes the task sooner, on the shared
  :class:`~policy.duplication.CopyPlan`; the validator checks copies like FIFO-DEFT's.

``lachesis-rank`` (:func:`rank_order`) is the ablation: the same dispatcher and placement with
every score equal, so the executable tasks go by upward rank; what ``lachesis`` does
differently from it is the learned scores' doing.

Not Lachesis: its network (graph embeddings of job DAGs with a global summary, a softmax over
executable tasks), its training and its simulator are not reproduced; it is not re-trained here.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import torch

from policy.dispatch import dispatch_plan
from policy.duplication import CopyPlan, CopySchedule
from policy.learned.agent import LearnedPolicy
from policy.learned.features import candidate_features
from policy.learned.model import PolicyNet
from policy.learned.planner import load_policy_net
from policy.online import batch_workflow
from sim.model import Platform, Workflow, check_fits
from sim.occupancy import Occupancy
from sim.ranks import upward_rank
from sim.schedule import ClusterView, NetworkModel

TaskScores = Callable[[Workflow, Platform], dict[str, float]]
"""Scores of an arrived workflow's tasks (higher goes first), from that workflow alone."""


class _ScoringPolicy(LearnedPolicy):
    """The PPO policy's greedy placement, noting each task's highest logit as it decides."""

    def __init__(self, net: PolicyNet) -> None:
        super().__init__(net)
        self.scores: dict[str, float] = {}

    def choose_node(self, task: str, view: ClusterView) -> str:
        ctx = self.context
        feats, mask = candidate_features(ctx, task, view)
        with torch.no_grad():
            inputs = self.net.candidate_inputs(
                self._emb, torch.tensor([ctx.task_index[task]]), torch.from_numpy(feats)[None]
            )
            logits = self.net.logits(inputs, torch.from_numpy(mask)[None])[0]
        self.scores[task] = float(logits.max())
        return ctx.platform.nodes[int(torch.argmax(logits))].name


class PolicyScores:
    """Task scores from the PPO network (see the module docstring): one greedy rollout of the
    arrived workflow alone on the idle cluster."""

    def __init__(
        self, network_model: NetworkModel = "fair", checkpoint: str | Path | None = None
    ) -> None:
        self.net = load_policy_net(checkpoint)
        self.network_model: NetworkModel = network_model

    def __call__(self, workflow: Workflow, platform: Platform) -> dict[str, float]:
        from sim.engine import simulate

        policy = _ScoringPolicy(self.net)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # small graphs: on the shared 2-core machine, 30x faster
        try:
            simulate(workflow, platform, policy, self.network_model)
        finally:
            torch.set_num_threads(threads)
        return policy.scores


def rank_order(workflow: Workflow, platform: Platform) -> dict[str, float]:
    """Every task scored alike: the dispatcher's tie-break, upward rank, decides (the
    ``lachesis-rank`` ablation)."""
    return dict.fromkeys(workflow.task_by_id, 0.0)


@dataclass
class Lachesis:
    """Learned task selection across arrived workflows, DEFT placement with duplication."""

    scores: TaskScores | None = None
    """How tasks are scored (None: the shipped PPO checkpoint's, built on first use)."""
    network_model: NetworkModel = "fair"
    """What the scoring rollouts simulate under."""
    patience: int = 4
    """Executable tasks that would wait tried per event before the rest wait too."""
    name: str = "lachesis"
    description: ClassVar[str] = "PPO task scores pick the next task, DEFT places it with copies"
    task_scores: dict[str, float] = field(default_factory=dict, compare=False, repr=False)
    """The last plan's score of every task (for reports and tests)."""

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> CopyPlan:
        """The complete plan, copies included; ``plan.placement`` keeps the dispatch order."""
        check_fits(workflow, platform)
        if self.scores is None:
            self.scores = PolicyScores(self.network_model)
        backlog = _ScoredBacklog(self.scores, workflow, platform)
        self.task_scores = backlog.task_scores
        return dispatch_plan(workflow, platform, backlog, self.patience, occupancy)

    def schedule_with_copies(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> CopySchedule:
        """What the simulator runs: the expanded workflow and its static schedule."""
        return self.plan(workflow, platform, occupancy).to_copy_schedule(self.name)


class _ScoredBacklog:
    """Executable tasks by decreasing score fixed at their workflow's arrival (ties: larger
    upward rank, then topological position), in a heap."""

    def __init__(self, scores: TaskScores, workflow: Workflow, platform: Platform) -> None:
        self.scores = scores
        self.workflow = workflow
        self.platform = platform
        self.rank = upward_rank(workflow, platform)
        self.position = {t: i for i, t in enumerate(workflow.topological_order)}
        self.task_scores: dict[str, float] = {}
        self.heap: list[tuple[float, float, int, str]] = []

    def arrive(self, plan: CopyPlan, batch: tuple[str, ...]) -> None:
        self.task_scores.update(self.scores(batch_workflow(self.workflow, batch), self.platform))

    def add(self, task: str) -> None:
        entry = (-self.task_scores[task], -self.rank[task], self.position[task], task)
        heapq.heappush(self.heap, entry)

    def begin(self, plan: CopyPlan) -> None:
        """Scores never change after arrival: nothing to revise."""

    def pop(self) -> str:
        return heapq.heappop(self.heap)[-1]

    def __len__(self) -> int:
        return len(self.heap)
