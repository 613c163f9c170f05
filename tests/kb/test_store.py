"""The knowledge base on real Chroma in a temporary directory: add, query, repair, re-embed."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np

from kb.codec import case_to_bytes
from kb.decisions import decisions_from_case
from kb.embedding import StructuralEmbedder
from kb.records import CaseMetrics
from kb.retrieve import tie_cut
from kb.sidecar import Sidecar
from kb.sidecar_rows import CASE_COLUMNS
from kb.store import KnowledgeBase
from tests.kb.conftest import make_case


def test_a_stored_case_is_retrieved_first(kb: KnowledgeBase) -> None:
    cases = [make_case(seed) for seed in range(60)]
    assert kb.add_cases(cases) == 60
    for case in cases[::7]:
        hits = kb.query(case.workflow, case.platform, k=5)
        assert hits[0].case_id == case.case_id
        assert hits[0].similarity > 0.9999
        assert hits[0].placements == case.placements
        assert hits[0].record is not None and hits[0].record.workflow == case.workflow


def test_ties_rank_the_shorter_makespan_first(kb: KnowledgeBase) -> None:
    kb.add_cases([make_case(1, "random"), make_case(1, "heft"), make_case(2, "heft")])
    hits = kb.query(make_case(1).workflow, make_case(1).platform, k=3)
    assert [h.scheduler for h in hits[:2]] == ["heft", "random"]
    assert hits[0].makespan < hits[1].makespan


def test_adding_the_same_cases_twice_adds_nothing(kb: KnowledgeBase) -> None:
    cases = [make_case(seed) for seed in range(10)]
    assert kb.add_cases(cases + cases[:3]) == 10
    assert kb.add_cases(cases) == 0
    assert kb.count() == 10 and kb.cases.count() == 10


def test_records_survive_a_reopen(tmp_path: Path) -> None:
    case = make_case(3)
    first = KnowledgeBase(tmp_path)
    first.add_cases([case], decisions=decisions_from_case(case))
    first.close()
    second = KnowledgeBase(tmp_path)
    stored = second.get_cases([case.case_id])[case.case_id]
    assert stored.workflow == case.workflow and stored.platform == case.platform
    assert stored.placements == case.placements and stored.order == case.order
    assert stored.metrics == case.metrics and stored.timeline == case.timeline
    assert second.decisions.count() == len(case.workflow.tasks)


def test_repair_adds_vectors_the_sidecar_has_and_chroma_lacks(tmp_path: Path) -> None:
    cases = [make_case(seed) for seed in range(8)]
    kb = KnowledgeBase(tmp_path)
    kb.add_cases(cases)
    kb.sidecar.put_cases([make_case(99)])  # as if killed between the sidecar and Chroma
    kb.close()
    reopened = KnowledgeBase(tmp_path)
    assert reopened.cases.count() == reopened.count() == 9
    assert reopened.query(make_case(99).workflow, make_case(99).platform)[0].case_id == (
        make_case(99).case_id
    )


def test_decision_retrieval_finds_the_same_state(kb: KnowledgeBase) -> None:
    cases = [make_case(seed) for seed in range(5)]
    decisions = [d for c in cases for d in decisions_from_case(c, limit=3)]
    kb.add_cases(cases, decisions=decisions)
    assert kb.decisions.count() == len(decisions)
    target = decisions[4]
    hits = kb.query_decision(target.state, k=3)
    assert hits[0].similarity > 0.9999
    assert hits[0].record.state.features == target.state.features


class _ShiftedEmbedder(StructuralEmbedder):
    """A different embedding space: v0 with its coordinates reversed."""

    name = "reversed-test"

    @property
    def checksum(self) -> str:
        return "rev" + super().checksum

    def embed_cases(self, cases):  # type: ignore[no-untyped-def]
        return np.ascontiguousarray(super().embed_cases(cases)[:, ::-1])


def test_reembed_fills_a_new_collection_and_drops_the_old(kb: KnowledgeBase) -> None:
    cases = [make_case(seed) for seed in range(12)]
    kb.add_cases(cases, decisions=decisions_from_case(cases[0], limit=2))
    old = kb.collection_name("cases")
    done: list[int] = []
    kb.reembed(_ShiftedEmbedder(), progress=done.append)
    assert sum(done) == 14
    names = kb.collection_names()
    new = kb.collection_name("cases")
    assert not any(n.startswith(old) for n in names)
    assert any(n.startswith(new + ".") for n in names)  # its platform-family shards
    assert kb.cases.metadata["embedder"] == "reversed-test"
    assert kb.query(cases[5].workflow, cases[5].platform)[0].case_id == cases[5].case_id


def test_ties_beyond_k_still_return_the_best_makespans(kb: KnowledgeBase) -> None:
    names = ("random", "slurm", "wass", "cpop", "peft", "heft")
    cases = [
        replace(make_case(7, s), metrics=CaseMetrics(makespan=100.0 - i))
        for i, s in enumerate(names)
    ]
    kb.add_cases(cases)
    hits = kb.query(cases[0].workflow, cases[0].platform, k=2)
    assert [h.scheduler for h in hits] == ["heft", "peft"]
    assert all(h.record is not None for h in hits)


def test_hits_stay_compressed_until_the_record_is_read(kb: KnowledgeBase) -> None:
    case = make_case(4)
    kb.add_cases([case])
    (hit,) = kb.query(case.workflow, case.platform, k=1)
    assert hit.workflow == case.workflow.name and hit.makespan == case.metrics.makespan
    assert "record" not in hit.__dict__  # nothing decoded for similarity, scheduler, makespan
    assert hit.placements == case.placements and "record" in hit.__dict__


def test_tie_cut_keeps_every_hit_tied_with_the_kth() -> None:
    assert tie_cut([0.1, 0.2, 0.3, 0.4], 2) == 2
    assert tie_cut([0.1, 0.2, 0.2, 0.2, 0.5], 2) == 4
    assert tie_cut([0.1], 5) == 1


def test_a_sidecar_from_before_the_workflow_column_gains_it(tmp_path: Path) -> None:
    case = make_case(6)
    path = tmp_path / "cases.sqlite"
    columns = [c for c in CASE_COLUMNS if c != "workflow"]
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TABLE cases ({', '.join(columns)})")
        db.execute(
            f"INSERT INTO cases VALUES ({','.join('?' * len(columns))})",
            (
                case.case_id,
                case.workflow_hash,
                "k",
                "lab",
                case.platform_hash,
                "heft",
                1.0,
                "",
                "",
                1,
                "simulated",
                "",
                case_to_bytes(case),
            ),
        )
    db.close()
    sidecar = Sidecar(path)
    assert sidecar.hits([case.case_id])[case.case_id].workflow == case.workflow.name
    sidecar.close()


def test_a_clean_store_is_marked_in_sync_and_an_interrupted_one_is_reconciled(
    tmp_path: Path,
) -> None:
    kb = KnowledgeBase(tmp_path)
    kb.add_cases([make_case(seed) for seed in range(3)])
    assert kb.sidecar.chroma_in_sync(kb.cases.name)
    kb.cases.delete(ids=[make_case(0).case_id])  # Chroma lost a vector the sidecar still has...
    kb.sidecar.put_cases([make_case(5)])  # ...and a write stopped before reaching Chroma
    assert not kb.sidecar.chroma_in_sync(kb.cases.name)
    kb.close()
    reopened = KnowledgeBase(tmp_path)
    assert reopened.sidecar.chroma_in_sync(reopened.cases.name)
    assert set(reopened.cases.get(include=[])["ids"]) == reopened.sidecar.ids()
    assert reopened.missing_vectors == 0
    reopened.close()


def test_cases_on_a_platform_are_its_own_most_recent_first(kb: KnowledgeBase) -> None:
    here = make_case(0).platform
    there = replace(here, nodes=here.nodes[:-1])  # another platform: one node fewer
    cases = [
        replace(make_case(s), recorded_at=f"2026-11-0{s + 1}T00:00:00+00:00") for s in range(3)
    ]
    elsewhere = make_case(9, platform=there)
    kb.add_cases([*cases, elsewhere])
    assert [c.case_id for c in kb.cases_on(here, limit=2)] == [cases[2].case_id, cases[1].case_id]
    assert [c.case_id for c in kb.cases_on(there)] == [elsewhere.case_id]


def test_recurring_cases_are_a_workflow_run_more_than_once_on_one_platform(
    kb: KnowledgeBase,
) -> None:
    here = make_case(0).platform
    there = replace(here, nodes=here.nodes[:-1])
    twice = [make_case(0), make_case(0, "peft")]  # one workflow, two runs on one platform
    once = [make_case(1), make_case(0, platform=there)]  # the same workflow once elsewhere
    kb.add_cases([*twice, *once])
    assert {c.case_id for c in kb.recurring_cases()} == {c.case_id for c in twice}
    assert len(kb.recurring_cases(limit=1)) == 1
