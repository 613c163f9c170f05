"""Curation rules: near-duplicate merges, dominated and outdated cases."""

from __future__ import annotations

from dataclasses import replace

from kb.curate import CurationConfig, apply_curation, kb_stats, plan_curation
from kb.records import CaseMetrics, make_case_id
from kb.shards import platform_family
from kb.store import KnowledgeBase
from tests.kb.conftest import make_case, small_platform


def _variant(seed: int, scheduler: str, makespan: float, tag: str):  # type: ignore[no-untyped-def]
    case = make_case(seed, scheduler)
    return replace(
        case,
        case_id=make_case_id(f"{tag};{seed}", case.platform_hash, scheduler),
        metrics=CaseMetrics(makespan=makespan),
    )


def test_near_duplicates_merge_into_one_weighted_case(kb: KnowledgeBase) -> None:
    a = _variant(1, "heft", 100.0, "a")
    b = _variant(1, "heft", 100.5, "b")
    c = _variant(1, "heft", 130.0, "c")
    kb.add_cases([a, b, c])
    plan = plan_curation(kb.sidecar.case_rows())
    assert plan.merges == {a.case_id: [b.case_id]}
    assert plan.dominated == [] and plan.outdated == []
    assert apply_curation(kb, plan) == 1
    assert kb.count() == 2 and kb.cases.count() == 2
    assert kb.get_cases([a.case_id])[a.case_id].weight == 2
    assert kb_stats(kb)["merged_weight"] == 3


def test_cases_far_worse_than_the_best_of_their_workflow_are_pruned(kb: KnowledgeBase) -> None:
    best = _variant(2, "heft", 100.0, "a")
    bad = _variant(2, "random", 250.0, "a")
    other = _variant(3, "random", 250.0, "a")  # another workflow: nothing to compare with
    kb.add_cases([best, bad, other])
    plan = plan_curation(kb.sidecar.case_rows(), CurationConfig(dominated_factor=2.0))
    assert plan.dominated == [bad.case_id]
    apply_curation(kb, plan)
    assert kb.sidecar.ids() == {best.case_id, other.case_id}


def test_cases_on_nodes_a_platform_no_longer_has_are_pruned(kb: KnowledgeBase) -> None:
    cases = [make_case(seed) for seed in range(3)]
    kb.add_cases(cases)
    shrunk = small_platform(nodes=2)  # n2 and n3 are gone
    plan = plan_curation(kb.sidecar.case_rows(), platforms={shrunk.name: shrunk})
    assert sorted(plan.outdated) == sorted(c.case_id for c in cases)
    untouched = plan_curation(kb.sidecar.case_rows(), platforms={"elsewhere": shrunk})
    assert untouched.outdated == []


def test_stats_count_by_scheduler_and_platform(kb: KnowledgeBase) -> None:
    kb.add_cases([make_case(1, "heft"), make_case(1, "random"), make_case(2, "heft")])
    stats = kb_stats(kb)
    assert stats["cases"] == 3 and stats["workflows"] == 2
    assert stats["by_scheduler"] == {"heft": 2, "random": 1}
    assert stats["by_platform"] == {"lab": 3}
    family = platform_family(make_case(1).platform)
    assert stats["shards"] == {family: 3} and stats["vectors"]["cases"] == 3
    assert stats["makespan"]["min"] == 101.0
