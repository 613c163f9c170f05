"""The DQN as a scheduler: epsilon-greedy node choices in the simulator, and its episodes.

:class:`DQNPolicy` is a dynamic scheduler (``sim.schedule.DynamicScheduler``): it encodes the
workflow once (``reset``), then, for each ready task (taken by decreasing upward rank, like
HEFT and the PPO policy), scores every node with the Q-network and takes the best valid one, or
with probability ``epsilon`` a uniformly random *valid* one. Recording, it keeps each decision
and when it was taken; :func:`transitions` turns an episode into replay transitions whose
reward is the time the task then took to finish, as the run realised it:

    r_t = -(end of task t - time of decision t) / scale,

in units of the instance's time scale. The undiscounted return is minus the tasks' summed
sojourns: every workflow's response time counts, not only the last one's (a reward for the
makespan's growth alone left most decisions of a busy stream unpriced, and its greedy policy
drifted to 1.36x eft's makespan in 6,000 steps). The realised end, not the view's estimate,
so a placement that later contends for a NIC or a GPU is charged for it.

:class:`DQNPlanner` is what the bench and the registry's ``dqn`` use: the greedy policy rolled
out in the simulator, returned as the static schedule it realised (as ``policy`` is).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from policy.base import StaticScheduler
from policy.learned.dqn_model import QNet, load_qnet
from policy.learned.encoded_instance import EncodedInstance
from policy.learned.features import candidate_features
from policy.learned.instance_context import InstanceContext
from policy.learned.replay import Transition
from sim.errors import InputError
from sim.model import Platform, Workflow, check_fits
from sim.occupancy import Occupancy
from sim.schedule import ClusterView, NetworkModel, StaticSchedule

DEFAULT_DQN_CHECKPOINT = Path(__file__).with_name("checkpoints") / "dqn.pt"
"""The shipped Q-network (``wass-chat train dqn`` writes a new one)."""


@dataclass
class Decision:
    """What the recorder keeps of one decision."""

    task: int
    feats: np.ndarray
    mask: np.ndarray
    action: int
    now: float
    """When the decision was taken (the task was ready and released)."""


@dataclass
class DQNPolicy(EncodedInstance):
    """Epsilon-greedy placement by Q-values (greedy with ``epsilon`` 0)."""

    net: QNet
    epsilon: float = 0.0
    seed: int = 0
    record: bool = False
    name: str = "dqn"
    description: ClassVar[str] = "DQN with prioritized replay (dynamic form)"
    decisions: list[Decision] = field(default_factory=list)
    _ctx: InstanceContext | None = None
    _emb: dict[str, torch.Tensor] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self.encode_instance(self.net, workflow, platform)
        self.decisions = []

    def choose_node(self, task: str, view: ClusterView) -> str:
        ctx = self.context
        feats, mask = candidate_features(ctx, task, view)
        index = ctx.task_index[task]
        if self.epsilon > 0 and self.rng.random() < self.epsilon:
            action = int(self.rng.choice(np.flatnonzero(mask)))  # explore among valid nodes
        else:
            with torch.no_grad():
                inputs = self.net.candidate_inputs(
                    self._emb, torch.tensor([index]), torch.from_numpy(feats).unsqueeze(0)
                )
                q = self.net.q_values(inputs, torch.from_numpy(mask).unsqueeze(0))[0]
            action = int(torch.argmax(q))
        node = ctx.platform.nodes[action].name
        if self.record:
            self.decisions.append(Decision(index, feats, mask, action, view.now))
        return node


def transitions(
    decisions: list[Decision], ends: Sequence[float], scale: float, episode: int
) -> list[Transition]:
    """The episode's replay transitions, rewards as in the module docstring; ``ends[i]`` is
    when the run finished task ``i`` (the instance context's task index)."""
    found = []
    for t, d in enumerate(decisions):
        reward = -(ends[d.task] - d.now) / scale
        last = t == len(decisions) - 1
        after = d if last else decisions[t + 1]
        found.append(
            Transition(
                episode,
                d.task,
                d.feats,
                d.mask,
                d.action,
                reward,
                after.task,
                after.feats,
                after.mask,
                last,
            )
        )
    return found


def load_dqn_net(checkpoint: str | Path | None = None) -> QNet:
    """The Q-network of ``checkpoint`` (default: the shipped one), or a clear error."""
    path = Path(checkpoint or DEFAULT_DQN_CHECKPOINT)
    if not path.exists():
        raise InputError(
            str(path), ["no DQN checkpoint here: train one with `wass-chat train dqn`"]
        )
    return load_qnet(str(path))[0]


class DQNPlanner(StaticScheduler):
    """Greedy rollout of the DQN in the simulator, returned as a static schedule."""

    name: str = "dqn"
    description: ClassVar[str] = "DQN with prioritized replay, greedy rollout"

    def __init__(
        self, network_model: NetworkModel = "fair", checkpoint: str | Path | None = None
    ) -> None:
        self.network_model: NetworkModel = network_model
        self.net = load_dqn_net(checkpoint)

    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        from sim.engine import simulate

        check_fits(workflow, platform)
        rollout = simulate(workflow, platform, DQNPolicy(self.net), self.network_model, occupancy)
        realised = rollout.to_schedule()
        return StaticSchedule(realised.assignment, realised.order, self.name, rollout.makespan)
