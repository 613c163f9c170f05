"""PPO training of the placement policy, readable top to bottom (after CleanRL's ``ppo.py``).

``train(cfg) -> TrainResult``: an optional imitation warm start from HEFT's placements, optional
expert iteration (imitating the network's own one-step lookahead, ``policy.learned.lookahead``),
then PPO with invalid-action masking. The terminal reward of an episode is ``1 - makespan / HEFT
makespan`` on that instance (positive when the policy beat HEFT); with ``use_rag`` the
Knowledge-Guided Teacher adds a per-decision reward (``policy.learned.teacher``). Rollouts run
in worker processes; metrics go to a JSONL file with namespaced keys; checkpoints are small.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from policy.learned.calibration import Setting
from policy.learned.config import TrainConfig, TrainProgress
from policy.learned.imitation import episode_logits, expert_iteration
from policy.learned.instances import InstanceSpec, sample_specs
from policy.learned.model import PolicyNet, load_checkpoint, save_checkpoint
from policy.learned.rollout import Episode, Predictions, collect
from policy.learned.teacher import Teacher
from policy.ppo import PPOCoefficients
from policy.ppo import ppo_update as shared_ppo_update

__all__ = ["TrainConfig", "TrainResult", "advantages", "ppo_update", "train"]


@dataclass
class TrainResult:
    checkpoint: Path
    metrics_path: Path
    final_train_ratio: float
    """Geometric mean of makespan / HEFT over the last update's episodes."""
    seconds: float
    best_update: int | None = None
    """PPO updates done before the kept weights (0: from before PPO); None without
    validation."""
    kept: str | None = None
    """Which weights were kept: ``untrained``, ``expert iteration N`` or ``PPO update N``."""
    validation_ratio: float | None = None
    """Greedy makespan / HEFT (geometric mean) of the kept weights on the validation set."""


def _decisions(net: PolicyNet, episodes: list[Episode]) -> tuple[torch.Tensor, ...]:
    """Log-probs, entropies, values (with gradients) of every recorded decision, in order."""
    logps, ents, values = [], [], []
    for ep in episodes:
        tr = ep.trajectory
        if not len(tr):
            continue
        inputs, logits, mask = episode_logits(net, ep)
        logp_all = torch.log_softmax(logits, dim=-1)
        actions = torch.tensor(tr.actions)
        logps.append(logp_all.gather(1, actions.unsqueeze(1)).squeeze(1))
        p = logp_all.exp()
        ents.append(-(p * logp_all).masked_fill(~mask, 0.0).sum(-1))  # valid actions only
        values.append(net.value(inputs, mask, torch.tensor(tr.progress)))
    return torch.cat(logps), torch.cat(ents), torch.cat(values)


def advantages(episodes: list[Episode], lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-decision advantages and value targets.

    The terminal reward ``1 - makespan / HEFT`` is compared with the mean of the other samples
    of the same instance (a group baseline, as in GRPO): instances differ far more from each
    other than actions do, and normalising across instances lets the data-intensive ones drown
    the rest. Per-decision teacher rewards (R_RAG) enter through GAE (gamma = 1) on top, with
    the critic as baseline; value targets are their returns.
    """
    groups: dict[object, list[float]] = {}
    for ep in episodes:
        groups.setdefault(ep.spec, []).append(1.0 - ep.ratio)
    centred = [1.0 - ep.ratio - float(np.mean(groups[ep.spec])) for ep in episodes]
    all_adv, all_ret = [], []
    for ep, terminal in zip(episodes, centred, strict=True):
        tr = ep.trajectory
        n = len(tr)
        rewards = np.array(tr.rewards, dtype=np.float64)
        values = np.array(tr.values, dtype=np.float64)
        shaped = np.zeros(n)
        last = 0.0
        for t in reversed(range(n)):
            next_value = values[t + 1] if t + 1 < n else 0.0
            delta = rewards[t] + next_value - values[t]
            last = delta + lam * last
            shaped[t] = last
        all_adv.append(shaped + terminal)  # R_RAG and the terminal reward: both relative units
        all_ret.append(shaped + values)
    adv = np.concatenate(all_adv)
    # One scale for the whole batch, not one per group: on an instance where every sample ties
    # (HEFT-like compute-bound cases) a per-group scale would blow pure noise up to unit size.
    return adv / (float(np.std(adv)) + 1e-8), np.concatenate(all_ret)


def ppo_update(
    net: PolicyNet,
    opt: torch.optim.Optimizer,
    episodes: list[Episode],
    b_adv: np.ndarray,
    b_ret: np.ndarray,
    cfg: TrainConfig,
    rng: np.random.Generator,
) -> dict[str, float]:
    """``cfg.ppo_epochs`` passes of clipped PPO (:func:`policy.ppo.ppo_update`) over
    minibatches of whole episodes (the graph network sees each workflow at once).

    Returns the last minibatch's losses and, over every minibatch, the mean approximate KL
    between the old and new policies and the fraction of decisions whose probability ratio was
    clipped: the two signs that an update moved the policy too far (or not at all).
    """
    offsets = np.cumsum([0] + [len(ep.trajectory) for ep in episodes])

    def minibatches() -> Iterator[tuple[np.ndarray, list[Episode]]]:
        order = rng.permutation(len(episodes))
        for k in range(0, len(order), cfg.minibatch_episodes):
            mb = [int(i) for i in order[k : k + cfg.minibatch_episodes]]
            idx = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in mb])
            yield idx, [episodes[i] for i in mb]

    return shared_ppo_update(
        net,
        opt,
        minibatches,
        lambda chosen: _decisions(net, chosen),
        np.concatenate([ep.trajectory.logps for ep in episodes]),
        b_adv,
        b_ret,
        PPOCoefficients(
            cfg.ppo_epochs, cfg.clip, cfg.value_coef, cfg.entropy_coef, cfg.max_grad_norm
        ),
    )


def behaviour_cloning(
    net: PolicyNet, specs: list[InstanceSpec], cfg: TrainConfig, pool: ProcessPoolExecutor | None
) -> list[float]:
    """Warm start: maximise the likelihood of HEFT's node for every decision."""
    if cfg.bc_epochs <= 0:
        return []
    episodes = collect(net, [(s, 0) for s in specs], "forced", cfg.network_model, pool)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    losses = []
    for _ in range(cfg.bc_epochs):
        net.train()
        logps, _, _ = _decisions(net, episodes)
        loss = -logps.mean()
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
        opt.step()
        losses.append(float(loss.detach()))
    return losses


def validation_specs(cfg: TrainConfig, train_specs: list[InstanceSpec]) -> list[InstanceSpec]:
    """Validation instances: training seeds (never evaluation ones), none of ``train_specs``."""
    if cfg.validation_instances <= 0:
        return []
    taken = set(train_specs)
    drawn = sample_specs(
        cfg.recipes,
        2 * cfg.validation_instances,
        cfg.seed + 7919,
        cfg.tasks,
        cfg.nodes,
        ccrs=cfg.ccrs,
    )
    return [s for s in drawn if s not in taken][: cfg.validation_instances]


def setting_of(cfg: TrainConfig) -> Setting:
    """The estimates ``cfg``'s episodes run under."""
    return Setting(cfg.estimates, cfg.noise, cfg.uncertainty_seed)


def validation_ratio(
    net: PolicyNet,
    specs: list[InstanceSpec],
    cfg: TrainConfig,
    pool: ProcessPoolExecutor | None,
    predictions: Predictions | None = None,
) -> float:
    """Geometric mean of the greedy policy's makespan / HEFT on ``specs``."""
    episodes = collect(
        net,
        [(s, 0) for s in specs],
        "greedy",
        cfg.network_model,
        pool,
        cfg.workers,
        setting_of(cfg),
        predictions,
    )
    return float(np.exp(np.mean([np.log(ep.ratio) for ep in episodes])))


def train(
    cfg: TrainConfig,
    teacher: Teacher | None = None,
    progress: TrainProgress | None = None,
    predictions: Predictions | None = None,
) -> TrainResult:
    """Train a policy; returns where the checkpoint and metrics were written.

    ``teacher`` supplies the RAG reward and is required when ``cfg.use_rag`` is set;
    ``predictions`` are the training and validation instances' retrieved runtime predictions
    (the RAG arm under ``user`` estimates plans on them); ``progress`` is called with a line
    after each PPO update, round of expert iteration and validation.
    """
    if cfg.use_rag and teacher is None:
        raise ValueError("use_rag needs a teacher (see policy.learned.teacher)")
    if not setting_of(cfg).exact and (cfg.expert_iterations or cfg.bc_epochs):
        raise ValueError("expert iteration and imitation run in the exact setting only")
    start = time.monotonic()
    torch.manual_seed(cfg.seed)
    net = load_checkpoint(cfg.init)[0] if cfg.init else PolicyNet(cfg.net)  # fails before output
    rng = np.random.default_rng(cfg.seed)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metrics_path = out / "metrics.jsonl"
    metrics = metrics_path.open("w")
    specs = sample_specs(
        cfg.recipes, cfg.train_instances, cfg.seed, cfg.tasks, cfg.nodes, ccrs=cfg.ccrs
    )
    validation = validation_specs(cfg, specs)
    pool = ProcessPoolExecutor(cfg.workers) if cfg.workers > 0 else None
    best: tuple[float, int, str, dict[str, torch.Tensor]] | None = None

    def validate(done: int, stage: str) -> None:
        """Score the current weights; keep them if they beat the best so far."""
        nonlocal best
        score = validation_ratio(net, validation, cfg, pool, predictions)
        row = {"val/update": done, "val/stage": stage, "val/ratio_to_heft_gm": score}
        metrics.write(json.dumps(row) + "\n")
        if best is None or score < best[0] - 1e-9:
            state = {k: v.detach().clone() for k, v in net.state_dict().items()}
            best = (score, done, stage, state)
        if progress is not None:
            progress(f"validation, {stage:>20s}: makespan/HEFT {score:.4f}")

    def after_round(round_: int, row: dict[str, float]) -> None:
        metrics.write(json.dumps(row) + "\n")
        metrics.flush()
        if progress is not None:
            progress(
                f"expert iteration {round_}: lookahead makespan/HEFT "
                f"{row['exit/expert_ratio_gm']:.4f}, {int(row['exit/labels'])} labels, "
                f"imitation loss {row['exit/loss']:.3f}, network agrees with "
                f"{row['exit/agree']:.1%} of labels ({row['exit/agree_overruled']:.1%} of the "
                f"overruled ones)  {row['time/minutes']:.1f} min",
            )
        if validation:
            validate(0, f"expert iteration {round_}")

    try:
        for epoch, loss in enumerate(behaviour_cloning(net, specs, cfg, pool)):
            metrics.write(json.dumps({"bc/epoch": epoch, "bc/loss": loss}) + "\n")
        if validation:
            validate(0, "initial weights" if cfg.init or cfg.bc_epochs else "untrained")
        expert_iteration(net, specs, cfg, pool, rng, after_round, start)
        opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
        ratio_gm = float("nan")
        done = 0
        for update in range(cfg.updates):
            if cfg.past_wall_clock_cap(start):
                break
            chosen = rng.choice(len(specs), size=cfg.instances_per_update, replace=False)
            jobs = [
                (specs[i], int(rng.integers(2**31)))
                for i in chosen
                for _ in range(cfg.samples_per_instance)
            ]
            episodes = collect(
                net,
                jobs,
                "sample",
                cfg.network_model,
                pool,
                cfg.workers,
                setting_of(cfg),
                predictions,
            )
            if teacher is not None and cfg.use_rag:
                for ep in episodes:
                    teacher.shape(ep, cfg.rag_coef)
            b_adv, b_ret = advantages(episodes, cfg.gae_lambda)
            losses = ppo_update(net, opt, episodes, b_adv, b_ret, cfg, rng)
            ratio_gm = float(np.exp(np.mean([np.log(ep.ratio) for ep in episodes])))
            row = {
                "ppo/update": update,
                "ppo/ratio_to_heft_gm": ratio_gm,
                **losses,
                "time/minutes": (time.monotonic() - start) / 60,
            }
            metrics.write(json.dumps(row) + "\n")
            metrics.flush()
            if progress is not None:
                progress(
                    f"update {update:3d}  makespan/HEFT {ratio_gm:.4f}  "
                    f"entropy {row['ppo/entropy']:.3f}  approx-KL {row['ppo/approx_kl']:.4f}  "
                    f"clipped {row['ppo/clipfrac']:.1%}  {row['time/minutes']:.1f} min",
                )
            done = update + 1
            if validation and done % cfg.validate_every == 0:
                validate(done, f"PPO update {done}")
        if validation and done % cfg.validate_every:
            validate(done, f"PPO update {done}")  # the final weights get their chance too
    finally:
        metrics.close()
        if pool is not None:
            pool.shutdown()
    kept_update, kept_score, kept = None, None, None
    if best is not None:
        kept_score, kept_update, kept, state = best
        net.load_state_dict(state)
    checkpoint = out / "policy.pt"
    extra: dict[str, object] = {
        "train_config": json.dumps(asdict(cfg)),
        "best_update": kept_update,
        "kept": kept,
    }
    save_checkpoint(net, str(checkpoint), extra)
    return TrainResult(
        checkpoint,
        metrics_path,
        ratio_gm,
        time.monotonic() - start,
        best_update=kept_update,
        kept=kept,
        validation_ratio=kept_score,
    )
