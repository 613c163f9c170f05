"""Stage 2 and 3 of WASS-RAG: the performance predictor and the Knowledge-Guided Teacher.

The predictor is an MLP on [state, action, retrieved context] -> log(makespan / the instance's
time unit, ``InstanceContext.scale``): the state is a few instance-level features plus the
decision's progress, the action is the chosen node's candidate-feature row
(:func:`~policy.learned.features.candidate_features`), the context summarises the top-k most
similar past executions (their embedding mean and their normalised makespans).

The teacher turns the predictor into a dense reward, the paper's equation 3:
``R_RAG(t) = Pred(M | G_t, a*) - Pred(M | G_t, a_t)`` with ``a*`` the predicted-best valid action;
in log units, so it is <= 0 and 0 exactly when the policy chose what the teacher would.

Retrieval comes in through :class:`CaseRetriever` so this package does not import ``kb``
(which sits above ``policy``); ``wass_chat`` wires the Chroma-backed knowledge base in.

Under runtime uncertainty (:mod:`policy.learned.calibration`) the RAG arm's teacher is
:class:`RetrievedRuntimeTeacher`: its reward compares the candidates' finishes computed from the
runtimes the retrieved realised executions predict, and their spreads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch
from torch import nn

from policy.learned.instance_context import (
    CANDIDATE_FEATURES,
    PRIOR_GAP,
    RELATIVE_FINISH_CLIP,
    SPREAD,
    InstanceContext,
)
from policy.learned.instances import materialize
from policy.learned.rollout import Episode
from sim.model import Platform, Workflow

STATE_FEATURES = 4


@dataclass(frozen=True)
class RetrievedCase:
    """What the teacher uses of one retrieved past execution."""

    embedding: np.ndarray
    log_normalised_makespan: float
    """log(makespan / the lower-bound time unit of the instance that case ran): its quality."""
    similarity: float
    source: str = ""
    """Where the case came from (``simulated``, or ``slurm:<run id>`` for a real run, which
    the knowledge base ranks first among equally similar cases)."""


class CaseRetriever(Protocol):
    """Top-k similar past executions of a workflow on a platform."""

    @property
    def dim(self) -> int:
        """Length of the case embeddings."""
        ...

    def retrieve(self, workflow: Workflow, platform: Platform, k: int) -> list[RetrievedCase]: ...


def context_vector(cases: Sequence[RetrievedCase], dim: int) -> np.ndarray:
    """[mean embedding, mean and best log-normalised makespan, mean similarity]."""
    if not cases:
        return np.zeros(dim + 3, dtype=np.float32)
    emb = np.mean([c.embedding for c in cases], axis=0)
    spans = [c.log_normalised_makespan for c in cases]
    sims = [c.similarity for c in cases]
    return np.concatenate([emb, [np.mean(spans), min(spans), np.mean(sims)]]).astype(np.float32)


def state_vector(ctx: InstanceContext, progress: float) -> np.ndarray:
    wf, pf = ctx.workflow, ctx.platform
    return np.array(
        [math.log(len(wf.tasks)), math.log(len(pf.nodes)), progress, math.log(ctx.scale)],
        dtype=np.float32,
    )


class PerformancePredictor(nn.Module):
    """MLP predicting log(makespan / instance time unit)."""

    def __init__(self, context_dim: int, hidden: int = 128) -> None:
        super().__init__()
        self.context_dim = context_dim
        width = STATE_FEATURES + CANDIDATE_FEATURES + context_dim
        # Input standardisation, set from the training rows by fit_predictor.
        self.register_buffer("mean", torch.zeros(width))
        self.register_buffer("std", torch.ones(width))
        self.mlp = nn.Sequential(
            nn.Linear(width, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden // 2),
            nn.ReLU(),
            nn.Linear(hidden // 2, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp((x - self.mean) / self.std).squeeze(-1)


@dataclass(frozen=True)
class PredictorFit:
    """Held-out quality of a trained predictor."""

    r2: float
    """On log(makespan / instance time unit): how well the *schedule quality* is predicted."""
    r2_log_makespan: float
    """On log(makespan): includes the instance's size, which the state features carry."""
    mape: float
    """Mean absolute percentage error on the makespan itself."""
    train_rows: int
    test_rows: int


def decision_rows(
    episodes: Sequence[Episode], retriever: CaseRetriever, k: int = 5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Predictor inputs for every recorded decision, targets, and the episode of each row."""
    xs, ys, groups = [], [], []
    for g, ep in enumerate(episodes):
        workflow, platform = materialize(ep.spec)
        ctx = InstanceContext.of(workflow, platform)
        context = context_vector(retriever.retrieve(workflow, platform, k), retriever.dim)
        target = math.log(ep.makespan / ctx.scale)
        tr = ep.trajectory
        for feats, action, progress in zip(tr.feats, tr.actions, tr.progress, strict=True):
            xs.append(np.concatenate([state_vector(ctx, progress), feats[action], context]))
            ys.append(target)
            groups.append(g)
    return np.array(xs, dtype=np.float32), np.array(ys, dtype=np.float32), np.array(groups)


def fit_predictor(
    x: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    context_dim: int,
    epochs: int = 200,
    seed: int = 0,
    test_fraction: float = 0.2,
) -> tuple[PerformancePredictor, PredictorFit]:
    """Train on whole episodes and measure on held-out episodes (no leakage across a run)."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    episodes = np.unique(groups)
    test_eps = set(
        rng.choice(
            episodes, size=max(1, int(len(episodes) * test_fraction)), replace=False
        ).tolist()
    )
    test = np.isin(groups, list(test_eps))
    model = PerformancePredictor(context_dim)
    xt, yt = torch.from_numpy(x[~test]), torch.from_numpy(y[~test])
    model.mean.copy_(xt.mean(0))
    model.std.copy_(xt.std(0).clamp(min=1e-6))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        perm = torch.randperm(len(xt))
        for i in range(0, len(xt), 256):
            idx = perm[i : i + 256]
            loss = ((model(xt[idx]) - yt[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x[test])).numpy()
    truth = y[test]
    log_unit = x[test, 3]  # state_vector's log(time unit)
    mape = float(np.mean(np.abs(np.exp(pred - truth) - 1.0)))
    fit = PredictorFit(
        _r2(pred, truth),
        _r2(pred + log_unit, truth + log_unit),
        mape,
        int((~test).sum()),
        int(test.sum()),
    )
    return model, fit


def _r2(pred: np.ndarray, truth: np.ndarray) -> float:
    residual = float(np.sum((pred - truth) ** 2))
    return 1.0 - residual / max(float(np.sum((truth - truth.mean()) ** 2)), 1e-12)


class KnowledgeGuidedTeacher:
    """Dense per-decision reward from the predictor and retrieved cases (paper eq. 3)."""

    def __init__(
        self, predictor: PerformancePredictor, retriever: CaseRetriever, k: int = 5
    ) -> None:
        self.predictor = predictor.eval()
        self.retriever = retriever
        self.k = k

    def shape(self, episode: Episode, coef: float) -> None:
        """Fill ``episode.trajectory.rewards`` with ``coef * R_RAG`` for each decision."""
        workflow, platform = materialize(episode.spec)
        ctx = InstanceContext.of(workflow, platform)
        context = context_vector(
            self.retriever.retrieve(workflow, platform, self.k), self.retriever.dim
        )
        tr = episode.trajectory
        if not len(tr):
            return
        feats = np.stack(tr.feats)  # (D, N, F)
        d, n, _ = feats.shape
        states = np.stack([state_vector(ctx, p) for p in tr.progress])  # (D, S)
        rows = np.concatenate(
            [
                np.repeat(states[:, None, :], n, axis=1),
                feats,
                np.broadcast_to(context, (d, n, context.shape[0])),
            ],
            axis=-1,
        ).astype(np.float32)
        with torch.no_grad():
            pred = self.predictor(torch.from_numpy(rows)).numpy()  # (D, N)
        masks = np.stack(tr.masks)
        pred = np.where(masks, pred, np.inf)
        best = pred.min(axis=1)
        chosen = pred[np.arange(d), np.array(tr.actions)]
        tr.rewards = list(coef * (best - chosen))


class Teacher(Protocol):
    """Fills an episode's per-decision rewards (what :func:`policy.learned.train.train` calls)."""

    def shape(self, episode: Episode, coef: float) -> None: ...


class RetrievedRuntimeTeacher:
    """Per-decision reward from the retrieved executions' realised runtimes (uncertainty).

    The RAG arm plans on the runtimes and node-class slowdowns its retrieved cases realised, so
    each candidate's data-aware finish gap
    (:data:`~policy.learned.instance_context.PRIOR_GAP`) is measured on them; ``risk`` times the
    retrieved spread (:data:`~policy.learned.instance_context.SPREAD`) charges the uncertainty
    of that finish. Both are in units of the task's own runtime, converted to the instance's
    time unit so a decision's reward is a share of the makespan, like the terminal reward.
    ``R(t) = coef * (best score - chosen score) <= 0``, zero when the policy chose the
    candidate the history favours.
    """

    def __init__(self, risk: float = 1.0) -> None:
        self.risk = risk

    def shape(self, episode: Episode, coef: float) -> None:
        tr = episode.trajectory
        if not len(tr):
            return
        workflow, platform = episode.planning or materialize(episode.spec)
        ctx = InstanceContext.of(workflow, platform)
        feats = np.stack(tr.feats).astype(np.float64)  # (D, N, F)
        own = np.array([ctx.mean_runtime[workflow.tasks[i].id] for i in tr.task_idx])
        score = feats[..., PRIOR_GAP] + self.risk * feats[..., SPREAD]
        score = np.minimum(score * (own / ctx.scale)[:, None], RELATIVE_FINISH_CLIP)
        score = np.where(np.stack(tr.masks), score, np.inf)
        chosen = score[np.arange(len(tr)), np.array(tr.actions)]
        tr.rewards = list(coef * (score.min(axis=1) - chosen))
