"""Episodes of the learned policy in the simulator, run in worker processes.

Workers get the network's weights and a batch of instance specs and return the recorded
trajectories with each episode's makespan and its HEFT reference makespan (the normaliser of
the terminal reward: positive when the policy beat HEFT on that instance).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from policy.learned.agent import LearnedPolicy, Mode, Trajectory
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.model import NetConfig, PolicyNet
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy
from sim.schedule import DynamicScheduler, NetworkModel, StaticSchedule


@dataclass
class Episode:
    """One simulated execution under the policy."""

    spec: InstanceSpec
    trajectory: Trajectory
    makespan: float
    reference: float
    """HEFT's simulated makespan on the same instance and network model."""

    @property
    def ratio(self) -> float:
        return self.makespan / self.reference


@lru_cache(maxsize=1024)
def reference_makespan(spec: InstanceSpec, network_model: NetworkModel) -> float:
    """HEFT's simulated makespan: the bar the policy is measured against."""
    from policy.base import plan_and_simulate
    from policy.heft import HEFT

    workflow, platform = materialize(spec)
    return plan_and_simulate(HEFT(), workflow, platform, network_model).makespan


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
) -> Episode:
    """Simulate one episode and score the static plan it realised against HEFT."""
    workflow, platform = materialize(spec)
    policy = LearnedPolicy(net, mode=mode, seed=seed)
    if mode == "forced":
        policy.forced = teacher_assignment(spec)
    makespan, _ = replayed_makespan(workflow, platform, policy, network_model)
    return Episode(spec, policy.trajectory, makespan, reference_makespan(spec, network_model))


def _worker_batch(
    state: dict[str, Any],
    cfg: NetConfig,
    jobs: Sequence[tuple[InstanceSpec, int]],
    mode: Mode,
    network_model: NetworkModel,
) -> list[Episode]:
    torch.set_num_threads(1)
    net = PolicyNet(cfg)
    net.load_state_dict(state)
    net.eval()
    return [run_episode(net, spec, mode, seed, network_model) for spec, seed in jobs]


def collect(
    net: PolicyNet,
    jobs: Sequence[tuple[InstanceSpec, int]],
    mode: Mode,
    network_model: NetworkModel,
    pool: ProcessPoolExecutor | None,
    workers: int = 2,
) -> list[Episode]:
    """Run ``jobs`` (spec, sampling seed) across ``workers`` pool processes (or in process)."""
    if pool is None or len(jobs) < 2:
        net.eval()
        return [run_episode(net, spec, mode, seed, network_model) for spec, seed in jobs]
    chunks = [list(jobs[i::workers]) for i in range(workers)]
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    futures = [
        pool.submit(_worker_batch, state, net.cfg, chunk, mode, network_model)
        for chunk in chunks
        if chunk
    ]
    return [ep for f in futures for ep in f.result()]
