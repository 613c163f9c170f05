"""`kb seed --slurm-array N` on the real local cluster: the array's shards merge to exactly the
serial seed's cases, and a task killed with SIGKILL mid-write, then re-run, loses and doubles
nothing."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from kb.seed import SeedConfig, job_case_ids, plan_seed
from kb.store import KnowledgeBase
from sim.array_plan import read_plan
from tests.slurm.conftest import Cluster, wait_for_final
from wass_chat.cli import main
from wass_chat.slurm.arrays import submissions
from wass_chat.slurm.arrays.status import queued_tasks
from wass_chat.slurm.commands import SlurmCommands

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]

TINY = [
    "--count",
    "28",
    "--recipes",
    "",
    "--shapes",
    "chain,fork-join,layered",
    "--platforms",
    "demo,homo-8",
    "--schedulers",
    "heft,random",
    "--sizes",
    "10,20",
    "--jobs",
    "1",
]
LONGER = [
    "--count",
    "160",
    "--recipes",
    "",
    "--shapes",
    "chain,fork-join,layered,fan-out",
    "--platforms",
    "demo,homo-8",
    "--schedulers",
    "heft,random",
    "--sizes",
    "40,80",
    "--jobs",
    "1",
]
"""20 jobs per task of 4, written in chunks of 4: a task's partial shard lives for seconds."""


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    capsys.readouterr()
    code = main([*argv, "--json"])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def plan_ids(count: int, shapes: str, sizes: tuple[int, ...]) -> set[str]:
    config = SeedConfig(
        count=count,
        recipes=(),
        shapes=tuple(shapes.split(",")),
        platforms=("demo", "homo-8"),
        schedulers=("heft", "random"),
        sizes=sizes,
        jobs=1,
    )
    return {i for job in plan_seed(config) for i in job_case_ids(job)}


def test_an_array_of_four_seeds_exactly_the_serial_cases(
    cluster: Cluster, wass_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    array = tmp_path / "array"
    argv = [
        "kb",
        "seed",
        *TINY,
        "--slurm-array",
        "4",
        "--array-dir",
        str(array),
        "--kb",
        str(tmp_path / "arr"),
    ]
    code, done, err = run_json(capsys, *argv)
    assert code == 0, err
    assert done["shards"] == 4 and done["added"] == done["stored"] == 28
    assert "4/4 tasks done, 0 running, 0 pending, 0 failed" in err
    assert [s.tasks for s in submissions.submissions(array)] == [(0, 1, 2, 3)]
    code, serial, _ = run_json(capsys, "kb", "seed", *TINY, "--kb", str(tmp_path / "serial"))
    assert code == 0 and serial["added"] == 28
    arr, ser = KnowledgeBase(tmp_path / "arr"), KnowledgeBase(tmp_path / "serial")
    assert arr.sidecar.ids() == ser.sidecar.ids() == plan_ids(28, TINY[5], (10, 20))
    assert arr.sidecar.ids("decisions") == ser.sidecar.ids("decisions")
    assert set(arr.cases.get(include=[])["ids"]) == arr.sidecar.ids()
    arr.close()
    code, again, _ = run_json(capsys, "kb", "merge", str(array), "--kb", str(tmp_path / "arr"))
    assert code == 0 and again["added"] == 0 and again["stored"] == 28


def _committed_rows(partial: Path) -> tuple[int, int] | None:
    """(rows, writer pid) of a partial shard, or None while it is absent or locked."""
    try:
        with sqlite3.connect(f"file:{partial}?mode=ro", uri=True, timeout=0.05) as db:
            rows = db.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
            pid = db.execute("SELECT value FROM meta WHERE key = 'pid'").fetchone()[0]
            return int(rows), int(pid)
    except (sqlite3.OperationalError, TypeError):
        return None


def test_a_task_killed_mid_write_then_rerun_loses_and_doubles_nothing(
    cluster: Cluster, wass_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    array, kb_dir = tmp_path / "array", tmp_path / "kb"
    argv = [
        "kb",
        "seed",
        *LONGER,
        "--slurm-array",
        "4",
        "--array-dir",
        str(array),
        "--kb",
        str(kb_dir),
    ]
    code, submitted, err = run_json(capsys, *argv, "--no-wait")
    assert code == 0, err
    job, victim = submitted["job_id"], 2
    shard = read_plan(array).shard(array, victim)
    partial = shard.with_name(shard.name + ".partial")
    deadline = time.monotonic() + 120
    seen = None
    while seen is None or seen[0] == 0:
        assert time.monotonic() < deadline, "task 2 never wrote its first chunk"
        assert not shard.exists(), "task 2 finished before it could be killed"
        seen = _committed_rows(partial)
        time.sleep(0.02)
    os.kill(seen[1], signal.SIGKILL)  # kill -9 of the array task, rows already committed
    rows = wait_for_final([f"{job}_{victim}"])
    assert rows[f"{job}_{victim}"]["State"].split()[0] == "FAILED"
    assert partial.exists() and not shard.exists()
    while victim in queued_tasks(SlurmCommands(), array):
        time.sleep(0.2)

    code, merged, err = run_json(capsys, *argv)  # the same command re-runs only task 2
    assert code == 0, err
    assert [s.tasks for s in submissions.submissions(array)] == [(0, 1, 2, 3), (victim,)]
    assert merged["shards"] == 4 and merged["missing_tasks"] == []
    expected = plan_ids(160, LONGER[5], (40, 80))
    kb = KnowledgeBase(kb_dir)
    assert kb.sidecar.ids() == expected and kb.count() == len(expected) == 160
    assert sorted(kb.cases.get(include=[])["ids"]) == sorted(expected)  # no vector twice
    assert kb.decisions.count() == kb.sidecar.count("decisions")
    kb.close()
    assert not partial.exists()
