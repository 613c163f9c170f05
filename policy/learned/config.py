"""What one training run of the learned policy depends on (:func:`policy.learned.train.train`).

One frozen dataclass, every field documented; the CLI's ``wass-chat train policy`` flags map
onto it, and the checkpoint records it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from policy.learned.instances import ALL_RECIPES
from policy.learned.model import NetConfig
from sim.schedule import NetworkModel


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
    estimates: str = "oracle"
    """What episodes plan on (:mod:`policy.learned.calibration`): ``oracle`` is the exact
    setting (the nominal instance, no realisation); ``user``: the user's requests, calibrated by
    the retrieved predictions in the RAG arm, with the plan replayed on realised values."""
    noise: float = 1.0
    """Scale of the realised spreads under ``user`` estimates."""
    uncertainty_seed: int = 0
    bc_epochs: int = 0
    """Imitation warm-start epochs on HEFT's placements (0: start from scratch)."""
    expert_iterations: int = 0
    """Rounds of expert iteration before PPO: the lookahead expert (over the current network)
    labels ``expert_instances`` training instances, the network imitates every label so far."""
    expert_instances: int = 12
    expert_k: int = 3
    """Candidates the lookahead tries per decision."""
    expert_epochs: int = 4
    """Passes over the aggregated labels after each round."""
    updates: int = 30
    """PPO updates (each collects ``instances_per_update * samples_per_instance`` episodes)."""
    instances_per_update: int = 4
    samples_per_instance: int = 4
    """Episodes of the same instance form a group whose mean reward is the baseline."""
    ppo_epochs: int = 4
    minibatch_episodes: int = 4
    learning_rate: float = 3e-4
    clip: float = 0.2
    entropy_coef: float = 0.001
    value_coef: float = 0.5
    gae_lambda: float = 0.95
    max_grad_norm: float = 0.5
    use_rag: bool = True
    """Add the Knowledge-Guided Teacher's per-decision reward (False: sparse reward only)."""
    rag_coef: float = 1.0
    workers: int = 2
    """Rollout processes (0: in process)."""
    budget_minutes: float = 60.0
    """Stop expert iteration and PPO early when the wall-clock budget (from the start) is spent."""
    validation_instances: int = 12
    """Instances (training seeds, none of the training instances) the greedy policy is scored
    on before training and every ``validate_every`` updates; the best-scoring weights are the
    checkpoint (0: keep the last weights)."""
    validate_every: int = 4
    net: NetConfig = field(default_factory=NetConfig)
    init: str | None = None
    """Start from this checkpoint's weights (say, a run of expert iteration alone) instead of a
    fresh network; ``net`` is then taken from the checkpoint."""
    out_dir: str = "out/train"
