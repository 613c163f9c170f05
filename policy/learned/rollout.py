"""Episodes of the learned policy in the simulator, run in worker processes.

Workers get the network's weights and a batch of instance specs and return the recorded
trajectories with each episode's makespan and its HEFT reference makespan (the normaliser of
the terminal reward: positive when the policy beat HEFT on that instance). Under uncertainty
(:mod:`policy.learned.calibration`) the policy plans on estimates and its plan is replayed on
the actual values; the reference is HEFT planned on the user's requests and replayed alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from policy.learned.agent import LearnedPolicy, Mode, Trajectory
from policy.learned.calibration import EXACT, Setting, actual_instance, planning_view
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.model import PolicyNet
from policy.learned.net_config import NetConfig
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy
from sim.schedule import DynamicScheduler, NetworkModel, StaticSchedule
from sim.uncertainty import RuntimePredictions


@dataclass
class Episode:
    """One simulated execution under the policy."""

    spec: InstanceSpec
    trajectory: Trajectory
    makespan: float
    reference: float
    """HEFT's simulated makespan on the same instance and network model (planned on the
    user's requests under uncertainty)."""
    planning: tuple[Workflow, Platform] | None = None
    """What the policy planned on when that is not the nominal instance (under uncertainty)."""

    @property
    def ratio(self) -> float:
        return self.makespan / self.reference


@lru_cache(maxsize=1024)
def reference_makespan(
    spec: InstanceSpec, network_model: NetworkModel, setting: Setting = EXACT
) -> float:
    """HEFT's simulated makespan: the bar the policy is measured against.

    Under uncertainty HEFT plans on the user's requests and its plan runs on the actual values.
    """
    from policy.base import plan_and_simulate
    from policy.heft import HEFT
    from sim.engine import simulate

    if setting.exact:
        workflow, platform = materialize(spec)
        return plan_and_simulate(HEFT(), workflow, platform, network_model).makespan
    request = planning_view(spec, setting)
    plan = HEFT().schedule(request.workflow, request.platform)
    return simulate(*actual_instance(spec, setting), plan, network_model).makespan


@lru_cache(maxsize=1024)
def teacher_assignment(spec: InstanceSpec) -> dict[str, str]:
    """HEFT's placements, the imitation target of the warm start."""
    from policy.heft import HEFT

    workflow, platform = materialize(spec)
    return dict(HEFT().schedule(workflow, platform).assignment)


def replayed_makespan(
    workflow: Workflow,
    platform: Platform,
    policy: DynamicScheduler,
    network_model: NetworkModel,
    occupancy: Occupancy | None = None,
) -> tuple[float, StaticSchedule]:
    """Makespan of the static plan ``policy``'s rollout realises, replayed as deployed.

    What gets deployed (and what HEFT is measured on) is the static plan the rollout realised:
    Slurm receives every job with its node and dependencies up front. Score that replay.
    """
    from sim.engine import simulate

    plan = simulate(workflow, platform, policy, network_model, occupancy).to_schedule()
    return simulate(workflow, platform, plan, network_model, occupancy).makespan, plan


def run_episode(
    net: PolicyNet,
    spec: InstanceSpec,
    mode: Mode,
    seed: int,
    network_model: NetworkModel,
    setting: Setting = EXACT,
    predictions: RuntimePredictions | None = None,
) -> Episode:
    """Simulate one episode and score the static plan it realised against HEFT.

    Under uncertainty the policy plans on ``setting``'s estimates (calibrated by the retrieved
    ``predictions`` when given: the RAG arm) and the plan is replayed on the actual values.
    """
    view = planning_view(spec, setting, predictions)
    policy = LearnedPolicy(net, mode=mode, seed=seed, spreads=view.spreads)
    if mode == "forced":
        policy.forced = teacher_assignment(spec)
    makespan, plan = replayed_makespan(view.workflow, view.platform, policy, network_model)
    reference = reference_makespan(spec, network_model, setting)
    if setting.exact:
        return Episode(spec, policy.trajectory, makespan, reference)
    from sim.engine import simulate

    makespan = simulate(*actual_instance(spec, setting), plan, network_model).makespan
    planning = (view.workflow, view.platform)
    return Episode(spec, policy.trajectory, makespan, reference, planning)


Predictions = Mapping[InstanceSpec, RuntimePredictions]
"""Each instance's retrieved runtime predictions (the RAG arm's; empty for no-RAG)."""


def _worker_batch(
    state: dict[str, Any],
    cfg: NetConfig,
    jobs: Sequence[tuple[InstanceSpec, int]],
    mode: Mode,
    network_model: NetworkModel,
    setting: Setting = EXACT,
    predictions: Predictions | None = None,
) -> list[Episode]:
    torch.set_num_threads(1)
    net = PolicyNet(cfg)
    net.load_state_dict(state)
    net.eval()
    known = predictions or {}
    return [
        run_episode(net, spec, mode, seed, network_model, setting, known.get(spec))
        for spec, seed in jobs
    ]


def collect(
    net: PolicyNet,
    jobs: Sequence[tuple[InstanceSpec, int]],
    mode: Mode,
    network_model: NetworkModel,
    pool: ProcessPoolExecutor | None,
    workers: int = 2,
    setting: Setting = EXACT,
    predictions: Predictions | None = None,
) -> list[Episode]:
    """Run ``jobs`` (spec, sampling seed) across ``workers`` pool processes (or in process),
    under ``setting``'s estimates with each spec's retrieved ``predictions`` (if any)."""
    known = predictions or {}
    if pool is None or len(jobs) < 2:
        net.eval()
        return [
            run_episode(net, spec, mode, seed, network_model, setting, known.get(spec))
            for spec, seed in jobs
        ]
    chunks = [list(jobs[i::workers]) for i in range(workers)]
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    futures = [
        pool.submit(_worker_batch, state, net.cfg, chunk, mode, network_model, setting, part)
        for chunk in chunks
        if chunk
        for part in [{s: known[s] for s, _ in chunk if s in known}]
    ]
    return [ep for f in futures for ep in f.result()]
