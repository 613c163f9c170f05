"""Seeding split into array tasks (run here as plain processes; on Slurm in tests/slurm):
blocks cover the plan once, a partial shard is never merged, merging twice adds nothing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from kb.decisions import DecisionState
from kb.embedding import StructuralEmbedder
from kb.seed import SeedConfig, job_case_ids, plan_seed, seed_knowledge_base
from kb.seed_shards import ShardWriter, merge_shards, run_task, seed_plan, task_jobs
from kb.store import KnowledgeBase
from sim.array_plan import ArrayPlan, finished_tasks, write_plan
from sim.errors import InputError
from sim.model import Platform, Workflow

TINY = SeedConfig(
    count=28,
    recipes=(),
    shapes=("chain", "fork-join", "layered"),
    platforms=("demo", "homo-8"),
    schedulers=("heft", "random"),
    sizes=(10, 20),
    jobs=1,
)


def test_task_blocks_cover_the_plan_once_in_order() -> None:
    plan = plan_seed(TINY)
    for tasks in (1, 3, 4, 14, 20):
        blocks = [task_jobs(seed_plan(TINY, tasks), k) for k in range(tasks)]
        assert [job for block in blocks for job in block] == plan
        assert max(map(len, blocks)) - min(map(len, blocks)) <= 1
    with pytest.raises(InputError, match=r"outside 0\.\.3"):
        task_jobs(seed_plan(TINY, 4), 4)


def test_plan_round_trips_and_a_directory_keeps_one_plan(tmp_path: Path) -> None:
    plan = seed_plan(TINY, 4)
    assert ArrayPlan.from_json(plan.to_json()) == plan
    write_plan(tmp_path, plan)
    write_plan(tmp_path, seed_plan(SeedConfig(**{**TINY.__dict__, "jobs": 2}), 4))  # same plan
    with pytest.raises(InputError, match="another seed plan"):
        write_plan(tmp_path, seed_plan(TINY, 3))


def test_shards_merge_to_the_serial_seed_once(tmp_path: Path) -> None:
    directory = tmp_path / "array"
    plan = seed_plan(TINY, 4)
    write_plan(directory, plan)
    for task in (0, 1, 3):  # task 2 as a separate process, the way a node runs it
        run_task(directory, task)
    subprocess.run(
        [sys.executable, "-m", "kb.seed_shards", str(directory), "--task", "2"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert finished_tasks(directory, plan) == {0, 1, 2, 3}
    serial = KnowledgeBase(tmp_path / "serial")
    seed_knowledge_base(serial, TINY)
    merged = KnowledgeBase(tmp_path / "merged")
    report = merge_shards(merged, directory)
    assert report.added == report.cases_in_shards == 28 and report.missing_tasks == []
    assert merged.sidecar.ids() == serial.sidecar.ids()
    assert merged.sidecar.ids("decisions") == serial.sidecar.ids("decisions")
    assert set(merged.cases.get(include=[])["ids"]) == serial.sidecar.ids()
    assert merged.sidecar.chroma_in_sync(merged.cases.name)
    again = merge_shards(merged, directory)
    assert again.added == 0 and merged.cases.count() == merged.count() == 28
    case = next(iter(merged.get_cases(sorted(merged.sidecar.ids())[:1]).values()))
    assert merged.query(case.workflow, case.platform, k=2)[0].case_id in {
        i for job in plan_seed(TINY) for i in job_case_ids(job)
    }
    stored = serial.get_cases([case.case_id])[case.case_id]
    assert case.metrics == stored.metrics and case.placements == stored.placements


def test_a_partial_shard_is_never_merged_and_a_rerun_replaces_it(tmp_path: Path) -> None:
    directory = tmp_path / "array"
    plan = seed_plan(TINY, 2)
    write_plan(directory, plan)
    run_task(directory, 0)
    # Task 1 as if killed mid-write: a partial file holding some committed rows.
    from kb.seed import seeded_chunks

    writer = ShardWriter(plan.shard(directory, 1), plan, 1)
    writer.add(next(iter(seeded_chunks(TINY, task_jobs(plan, 1)))))
    with sqlite3.connect(writer.partial) as db:
        assert db.execute("SELECT COUNT(*) FROM cases").fetchone()[0] > 0
    kb = KnowledgeBase(tmp_path / "kb")
    first = merge_shards(kb, directory)
    assert first.missing_tasks == [1] and kb.count() == first.added == 14
    run_task(directory, 1)  # the rerun deletes the partial file and writes the whole shard
    assert not writer.partial.exists() and finished_tasks(directory, plan) == {0, 1}
    second = merge_shards(kb, directory)
    assert second.added == 14 and kb.count() == kb.cases.count() == 28


class HalfEmbedder:
    """v0's case vectors cut to 32 dims: another embedder (another width) for the slow path."""

    name = "half-v0"
    checksum = "half"

    def __init__(self) -> None:
        self.v0 = StructuralEmbedder()
        self.dim, self.decision_dim = 32, self.v0.decision_dim

    def embed_cases(self, pairs: Sequence[tuple[Workflow, Platform]]) -> np.ndarray:
        half = self.v0.embed_cases(pairs)[:, :32]
        return half / np.linalg.norm(half, axis=1, keepdims=True)

    def embed_decisions(self, states: Sequence[DecisionState]) -> np.ndarray:
        return self.v0.embed_decisions(states)


def test_merge_into_a_store_with_another_embedder_re_embeds(tmp_path: Path) -> None:
    directory = tmp_path / "array"
    write_plan(directory, seed_plan(TINY, 1))
    run_task(directory, 0)
    kb = KnowledgeBase(tmp_path / "kb", embedder=HalfEmbedder())
    assert merge_shards(kb, directory).added == 28
    assert kb.cases.count() == 28
    case = next(iter(kb.get_cases(sorted(kb.sidecar.ids())[:1]).values()))
    assert kb.query(case.workflow, case.platform, k=1)[0].similarity == pytest.approx(1.0)
