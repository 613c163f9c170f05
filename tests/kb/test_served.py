"""A served knowledge base (scripts/kb-server: `chroma run`): two processes with different
WASS_HOMEs add and query one store at once; every case is there afterwards, once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kb.chroma_client import ChromaTarget
from kb.store import KnowledgeBase
from tests.kb.conftest import make_case
from tests.kb.served_server import ROOT, served_kb

kb_server = served_kb
CASES = 450
"""Seeds 0-449: process a adds 0-249, process b 449 down to 200 (it was 900 with 1,000
operations each: 178 s of the suite's CPU-bound wall for the same claim)."""


@pytest.mark.slow
def test_two_homes_add_and_query_one_served_store_at_once(
    kb_server: ChromaTarget, tmp_path: Path
) -> None:
    """500 operations per process (250 single-case adds, 250 queries), 50 cases added by both,
    at once; then a third client finds all 450 cases, each once, in records and vectors."""
    env = {
        **os.environ,
        "WASS_CHROMA_MODE": "http",
        "WASS_CHROMA_HOST": kb_server.host,
        "WASS_CHROMA_PORT": str(kb_server.port),
        "PYTHONPATH": str(ROOT),
    }
    runs = {"a": (0, 249), "b": (449, 200)}  # seeds 200-249 are added by both, in opposite order
    workers = {}
    for name, (first, last) in runs.items():
        argv = [
            "-m",
            "tests.kb.served_worker",
            str(first),
            str(last),
            str(tmp_path / f"{name}.json"),
        ]
        home = {"WASS_HOME": str(tmp_path / f"home-{name}")}
        workers[name] = subprocess.Popen([sys.executable, *argv], env={**env, **home}, cwd=ROOT)
    for process in workers.values():
        assert process.wait(timeout=600) == 0
    done = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in runs}
    for name, doc in done.items():
        assert doc["adds"] + doc["queries"] == 500
        assert doc["home"] == str(tmp_path / f"home-{name}")
        assert not (tmp_path / f"home-{name}" / "kb" / "cases.sqlite").exists()  # all served
    expected = {make_case(seed).case_id for seed in range(CASES)}
    assert set(done["a"]["added"]) | set(done["b"]["added"]) == expected

    kb = KnowledgeBase(kb_server)  # a third client, a third home
    assert kb.sidecar.ids() == expected and kb.count() == CASES
    vector_ids = kb.cases.get(include=[])["ids"]
    assert len(vector_ids) == kb.cases.count() == CASES and set(vector_ids) == expected
    assert kb.sidecar.chroma_in_sync(kb.cases.name) and kb.missing_vectors == 0
    records = kb.get_cases(sorted(expected))
    assert len(records) == CASES and all(r.metrics.makespan > 0 for r in records.values())
    platform = make_case(0).platform  # the platform's own cases, by lookup (served: a scan)
    on_it = {make_case(s).case_id for s in range(CASES) if make_case(s).platform == platform}
    assert {c.case_id for c in kb.cases_on(platform, limit=CASES)} == on_it
    assert len(kb.cases_on(platform, limit=1)) == 1
    for seed in range(0, CASES, 9):
        case = make_case(seed)
        assert kb.get_cases([case.case_id])[case.case_id].metrics == case.metrics
        assert kb.query(case.workflow, case.platform, k=1)[0].case_id == case.case_id
    assert kb.recurring_cases() == []  # every workflow ran once (by scan: served)
    kb.add_cases([make_case(0, "peft")])  # a second run of seed 0's workflow on its platform
    recurring = {make_case(0).case_id, make_case(0, "peft").case_id}
    assert {c.case_id for c in kb.recurring_cases()} == recurring
    print(
        f"\nqueries that found their probe while both wrote: a {done['a']['found']}/250,"
        f" b {done['b']['found']}/250"
    )
