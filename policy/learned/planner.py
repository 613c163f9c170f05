"""The learned policy as a static scheduler: what the bench, ``submit`` and the guard use.

Deployment is static: ``submit`` hands Slurm every job with its node and dependencies up front.
So the policy plans by rolling itself out in the simulator (greedy, one decision per ready
task) and returns the schedule that rollout realised; it is scored, like HEFT, by replaying
that schedule. Under runtime uncertainty the bench hands the RAG policy its retrieved runtime
predictions (:meth:`LearnedPlanner.with_predictions`): it then plans on the user's requests
re-timed by them, with their spreads as features; the no-RAG ablation keeps the requests.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import ClassVar

from policy.base import StaticScheduler
from policy.learned.agent import LearnedPolicy
from policy.learned.instance_context import Spreads
from policy.learned.model import PolicyNet, load_checkpoint
from policy.learned.rollout import replayed_makespan
from sim.errors import InputError
from sim.model import Platform, Workflow, check_fits
from sim.occupancy import Occupancy
from sim.schedule import NetworkModel, StaticSchedule
from sim.uncertainty import RuntimePredictions

DEFAULT_CHECKPOINT = Path(__file__).with_name("checkpoints") / "policy.pt"
"""The shipped checkpoint, used by the ``policy`` and ``rag-guarded`` schedulers by default."""
NO_RAG_CHECKPOINT = DEFAULT_CHECKPOINT.with_name("policy-norag.pt")
"""The ablation trained with the sparse reward only."""


def load_policy_net(checkpoint: str | Path | None = None) -> PolicyNet:
    """The network of ``checkpoint`` (default: the shipped one), or a clear error."""
    path = Path(checkpoint or DEFAULT_CHECKPOINT)
    if not path.exists():
        raise InputError(
            str(path), ["no policy checkpoint here: train one with `wass-chat train policy`"]
        )
    net, _ = load_checkpoint(str(path))
    return net


class LearnedPlanner(StaticScheduler):
    """Greedy rollout of the learned policy, returned as a static schedule."""

    name: str = "policy"
    description: ClassVar[str] = "learned GNN + PPO policy trained with the RAG teacher"

    def __init__(
        self, network_model: NetworkModel = "fair", checkpoint: str | Path | None = None
    ) -> None:
        self.network_model: NetworkModel = network_model
        self.net = load_policy_net(checkpoint)
        self.predictions: RuntimePredictions | None = None
        self.calibrated = False

    def with_predictions(self, predictions: RuntimePredictions, calibrated: bool) -> LearnedPlanner:
        """A copy that plans with retrieved ``predictions`` (``calibrated``: the workflow it
        will be given already carries their runtimes, so only their spreads are added)."""
        planner = copy.copy(self)
        planner.predictions, planner.calibrated = predictions, calibrated
        return planner

    def planning_inputs(
        self, workflow: Workflow, platform: Platform
    ) -> tuple[Workflow, Platform, Spreads]:
        """What this planner plans on: the given view re-timed by its retrieved predictions
        (unless the view already carries them), and their spreads; the view itself and no
        spreads without predictions. One place, so ``policy`` and ``policy-lookahead`` agree."""
        from policy.learned.calibration import calibrate

        if self.predictions is None:
            return workflow, platform, ()
        view = calibrate(workflow, platform, self.predictions)
        if self.calibrated:
            return workflow, platform, view.spreads
        return view.workflow, view.platform, view.spreads

    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        from sim.engine import simulate

        check_fits(workflow, platform)
        workflow, platform, spreads = self.planning_inputs(workflow, platform)
        policy = LearnedPolicy(self.net, spreads=spreads)
        rollout = simulate(workflow, platform, policy, self.network_model, occupancy)
        realised = rollout.to_schedule()
        return StaticSchedule(realised.assignment, realised.order, self.name, rollout.makespan)


class NoRagPlanner(LearnedPlanner):
    """The ablation: same network and budget, trained with the sparse reward only."""

    name: str = "policy-norag"
    description: ClassVar[str] = "learned GNN + PPO policy, sparse reward only (no RAG)"

    def __init__(
        self, network_model: NetworkModel = "fair", checkpoint: str | Path | None = None
    ) -> None:
        super().__init__(network_model, checkpoint or NO_RAG_CHECKPOINT)

    def with_predictions(self, predictions: RuntimePredictions, calibrated: bool) -> NoRagPlanner:
        """The ablation retrieves nothing: it plans on what it is given."""
        return self


class SampledPlanner(LearnedPlanner):
    """The policy's greedy rollout and ``samples`` sampled ones; the best replay is kept.

    Sampling several solutions from a learned constructive policy and keeping the best is the
    standard way such policies are decoded (Kool et al. 2019, "Attention, learn to solve
    routing problems!"); every candidate is scored as the static schedule it would be replayed
    as, so the result is never worse than the greedy ``policy``. Unlike ``rag-guarded`` no
    classic heuristic is among the candidates: this measures what the policy itself can find.
    """

    name: str = "policy-sample"
    description: ClassVar[str] = "learned policy, best of its greedy and 8 sampled rollouts"

    def __init__(
        self,
        network_model: NetworkModel = "fair",
        checkpoint: str | Path | None = None,
        samples: int = 8,
    ) -> None:
        super().__init__(network_model, checkpoint)
        self.samples = samples

    def with_predictions(self, predictions: RuntimePredictions, calibrated: bool) -> SampledPlanner:
        """Plans on what it is given: its candidates are compared on that one view."""
        return self

    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        from sim.engine import simulate

        best = super().schedule(workflow, platform, occupancy)
        best_makespan = simulate(workflow, platform, best, self.network_model, occupancy).makespan
        for seed in range(self.samples):  # fixed seeds: the same plan every time
            policy = LearnedPolicy(self.net, mode="sample", seed=seed)
            makespan, realised = replayed_makespan(
                workflow, platform, policy, self.network_model, occupancy
            )
            if makespan < best_makespan - 1e-9:
                best_makespan = makespan
                best = StaticSchedule(realised.assignment, realised.order, self.name, makespan)
        return StaticSchedule(best.assignment, best.order, self.name, best_makespan)
