"""Training the Decima-style selector (:mod:`policy.learned.decima`): REINFORCE with Decima's
time-based baseline over several rollouts of the same stream, budgeted by steps.

Each step draws one small stream (3-12 workflows of 8-30 tasks arriving over 30-300 s) on a
small GPU cluster (``gpu_cluster_spec``, 4-8 nodes), plans it ``rollouts`` times with orders
drawn from the network's softmax, and scores each plan by its workflows' planned response
times (last planned finish minus arrival; the plan, not a simulation, to keep steps cheap).
As in Decima (Mao et al. 2019, section 5.3), the return of a decision taken at time ``t`` is
minus the time workflows still spend in the system after ``t``, and its baseline is the mean
of that same quantity over the rollouts of the same stream at the same ``t`` (the
"input-driven" baseline: every rollout sees the same arrivals). Adam on
``-sum(advantage * log-probability of the picks)``.

Everything is seeded (initial weights, streams, platforms, the orders drawn) and torch runs on
one thread, so two trainings with the same arguments give the same weights. The weights kept
are those with the lowest mean planned response time on fixed validation streams (seeds apart
from the bench's), checked every ``CHECK_EVERY`` steps (with none, the last).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from policy.duplication import CopyPlan
from policy.learned.decima import MINUTE, Decima, log_probs
from policy.learned.decima_config import CHECK_EVERY, CHECKPOINT, LEARNING_RATE, DecimaTraining
from policy.learned.decima_model import DecimaNet, initial_net, save_decima
from sim.arrivals import StreamSpec, merge_stream, poisson_stream, workflow_prefix
from sim.model import Platform, Workflow
from sim.platforms import generate_platform, gpu_cluster_spec

VALIDATION_SEED = 900_000
"""Validation streams are seeds from here (the bench draws seeds 0, 1, 2...)."""


@dataclass(frozen=True)
class TrainingResult:
    net: DecimaNet
    steps: int
    cpu_seconds: float
    kept_step: int
    """The step whose weights were kept (0: the initialisation)."""
    validation: list[tuple[int, float]]
    """(step, mean planned response time in s over the validation streams)."""


def training_case(seed: int) -> tuple[Workflow, Platform]:
    """One small stream (merged) and its cluster, deterministic in ``seed``."""
    rng = np.random.default_rng(seed)
    spec = StreamSpec(count=int(rng.integers(3, 13)), window=float(rng.uniform(30, 300)))
    workflow = merge_stream(poisson_stream(spec, int(rng.integers(2**31))))
    platform = generate_platform(
        gpu_cluster_spec(int(rng.integers(4, 9))), int(rng.integers(2**31))
    )
    return workflow, platform


def responses(plan: CopyPlan) -> list[tuple[float, float]]:
    """(arrival, planned end) of each workflow of a merged stream's plan."""
    spans: dict[str, tuple[float, float]] = {}
    for task in plan.workflow.tasks:
        prefix = workflow_prefix(task.id)
        arrival, end = spans.get(prefix, (task.release, 0.0))
        spans[prefix] = (arrival, max(end, plan.finish[task.id]))
    return list(spans.values())


def time_to_go(spans: list[tuple[float, float]], t: float) -> float:
    """Minus the time workflows spend in the system after ``t`` (per workflow, in minutes):
    the return of a decision taken at ``t``."""
    return -sum(max(0.0, end - max(t, arrival)) for arrival, end in spans) / (len(spans) * MINUTE)


def mean_response(net: DecimaNet, cases: list[tuple[Workflow, Platform]]) -> float:
    """Mean planned response time (s) of the greedy selector over ``cases``."""
    values = []
    for workflow, platform in cases:
        spans = responses(Decima(net).plan(workflow, platform))
        values.append(sum(end - arrival for arrival, end in spans) / len(spans))
    return float(np.mean(values))


def train_decima(cfg: DecimaTraining, log: Callable[[str], None] | None = None) -> TrainingResult:
    """REINFORCE as the module docstring says; the kept network, in eval mode."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(cfg, log or (lambda _: None))
    finally:
        torch.set_num_threads(threads)


def _train(cfg: DecimaTraining, log: Callable[[str], None]) -> TrainingResult:
    start = time.process_time()
    net = initial_net(cfg.seed).train()
    optimizer = torch.optim.Adam(net.parameters(), lr=LEARNING_RATE)
    validation = [training_case(VALIDATION_SEED + k) for k in range(cfg.validation_streams)]
    best = mean_response(net, validation) if validation else float("inf")
    kept, best_state = 0, {k: v.clone() for k, v in net.state_dict().items()}
    history = [(0, best)]
    log(f"step 0: validation mean response {best:.1f} s")
    for step in range(1, cfg.steps + 1):
        workflow, platform = training_case(cfg.seed * 1_000_003 + step)
        runs = []
        for r in range(cfg.rollouts):
            sampler = torch.Generator().manual_seed(cfg.seed * 1_000_003 + step * 101 + r)
            decima = Decima(net, sampler=sampler)
            spans = responses(decima.plan(workflow, platform))
            runs.append((spans, decima.decisions))
        decisions, advantages = [], []
        for spans, taken in runs:
            for decision in taken:
                baseline = np.mean([time_to_go(other, decision.time) for other, _ in runs])
                advantages.append(time_to_go(spans, decision.time) - baseline)
                decisions.append(decision)
        if decisions:
            optimizer.zero_grad()
            weights = torch.tensor(advantages, dtype=torch.float32)
            loss = -(weights * log_probs(net, decisions)).sum() / len(decisions)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            optimizer.step()
        if validation and (step % CHECK_EVERY == 0 or step == cfg.steps):
            net.eval()
            score = mean_response(net, validation)
            net.train()
            history.append((step, score))
            log(f"step {step}: validation mean response {score:.1f} s (best {best:.1f})")
            if score < best:
                best, kept = score, step
                best_state = {k: v.clone() for k, v in net.state_dict().items()}
    if validation:
        net.load_state_dict(best_state)
    else:
        kept = cfg.steps  # nothing to choose on: the last weights
    return TrainingResult(net.eval(), cfg.steps, time.process_time() - start, kept, history)


def train_and_save(
    cfg: DecimaTraining, out: str | Path = CHECKPOINT, log: Callable[[str], None] | None = None
) -> TrainingResult:
    """Train (``wass-chat train decima``) and save the kept network with its metadata."""
    result = train_decima(cfg, log)
    save_decima(
        result.net,
        str(out),
        {
            "steps": result.steps,
            "rollouts": cfg.rollouts,
            "seed": cfg.seed,
            "learning_rate": LEARNING_RATE,
            "cpu_seconds": round(result.cpu_seconds, 1),
            "kept_step": result.kept_step,
            "validation": result.validation,
        },
    )
    return result
