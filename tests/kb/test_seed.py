"""Seeding from the real simulator and schedulers: deterministic plans, resumable after SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kb.curate import kb_stats
from kb.demo import demo_jobs, ensure_demo_kb
from kb.seed import (
    SeedConfig,
    expand_platforms,
    job_case_ids,
    plan_seed,
    resolve_platform,
    run_seed_jobs,
    seed_knowledge_base,
)
from kb.store import KnowledgeBase
from sim.errors import InputError

SMALL = SeedConfig(
    count=24,
    recipes=(),
    shapes=("chain", "fan-out", "fork-join"),
    platforms=("homo-4",),
    schedulers=("heft", "slurm", "wass", "random"),
    sizes=(10, 20),
    jobs=1,
    batch=8,
)


def test_plans_are_deterministic_and_ids_distinct() -> None:
    first, again = plan_seed(SMALL), plan_seed(SMALL)
    assert first == again and len(first) == 6
    ids = [i for job in first for i in job_case_ids(job)]
    assert len(ids) == len(set(ids)) == 24


def test_seeding_stores_simulated_cases_once(kb: KnowledgeBase) -> None:
    report = seed_knowledge_base(kb, SMALL)
    assert report.added == 24 and report.skipped == 0
    assert kb.count() == kb.cases.count() == 24
    assert kb.decisions.count() > 0
    assert kb_stats(kb)["by_kind"] == {"chain": 8, "fan-out": 8, "fork-join": 8}
    again = seed_knowledge_base(kb, SMALL)
    assert again.added == 0 and again.skipped == 24 and kb.count() == 24
    case = next(iter(kb.get_cases(sorted(kb.sidecar.ids())[:1]).values()))
    assert case.metrics.makespan > 0 and set(case.placements) == set(case.workflow.task_by_id)
    assert kb.query(case.workflow, case.platform, k=4)[0].record.workflow == case.workflow  # type: ignore[union-attr]


def _stored(sidecar: Path) -> int:
    if not sidecar.exists():
        return 0
    with sqlite3.connect(sidecar) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM cases").fetchone()[0])
        except sqlite3.OperationalError:  # table not created yet
            return 0


@pytest.mark.slow
def test_sigkill_mid_seed_leaves_a_store_that_reopens_and_resumes(tmp_path: Path) -> None:
    directory = tmp_path / "kb"
    config = SeedConfig(**{**SMALL.__dict__, "count": 200})
    command = [
        sys.executable,
        "-m",
        "wass_chat.cli",
        "kb",
        "seed",
        "--count",
        "200",
        "--recipes",
        "",
        "--shapes",
        ",".join(config.shapes),
        "--platforms",
        "homo-4",
        "--sizes",
        "10,20",
        "--schedulers",
        ",".join(config.schedulers),
        "--jobs",
        "1",
        "--batch",
        "8",
        "--kb",
        str(directory),
        "--json",
    ]
    child = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while _stored(directory / "cases.sqlite") < 24 and child.poll() is None:
        assert time.monotonic() < deadline, "seeding never stored a case"
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL, "the seed finished before it could be killed"

    reopened = KnowledgeBase(directory)
    killed_at = reopened.count()
    assert 0 < killed_at < 200
    assert reopened.cases.count() == killed_at  # Chroma agrees with the sidecar after repair
    report = seed_knowledge_base(reopened, config)
    assert report.skipped == killed_at and report.added == 200 - killed_at
    expected = {i for job in plan_seed(config) for i in job_case_ids(job)}
    assert reopened.sidecar.ids() == expected
    assert reopened.cases.count() == 200
    assert set(reopened.cases.get(include=[])["ids"]) == expected
    reopened.close()


@pytest.mark.slow
def test_the_demo_kb_is_seeded_once_and_answers_demo_queries(tmp_path: Path) -> None:
    from sim.demo import demo_platform, demo_workflow

    first = ensure_demo_kb(tmp_path / "demo")
    planned = sum(len(job.schedulers) for job in demo_jobs())
    assert first.added == planned >= 200
    assert ensure_demo_kb(tmp_path / "demo").added == 0
    kb = KnowledgeBase(tmp_path / "demo")
    hits = kb.query(demo_workflow("genomics-49"), demo_platform(), k=5)
    assert hits[0].similarity > 0.9999 and hits[0].workflow == "genomics-49"
    assert hits[0].makespan == min(h.makespan for h in hits if h.similarity > 0.9999)
    kb.close()


def test_run_seed_jobs_counts_skips_per_case(kb: KnowledgeBase) -> None:
    jobs = plan_seed(SMALL)[:2]
    assert run_seed_jobs(kb, jobs, SMALL).added == 8
    assert run_seed_jobs(kb, plan_seed(SMALL)[:3], SMALL).skipped == 8


def test_seeded_platforms_and_seed_ranges_resolve() -> None:
    from sim.platforms import ClusterSpec, generate_platform

    assert expand_platforms(["demo", "hetero-8@2..4"]) == (
        "demo",
        "hetero-8@2",
        "hetero-8@3",
        "hetero-8@4",
    )
    seeded = resolve_platform("hetero-8@3")
    assert seeded.nodes == generate_platform(ClusterSpec(8, heterogeneous=True), seed=3).nodes
    assert seeded.nodes != resolve_platform("hetero-8").nodes
    with pytest.raises(InputError):
        expand_platforms(["hetero-8@4..2"])


def test_plans_pair_every_kind_with_every_platform() -> None:
    config = SeedConfig(
        count=4 * 36,
        recipes=(),
        shapes=("chain", "fan-out", "fork-join"),
        platforms=("homo-4", "homo-8", "hetero-8@0", "hetero-8@1", "hetero-16", "demo"),
        schedulers=("heft", "slurm", "wass", "random"),
        sizes=(10,),
    )
    pairs = {(job.spec.kind, job.platform) for job in plan_seed(config)}
    assert len(pairs) == 3 * 6
