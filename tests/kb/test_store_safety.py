"""A knowledge base that is gone, emptied or poisoned fails loudly instead of answering."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kb.store import KnowledgeBase, StoreMissing
from tests.kb.conftest import make_case, small_platform
from tests.kb.learn_killed import written_around_the_checks

WASS_CHAT = (sys.executable, "-m", "wass_chat.cli")
"""The CLI of this interpreter (the venv's bin folder need not be on PATH)."""


def test_a_deleted_chroma_folder_is_an_error_not_an_empty_retrieval(tmp_path: Path) -> None:
    directory = tmp_path / "kb"
    kb = KnowledgeBase(directory)
    kb.add_cases([make_case(1), make_case(2)])
    case = make_case(1)
    assert kb.query(case.workflow, case.platform, k=1)  # a healthy store answers
    kb.close()
    shutil.rmtree(directory / "chroma")
    with pytest.raises(StoreMissing, match=r"Chroma index chroma/ is missing .* 2 cases"):
        KnowledgeBase(directory)
    # Still refused on the next open: the failed open created no empty index to hide it.
    with pytest.raises(StoreMissing):
        KnowledgeBase(directory)


def test_an_empty_store_refuses_to_retrieve(tmp_path: Path) -> None:
    kb = KnowledgeBase(tmp_path / "kb")
    case = make_case(3)
    with pytest.raises(StoreMissing, match="holds no cases"):
        kb.query(case.workflow, small_platform(), k=3)
    kb.close()


def test_cli_query_of_a_missing_store_exits_2_with_one_line(tmp_path: Path) -> None:
    import os
    import subprocess

    result = subprocess.run(
        [*WASS_CHAT, "kb", "query", "demo:montage-60", "--kb", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "WASS_HOME": str(tmp_path / "home")},
    )
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "holds no knowledge base" in result.stderr
    assert not (tmp_path / "nowhere").exists()  # no empty store made where --kb pointed
    stats = subprocess.run(
        [*WASS_CHAT, "kb", "stats", "--kb", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "WASS_HOME": str(tmp_path / "home")},
    )
    assert stats.returncode == 2 and "holds no knowledge base" in stats.stderr


def test_a_forged_faster_case_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    from dataclasses import replace

    from kb.provenance import ImplausibleCase
    from kb.records import CaseMetrics
    from sim.metrics import critical_path_bound

    honest, forged = make_case(4), make_case(5)
    bound = critical_path_bound(forged.workflow, forged.platform)
    forged = replace(forged, metrics=CaseMetrics(makespan=bound * 0.1))  # "90% faster"
    kb = KnowledgeBase(tmp_path / "kb")
    with pytest.raises(ImplausibleCase, match="below the critical-path bound"):
        kb.add_cases([honest, forged])
    assert kb.count() == 0  # refused whole: the honest case of the batch waits for a retry
    assert kb.add_cases([honest]) == 1
    with pytest.raises(ImplausibleCase):
        kb.update_case(replace(honest, metrics=CaseMetrics(makespan=bound * 0.1)))
    assert kb.get_cases([honest.case_id])[honest.case_id].metrics == honest.metrics
    kb.close()


def test_every_stored_case_names_who_wrote_it(tmp_path: Path) -> None:
    import getpass
    import socket

    kb = KnowledgeBase(tmp_path / "kb")
    case = make_case(6)
    kb.add_cases([case])
    stored = kb.get_cases([case.case_id])[case.case_id]
    assert stored.written_by == f"{getpass.getuser()}@{socket.gethostname()}"
    assert stored.source == "simulated"
    kb.close()


def test_retrieval_limited_to_trusted_sources_never_returns_a_forged_real_run(
    tmp_path: Path,
) -> None:
    """A forged real-run case (its timeline inflated to steer ``--estimates kb``) is the most
    similar hit of an open store, and never a hit of one limited to simulated cases."""
    from dataclasses import replace

    from kb.records import CaseMetrics, RealExecution

    honest = make_case(8)
    forged = replace(
        make_case(8, scheduler="forged"),
        source="slurm:run-forged",
        metrics=CaseMetrics(makespan=8471.0),
        timeline={t: (0.0, 0.0, 8471.0) for t in honest.placements},
        real=RealExecution(run_id="run-forged", state="COMPLETED"),
    )
    directory = tmp_path / "kb"
    kb = KnowledgeBase(directory)
    kb.add_cases([honest])
    written_around_the_checks(kb, forged)  # a write token's straight write
    assert [h.source for h in kb.query(honest.workflow, honest.platform, k=2)] == [
        "slurm:run-forged",
        "simulated",
    ]
    kb.close()
    trusted = KnowledgeBase(directory, sources={"simulated"})
    hits = trusted.query(honest.workflow, honest.platform, k=2)
    assert [(h.case_id, h.source) for h in hits] == [(honest.case_id, "simulated")]
    assert hits[0].to_dict()["written_by"]  # a cited case names who wrote it
    trusted.close()


def test_realised_histories_are_the_exempt_measured_source() -> None:
    from kb.estimates import REALISED
    from kb.provenance import MEASURED_SOURCES

    assert MEASURED_SOURCES == (REALISED,)


def test_seeded_cases_name_the_worker_that_simulated_them(tmp_path: Path) -> None:
    import getpass
    import socket

    from kb.seed import SeedConfig, plan_seed, run_job

    jobs = plan_seed(SeedConfig(count=1, schedulers=("heft",), sizes=(20,)))
    seeded = run_job(jobs[0], "fair", 0)
    assert {c.written_by for c in seeded.cases} == {f"{getpass.getuser()}@{socket.gethostname()}"}


def test_kb_verify_finds_and_deletes_a_forged_case_stored_before_the_check(
    tmp_path: Path,
) -> None:
    import json
    import os
    import subprocess
    from dataclasses import replace

    from kb.codec import case_to_bytes
    from kb.records import CaseMetrics

    honest = make_case(9)
    forged = replace(make_case(10), metrics=CaseMetrics(makespan=0.5), written_by="mallory@x")
    kb = KnowledgeBase(tmp_path / "kb")
    kb.add_cases([honest])
    kb.add_cases([forged], bodies=[case_to_bytes(forged)])  # the unchecked path, as of old
    kb.close()
    env = {**os.environ, "WASS_HOME": str(tmp_path / "home")}

    def verify(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*WASS_CHAT, "kb", "verify", "--kb", str(tmp_path / "kb"), "--json", *extra],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )

    found = verify()
    assert found.returncode == 1, found.stderr
    listed = json.loads(found.stdout)["implausible"]
    assert [(c["case_id"], c["written_by"]) for c in listed] == [(forged.case_id, "mallory@x")]
    assert "below the critical-path bound" in listed[0]["problem"]
    assert verify("--delete").returncode == 0
    clean = verify()
    assert clean.returncode == 0 and json.loads(clean.stdout) == {
        "cases": 1,
        "implausible": [],
        "deleted": False,
    }
