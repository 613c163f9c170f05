"""A warm start for PPO: behaviour cloning of the cross-entropy order inside the choice set.

:class:`CemChooser` takes, among the valid jobs of a decision (the head and the jobs that fit
now), the one the linear cross-entropy priority (sim/batch/learn.py, ``DEFAULT_RUN_WEIGHTS``)
ranks first, computed as :class:`sim.batch.priority.PriorityModel` does from the decision's
own features (wait, fair share, estimate) and the job's size in the cluster. :func:`clone`
fits the actor to those choices (cross-entropy over the masked logits) on training windows,
so PPO starts from the linear order's behaviour within the same choice set instead of a
uniform choice. No new data: the same training windows, the same seeded generators.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from policy.batch_gat.model import Batch, QueuePolicy
from sim.batch.chosen import (
    JOB_FEATURES,
    LOG2_ESTIMATE_SCALE,
    LOG_MINUTES_SCALE,
    DecisionView,
    simulate_chosen,
)
from sim.batch.config import PriorityWeights
from sim.batch.learn import DEFAULT_RUN_WEIGHTS, FEATURES, Period, policy_config
from sim.batch.priority import ESTIMATE_LOG2_SCALE

LOG_WAIT, FAIRSHARE, LOG_ESTIMATE = (
    JOB_FEATURES.index(name) for name in ("log_wait", "fairshare", "log_estimate")
)


class CemChooser:
    """The valid job of highest linear priority (the first in the window on a tie)."""

    def __init__(self, period: Period, weights: PriorityWeights | None = None) -> None:
        self.weights = weights or policy_config([DEFAULT_RUN_WEIGHTS[k] for k in FEATURES]).weights
        w, c = period.workload, period.cluster
        node_frac = w.nnodes / max(len(c.nodes), 1)
        cpu_frac = w.nnodes * w.cpus_per_node / max(c.total_cpus, 1)
        self.size = np.clip((node_frac + cpu_frac) / 2.0, 0.0, 1.0)

    def priorities(self, view: DecisionView) -> np.ndarray:
        """The linear priority of each job of the window (``-inf`` where masked)."""
        wts = self.weights
        out = np.full(len(view.mask), -np.inf)
        for x, j in enumerate(view.rows):
            if not view.mask[x]:
                continue
            f = view.jobs[x]
            age_s = math.expm1(float(f[LOG_WAIT]) * LOG_MINUTES_SCALE) * 60.0
            log2_estimate = float(f[LOG_ESTIMATE]) * LOG2_ESTIMATE_SCALE
            value = (
                wts.job_size * float(self.size[j])
                + wts.estimate * log2_estimate / ESTIMATE_LOG2_SCALE
                + wts.age * min(age_s / wts.max_age_s, 1.0)
                + wts.fairshare * float(f[FAIRSHARE])
            )
            out[x] = int(value)
        return out

    def __call__(self, view: DecisionView) -> int:
        return int(np.argmax(self.priorities(view)))


class _Recorder:
    """Wraps a chooser and keeps every decision it makes (the cloning targets)."""

    def __init__(self, chooser: CemChooser) -> None:
        self.chooser = chooser
        self.views: list[DecisionView] = []
        self.actions: list[int] = []

    def __call__(self, view: DecisionView) -> int:
        pick = self.chooser(view)
        self.views.append(view)
        self.actions.append(pick)
        return pick


def cem_decisions(windows: Sequence[Period], window: int) -> tuple[list[DecisionView], list[int]]:
    """Every decision of ``windows`` replayed with the linear order choosing, and its choice."""
    views: list[DecisionView] = []
    actions: list[int] = []
    for period in windows:
        rec = _Recorder(CemChooser(period))
        simulate_chosen(period.cluster, period.workload, rec, window)
        views += rec.views
        actions += rec.actions
    return views, actions


def clone(
    net: QueuePolicy,
    opt: torch.optim.Optimizer,
    views: list[DecisionView],
    actions: list[int],
    epochs: int,
    minibatch: int,
) -> float:
    """Fit the actor to ``actions`` (cross-entropy over the masked logits); the share of
    decisions the greedy actor then agrees with."""
    if not views:
        return 0.0
    target = torch.tensor(actions)
    net.train()
    for _ in range(epochs):
        order = torch.randperm(len(views))
        for lo in range(0, len(views), minibatch):
            idx = order[lo : lo + minibatch]
            logits, _ = net(Batch.of([views[i] for i in idx.tolist()]))
            loss = torch.nn.functional.cross_entropy(logits, target[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    net.eval()
    agree = 0
    with torch.inference_mode():
        for lo in range(0, len(views), 1024):
            logits, _ = net(Batch.of(views[lo : lo + 1024]))
            agree += int((logits.argmax(-1) == target[lo : lo + 1024]).sum())
    return agree / len(views)
