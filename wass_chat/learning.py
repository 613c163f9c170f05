"""Wiring of the learned policy's training to the knowledge base (Stages 2 and 3).

``policy`` may not import ``kb`` (it sits below it), so the teacher takes a
:class:`~policy.learned.teacher.CaseRetriever`; :class:`KbRetriever` is that retriever over the
Chroma-backed knowledge base. The retrieved context is the query's embedding with the retrieved
cases' schedule qualities (each makespan over its own instance's lower-bound unit) and
similarities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kb.retrieve import RetrievedCase as StoredCase
from kb.store import KnowledgeBase
from policy.learned.instance_context import InstanceContext
from policy.learned.instances import InstanceSpec
from policy.learned.model import PolicyNet
from policy.learned.rollout import Episode, collect
from policy.learned.teacher import (
    KnowledgeGuidedTeacher,
    PredictorFit,
    RetrievedCase,
    decision_rows,
    fit_predictor,
)
from sim.errors import InputError
from sim.model import Platform, Workflow
from sim.schedule import NetworkModel


class KbRetriever:
    """:class:`~policy.learned.teacher.CaseRetriever` over a :class:`KnowledgeBase`."""

    def __init__(self, kb: KnowledgeBase) -> None:
        if kb.count() == 0:
            raise InputError(
                str(kb.directory),
                ["the knowledge base is empty: seed it first (wass-chat kb seed --count N)"],
            )
        self.kb = kb
        self._cache: dict[tuple[Workflow, Platform, int], list[RetrievedCase]] = {}

    @property
    def dim(self) -> int:
        return int(self.kb.embedder.dim)

    def retrieve(self, workflow: Workflow, platform: Platform, k: int) -> list[RetrievedCase]:
        key = (workflow, platform, k)  # frozen model objects: hashable by value
        if key not in self._cache:
            query = self.kb.embedder.embed_cases([(workflow, platform)])[0]
            self._cache[key] = [
                RetrievedCase(
                    embedding=np.asarray(query, dtype=np.float32),
                    log_normalised_makespan=math.log(max(c.makespan, 1e-9) / _own_unit(c)),
                    similarity=c.similarity,
                    source=c.source,
                )
                for c in self.kb.query(workflow, platform, k)
            ]
        return self._cache[key]


def _own_unit(case: StoredCase) -> float:
    """The time unit (lower-bound estimate) of the instance a retrieved case ran.

    Normalising each case's makespan by its own unit turns it into a schedule quality, which
    carries over between similar workflows of different sizes and data volumes; a record the
    sidecar lost falls back to 1 s, which ``repair`` prevents.
    """
    record = case.record
    if record is None:
        return 1.0
    return InstanceContext.of(record.workflow, record.platform).scale


@dataclass
class TeacherBuild:
    teacher: KnowledgeGuidedTeacher
    fit: PredictorFit
    episodes: int


def build_teacher(
    kb: KnowledgeBase,
    specs: list[InstanceSpec],
    network_model: NetworkModel,
    seed: int = 0,
    samples_per_instance: int = 3,
) -> TeacherBuild:
    """Train the performance predictor on simulated decisions with retrieved context.

    Decisions come from HEFT-imitating episodes and from a stochastic earliest-finish policy
    (several samples per instance), so the predictor sees good and poor actions.
    """
    retriever = KbRetriever(kb)
    net = PolicyNet()
    net.eft_prior.data.fill_(1.0)  # a softer prior: more varied actions to learn from
    jobs = [(s, seed * 1000 + i) for s in specs for i in range(samples_per_instance)]
    episodes: list[Episode] = collect(net, [(s, 0) for s in specs], "forced", network_model, None)
    episodes += collect(net, jobs, "sample", network_model, None)
    x, y, groups = decision_rows(episodes, retriever)
    model, fit = fit_predictor(x, y, groups, retriever.dim + 3, seed=seed)
    return TeacherBuild(KnowledgeGuidedTeacher(model, retriever), fit, len(episodes))
