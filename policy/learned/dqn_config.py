"""What one DQN training run depends on (:func:`policy.learned.dqn.train`), apart from the
training code so ``wass-chat train dqn`` takes its defaults from it without loading torch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from policy.learned.net_config import NetConfig

if TYPE_CHECKING:
    from sim.schedule import NetworkModel


@dataclass(frozen=True)
class DQNConfig:
    """Everything one DQN training run depends on."""

    seed: int = 0
    """Seeds the network, the training streams, exploration and replay sampling."""
    total_steps: int = 10_000
    """Decisions to train on (environment steps): the budget."""
    learning_rate: float = 5e-5
    """Adam's learning rate."""
    buffer_size: int = 10_000
    """Transitions the replay keeps (the oldest are overwritten)."""
    gamma: float = 0.9
    """Discount: a horizon of about ten decisions (longer ones bootstrapped badly here)."""
    target_network_frequency: int = 1_000
    """Steps between copies of the online network into the target network."""
    batch_size: int = 32
    """Transitions per gradient step, drawn by priority."""
    start_epsilon: float = 1.0
    """Exploration rate at the first step (1: every node drawn at random)."""
    end_epsilon: float = 0.05
    """Exploration rate once the schedule has run (``exploration_fraction`` of the budget)."""
    exploration_fraction: float = 0.5
    """Share of ``total_steps`` over which epsilon falls linearly to ``end_epsilon``."""
    learning_starts: int = 500
    """Steps collected before the first gradient step."""
    train_frequency: int = 4
    """Steps between gradient steps."""
    alpha: float = 0.6
    """Prioritization exponent of the replay (0: uniform)."""
    beta_start: float = 0.4
    """Importance-weight exponent at the start; it rises linearly to 1 over the budget."""
    max_grad_norm: float = 10.0
    """Gradients are clipped to this global norm before each optimiser step."""
    stream_sizes: tuple[int, int] = (3, 12)
    """Workflows per training stream (inclusive range)."""
    stream_tasks: tuple[int, int] = (6, 16)
    """Tasks per workflow (inclusive range)."""
    windows: tuple[float, float] = (0.0, 300.0)
    """Range of the seconds over which a training stream arrives."""
    nodes: tuple[int, ...] = (4, 6, 8)
    """Sizes of the training GPU clusters (``gpu:N``)."""
    ccr: float = 0.1
    """Communication-to-computation ratio of the streams' generated workflows."""
    validation_streams: int = 10
    """Streams the greedy network is scored on; the best-scoring weights are the checkpoint."""
    validate_every: int = 1_000
    """Steps between two validations (and after the last step)."""
    network_model: NetworkModel = "fair"
    """How the simulator shares links among transfers: ``fair`` (contended) or ``ideal``."""
    torch_threads: int = 1
    """Torch threads while training: on small graphs, and on a shared 2-core machine, one is
    the fastest (more made an update 50x slower at a load of 13)."""
    net: NetConfig = field(default_factory=NetConfig)
    """The Q-network's shape (:class:`~policy.learned.net_config.NetConfig`)."""
    out_dir: str = "out/dqn"
    """Where the checkpoint and the metrics (JSON lines) are written."""
