"""What one training run of the learned policy depends on (:func:`policy.learned.train.train`).

One frozen dataclass, every field documented; the CLI's ``wass-chat train policy`` flags map
onto it, and the checkpoint records it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from policy.learned.net_config import NetConfig

if TYPE_CHECKING:
    from sim.schedule import NetworkModel

ALL_RECIPES = (
    "montage",
    "epigenomics",
    "genome",
    "seismology",
    "soykb",
    "srasearch",
    "blast",
    "bwa",
    "cycles",
)
"""The WfCommons recipes training draws from by default."""
TrainProgress = Callable[[str], None]
"""Called with each progress line of a training run (PPO's and the DQN's)."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything one training run depends on."""

    seed: int = 0
    """Seeds the network, the instance draw and action sampling."""
    recipes: tuple[str, ...] = ALL_RECIPES
    """Recipes trained on (hold some out for the generalisation split)."""
    tasks: tuple[int, int] = (50, 200)
    """Range of workflow sizes."""
    nodes: tuple[int, ...] = (8, 16, 32)
    """Platform sizes (heterogeneous nodes)."""
    ccrs: tuple[float, ...] = (0.0, 1.0)
    """Data regimes, cycled: 0 keeps WfCommons' own (tiny) file sizes, 1.0 is data-intensive."""
    train_instances: int = 64
    """Distinct training instances (cycled through)."""
    network_model: NetworkModel = "fair"
    """How the simulator shares links among transfers: ``fair`` (contended) or ``ideal``."""
    estimates: str = "oracle"
    """What episodes plan on (:mod:`policy.learned.calibration`): ``oracle`` is the exact
    setting (the nominal instance, no realisation); ``user``: the user's requests, calibrated by
    the retrieved predictions in the RAG arm, with the plan replayed on realised values."""
    noise: float = 1.0
    """Scale of the realised spreads under ``user`` estimates."""
    uncertainty_seed: int = 0
    """Seeds the persistent draws under ``user`` estimates (node-class slowdowns, request
    factors)."""
    bc_epochs: int = 0
    """Imitation warm-start epochs on HEFT's placements (0: start from scratch)."""
    expert_iterations: int = 0
    """Rounds of expert iteration before PPO: the lookahead expert (over the current network)
    labels ``expert_instances`` training instances, the network imitates every label so far."""
    expert_instances: int = 12
    """Training instances the lookahead expert labels in each round of expert iteration."""
    expert_k: int = 3
    """Candidates the lookahead tries per decision."""
    expert_epochs: int = 4
    """Passes over the aggregated labels after each round."""
    updates: int = 30
    """The step budget: PPO updates (each collects ``instances_per_update *
    samples_per_instance`` episodes). Training stops after them, or earlier only at the optional
    ``budget_minutes`` cap."""
    instances_per_update: int = 4
    """Training instances drawn (without replacement) for each PPO update."""
    samples_per_instance: int = 4
    """Episodes of the same instance form a group whose mean reward is the baseline."""
    ppo_epochs: int = 4
    """Passes of clipped PPO over each update's episodes."""
    minibatch_episodes: int = 4
    """Whole episodes per minibatch (in PPO and in imitation)."""
    learning_rate: float = 3e-4
    """Adam's learning rate (PPO and imitation)."""
    clip: float = 0.2
    """PPO's clip range: the probability ratio is clipped to ``[1 - clip, 1 + clip]``."""
    entropy_coef: float = 0.001
    """Weight of the entropy bonus (over valid actions only) in the PPO loss."""
    value_coef: float = 0.5
    """Weight of the critic's value loss in the PPO loss."""
    gae_lambda: float = 0.95
    """GAE's lambda for the per-decision teacher rewards (gamma is 1: episodes are short and
    the terminal reward is what counts)."""
    max_grad_norm: float = 0.5
    """Gradients are clipped to this global norm before each optimiser step."""
    use_rag: bool = True
    """Add the Knowledge-Guided Teacher's per-decision reward (False: sparse reward only)."""
    rag_coef: float = 1.0
    """Scale of the teacher's per-decision reward (``coef * R_RAG``)."""
    workers: int = 2
    """Rollout processes (0: in process)."""
    budget_minutes: float | None = None
    """An optional wall-clock cap: stop expert iteration and PPO early once this many minutes
    have passed since the start. None (the default): training runs its step budget
    (``expert_iterations``, ``updates``) whatever the machine's load, so a seed trains the same
    on a busy machine as on a quiet one."""
    validation_instances: int = 12
    """Instances (training seeds, none of the training instances) the greedy policy is scored
    on before training and every ``validate_every`` updates; the best-scoring weights are the
    checkpoint (0: keep the last weights)."""
    validate_every: int = 4
    """PPO updates between two validations (and after the last one)."""
    net: NetConfig = field(default_factory=NetConfig)
    """The network's shape (:class:`~policy.learned.model.NetConfig`)."""
    init: str | None = None
    """Start from this checkpoint's weights (say, a run of expert iteration alone) instead of a
    fresh network; ``net`` is then taken from the checkpoint."""
    out_dir: str = "out/train"
    """Where the checkpoint and the metrics (JSON lines) are written."""

    def problems(self) -> list[str]:
        """What makes this run impossible, in words (empty: it can run). Checked by the CLI
        before anything is built, so a bad option is one line, not a traceback mid-run."""
        found = []
        if self.train_instances < self.instances_per_update:
            found.append(
                f"{self.train_instances} training instances, but each PPO update draws "
                f"{self.instances_per_update} distinct ones: give --instances "
                f"{self.instances_per_update} or more"
            )
        if self.updates < 0 or self.expert_iterations < 0:
            found.append("updates and expert iterations cannot be negative")
        if not self.recipes:
            found.append("no recipe left to train on (every one held out?)")
        return found

    def past_wall_clock_cap(self, started: float) -> bool:
        """Whether the optional ``budget_minutes`` cap is spent (``started``: a
        :func:`time.monotonic` reading at the start of training)."""
        if self.budget_minutes is None:
            return False
        return (time.monotonic() - started) / 60 > self.budget_minutes
