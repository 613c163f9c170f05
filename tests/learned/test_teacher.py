"""The Knowledge-Guided Teacher on a real Chroma knowledge base: retrieval, predictor, reward."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from kb.demo import ensure_demo_kb
from kb.store import KnowledgeBase
from policy.learned.instance_context import InstanceContext
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.model import PolicyNet
from policy.learned.rollout import run_episode
from sim.errors import InputError
from wass_chat.learning import KbRetriever, build_teacher

pytestmark = pytest.mark.slow

SPECS = [InstanceSpec("srasearch", 30, 4, 7), InstanceSpec("srasearch", 28, 4, 8, ccr=1.0)]


@pytest.fixture(scope="module")
def demo_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    path = tmp_path_factory.mktemp("kb")
    ensure_demo_kb(path)
    return KnowledgeBase(path)


def test_an_empty_knowledge_base_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="kb seed"):
        KbRetriever(KnowledgeBase(tmp_path / "empty"))


def test_retrieval_gives_k_cases_best_first(demo_kb: KnowledgeBase) -> None:
    retriever = KbRetriever(demo_kb)
    workflow, platform = materialize(SPECS[0])
    cases = retriever.retrieve(workflow, platform, 5)
    assert len(cases) == 5
    similarities = [c.similarity for c in cases]
    assert similarities == sorted(similarities, reverse=True)
    assert all(c.embedding.shape == (retriever.dim,) for c in cases)
    assert retriever.retrieve(workflow, platform, 5) is cases  # cached per instance
    # Each case's makespan over its own instance's time unit (not the query's): its quality.
    stored = demo_kb.query(workflow, platform, 5)
    for case, hit in zip(cases, stored, strict=True):
        assert hit.record is not None
        unit = InstanceContext.of(hit.record.workflow, hit.record.platform).scale
        assert case.log_normalised_makespan == pytest.approx(math.log(hit.makespan / unit))


def test_teacher_reward_is_zero_for_its_own_choice_and_negative_otherwise(
    demo_kb: KnowledgeBase,
) -> None:
    built = build_teacher(demo_kb, SPECS, "fair", samples_per_instance=2)
    assert built.episodes == len(SPECS) * 3
    assert built.fit.test_rows > 0 and np.isfinite(built.fit.r2_log_makespan)
    net = PolicyNet()
    net.eft_prior.data.fill_(0.0)  # a random policy, so it disagrees with the teacher often
    episode = run_episode(net, SPECS[0], "sample", seed=3, network_model="fair")
    built.teacher.shape(episode, coef=1.0)
    rewards = np.array(episode.trajectory.rewards)
    assert len(rewards) == len(episode.trajectory)
    assert (rewards <= 1e-9).all()
    assert (rewards < -1e-9).any()  # the random policy made choices the teacher would not
