"""DQN training of the placement Q-network, readable top to bottom (after CleanRL's ``dqn.py``).

``train(cfg) -> DQNResult``: episodes are streams of small workflows arriving on small
heterogeneous GPU clusters (:mod:`sim.arrivals`), run in the simulator with the epsilon-greedy
:class:`~policy.learned.dqn_agent.DQNPolicy`; each decision becomes a transition whose reward
is minus the time its task took to finish (:func:`~policy.learned.dqn_agent.transitions`).
Then, as in CleanRL: a replay buffer (here prioritized by TD error, with importance weights,
:mod:`policy.learned.replay`), a target network copied every ``target_network_frequency`` steps,
a linear epsilon schedule, one gradient step every ``train_frequency`` steps after
``learning_starts``. Invalid nodes are masked with the dtype's minimum Q-value in the greedy
choice and in the target's max, and exploration draws only valid nodes. Training stops after
``total_steps`` decisions (a step budget, never the wall clock).

The simulator calls the scheduler back, so an episode is collected whole, then its transitions
enter the buffer one step at a time with the updates they are due (the same number of updates
per step as CleanRL's loop). The greedy network is scored on validation streams (makespan over
the dynamic earliest-finish scheduler's, ``eft``) before training and every
``validate_every`` steps (makespan and mean SLR over eft's, geometric mean); the best-scoring
weights are the checkpoint, which may be the untrained network. Metrics go to a JSONL file
with namespaced keys.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Batch, HeteroData

from policy.learned.config import TrainProgress
from policy.learned.dqn_agent import DQNPolicy, transitions
from policy.learned.dqn_config import DQNConfig
from policy.learned.dqn_model import QNet, save_qnet
from policy.learned.features import build_graph
from policy.learned.instance_context import InstanceContext
from policy.learned.replay import PrioritizedReplay, Transition
from sim.arrivals import StreamSpec, merge_stream, poisson_stream
from sim.engine import simulate
from sim.metrics import stream_summary
from sim.model import Platform, Workflow
from sim.placement import EarliestFinishPlacement
from sim.platforms import generate_platform, gpu_cluster_spec

TRAINING_SEEDS = 1_000_000
"""Training streams are drawn from seeds at and above this; validation from ``2 * it``: never
the bench's seeds (0, 1, ...)."""


@dataclass
class DQNResult:
    checkpoint: Path
    metrics_path: Path
    steps: int
    episodes: int
    seconds: float
    kept: str
    """Which weights were kept: ``untrained`` or ``step N``."""
    validation_ratio: float
    """Greedy makespan and SLR over eft's (geometric mean) of the kept weights on the
    validation streams."""


def linear_schedule(start: float, end: float, duration: float, step: int) -> float:
    """CleanRL's epsilon schedule: from ``start`` to ``end`` over ``duration`` steps, then flat."""
    slope = (end - start) / max(duration, 1.0)
    return max(slope * step + start, end)


def stream_instance(cfg: DQNConfig, seed: int) -> tuple[Workflow, Platform]:
    """One training (or validation) stream and its cluster, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    spec = StreamSpec(
        count=int(rng.integers(cfg.stream_sizes[0], cfg.stream_sizes[1] + 1)),
        window=float(rng.uniform(*cfg.windows)),
        tasks=cfg.stream_tasks,
        ccr=cfg.ccr,
    )
    platform = generate_platform(gpu_cluster_spec(int(rng.choice(cfg.nodes))), seed)
    return merge_stream(poisson_stream(spec, seed)), platform


def greedy_ratio(net: QNet, instances: list[tuple[Workflow, Platform]], cfg: DQNConfig) -> float:
    """Geometric mean over ``instances`` of the greedy network's makespan and mean SLR over
    eft's (both metrics of the arrivals bench count alike)."""
    logs = []
    for workflow, platform in instances:
        ours = simulate(workflow, platform, DQNPolicy(net), cfg.network_model)
        eft = simulate(workflow, platform, EarliestFinishPlacement(), cfg.network_model)
        mine, theirs = (stream_summary(r, workflow, platform) for r in (ours, eft))
        logs += [np.log(mine[k] / theirs[k]) for k in ("makespan", "slr")]
    return float(np.exp(np.mean(logs)))


def td_update(
    q_net: QNet,
    target_net: QNet,
    optimizer: torch.optim.Optimizer,
    batch: list[Transition],
    weights: np.ndarray,
    graphs: dict[int, HeteroData],
    cfg: DQNConfig,
) -> tuple[float, np.ndarray, float]:
    """One gradient step on the importance-weighted Huber TD loss; (loss, TD errors, mean Q).

    The distinct episodes' graphs are encoded together (one batched forward per network), then
    each episode's transitions are scored on its own nodes.
    """
    episodes = list(dict.fromkeys(t.episode for t in batch))
    joined = Batch.from_data_list([graphs[e] for e in episodes])
    emb = q_net.encode(joined)
    with torch.no_grad():
        target_emb = target_net.encode(joined)
    q_taken = torch.empty(len(batch))
    targets = torch.empty(len(batch))
    for k, episode in enumerate(episodes):
        rows = [i for i, t in enumerate(batch) if t.episode == episode]
        chosen = [batch[i] for i in rows]
        t0, t1 = int(joined["task"].ptr[k]), int(joined["task"].ptr[k + 1])
        n0, n1 = int(joined["compute"].ptr[k]), int(joined["compute"].ptr[k + 1])
        own = {"task": emb["task"][t0:t1], "compute": emb["compute"][n0:n1]}
        inputs = q_net.candidate_inputs(
            own,
            torch.tensor([t.task for t in chosen]),
            torch.from_numpy(np.stack([t.feats for t in chosen])),
        )
        q = q_net.q_values(inputs, torch.from_numpy(np.stack([t.mask for t in chosen])))
        q_taken[rows] = q.gather(1, torch.tensor([[t.action] for t in chosen])).squeeze(1)
        with torch.no_grad():
            frozen = {"task": target_emb["task"][t0:t1], "compute": target_emb["compute"][n0:n1]}
            next_inputs = target_net.candidate_inputs(
                frozen,
                torch.tensor([t.next_task for t in chosen]),
                torch.from_numpy(np.stack([t.next_feats for t in chosen])),
            )
            next_mask = torch.from_numpy(np.stack([t.next_mask for t in chosen]))
            # Double DQN: the online network picks the next action, the target values it.
            online_next = q_net.q_values(
                q_net.candidate_inputs(
                    own,
                    torch.tensor([t.next_task for t in chosen]),
                    torch.from_numpy(np.stack([t.next_feats for t in chosen])),
                ),
                next_mask,
            )
            best_next = online_next.argmax(dim=1, keepdim=True)
            next_q = target_net.q_values(next_inputs, next_mask).gather(1, best_next).squeeze(1)
            rewards = torch.tensor([t.reward for t in chosen], dtype=torch.float32)
            not_done = torch.tensor([0.0 if t.done else 1.0 for t in chosen])
            targets[rows] = rewards + cfg.gamma * next_q * not_done
    td = targets - q_taken
    loss = (
        torch.from_numpy(weights) * nn.functional.huber_loss(q_taken, targets, reduction="none")
    ).mean()
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(q_net.parameters(), cfg.max_grad_norm)
    optimizer.step()
    return float(loss.detach()), td.detach().numpy(), float(q_taken.detach().mean())


def train(cfg: DQNConfig, progress: TrainProgress | None = None) -> DQNResult:
    """Train a Q-network; returns where the checkpoint and metrics were written (``progress``:
    called with a line every ten episodes and at each validation)."""
    start = time.monotonic()
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    q_net = QNet(cfg.net)
    target_net = QNet(cfg.net)
    target_net.load_state_dict(q_net.state_dict())
    optimizer = torch.optim.Adam(q_net.parameters(), lr=cfg.learning_rate)
    replay = PrioritizedReplay(cfg.buffer_size, cfg.alpha)
    graphs: dict[int, HeteroData] = {}
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metrics_path = out / "metrics.jsonl"
    validation = [
        stream_instance(cfg, 2 * TRAINING_SEEDS + 1000 * cfg.seed + k)
        for k in range(cfg.validation_streams)
    ]
    best: tuple[float, str, dict[str, torch.Tensor]] | None = None

    def validate(step: int, metrics: TextIO) -> None:
        """Score the greedy network; keep its weights if they beat the best so far."""
        nonlocal best
        q_net.eval()
        score = greedy_ratio(q_net, validation, cfg) if validation else float("nan")
        q_net.train()
        stage = "untrained" if step == 0 else f"step {step}"
        print(json.dumps({"val/step": step, "val/ratio_to_eft_gm": score}), file=metrics)
        if validation and (best is None or score < best[0] - 1e-9):
            best = (score, stage, {k: v.detach().clone() for k, v in q_net.state_dict().items()})
        if progress is not None:
            progress(f"validation at {stage:>12s}: makespan and SLR / eft {score:.4f}")

    global_step = episode = 0
    with metrics_path.open("w") as metrics:
        validate(0, metrics)
        while global_step < cfg.total_steps:
            # 1. collect one episode with the current epsilon
            epsilon = linear_schedule(
                cfg.start_epsilon,
                cfg.end_epsilon,
                cfg.exploration_fraction * cfg.total_steps,
                global_step,
            )
            workflow, platform = stream_instance(cfg, TRAINING_SEEDS + int(rng.integers(2**30)))
            agent = DQNPolicy(q_net, epsilon, seed=int(rng.integers(2**31)), record=True)
            q_net.eval()
            result = simulate(workflow, platform, agent, cfg.network_model)
            q_net.train()
            context = InstanceContext.of(workflow, platform)
            graphs[episode] = build_graph(context)
            ends = [0.0] * len(workflow.tasks)
            for record in result.tasks:
                ends[context.task_index[record.task]] = record.end
            steps = transitions(agent.decisions, ends, context.scale, episode)
            print(
                json.dumps(
                    {
                        "charts/episode": episode,
                        "charts/step": global_step,
                        "charts/epsilon": epsilon,
                        "charts/episodic_return": sum(t.reward for t in steps),
                        "charts/makespan": result.makespan,
                        "charts/decisions": len(steps),
                    }
                ),
                file=metrics,
            )
            # 2. feed its transitions to the buffer, training as the steps pass
            for transition in steps:
                evicted = replay.add(transition)
                if evicted is not None and not replay.holds_episode(evicted.episode):
                    graphs.pop(evicted.episode, None)
                global_step += 1
                if global_step > cfg.learning_starts and global_step % cfg.train_frequency == 0:
                    beta = min(
                        1.0, cfg.beta_start + (1 - cfg.beta_start) * global_step / cfg.total_steps
                    )
                    indices, batch, weights = replay.sample(cfg.batch_size, beta, rng)
                    loss, td, mean_q = td_update(
                        q_net, target_net, optimizer, batch, weights, graphs, cfg
                    )
                    replay.update_priorities(indices, td)
                    if global_step % 100 == 0:
                        print(
                            json.dumps(
                                {
                                    "losses/td_loss": loss,
                                    "losses/q_values": mean_q,
                                    "losses/beta": beta,
                                    "charts/step": global_step,
                                }
                            ),
                            file=metrics,
                        )
                if global_step % cfg.target_network_frequency == 0:
                    target_net.load_state_dict(q_net.state_dict())
                if global_step % cfg.validate_every == 0:
                    validate(global_step, metrics)
                if global_step >= cfg.total_steps:
                    break
            episode += 1
            if progress is not None and episode % 10 == 0:
                minutes = (time.monotonic() - start) / 60
                progress(
                    f"step {global_step:6d}  episode {episode:4d}  epsilon {epsilon:.3f}  "
                    f"makespan {result.makespan:8.1f}  {minutes:.1f} min",
                )
        if global_step % cfg.validate_every:
            validate(global_step, metrics)  # the final weights get their chance too
    score, kept, state = best if best is not None else (float("nan"), "last", q_net.state_dict())
    q_net.load_state_dict(state)
    checkpoint = out / "dqn.pt"
    extra = {
        "train_config": json.dumps(asdict(cfg)),
        "kept": kept,
        "validation_ratio": score,
        "steps": global_step,
    }
    save_qnet(q_net, str(checkpoint), extra)
    return DQNResult(
        checkpoint, metrics_path, global_step, episode, time.monotonic() - start, kept, score
    )
