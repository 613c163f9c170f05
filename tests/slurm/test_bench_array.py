"""`bench --slurm-array N` and `train evaluate --slurm-array N` on the real local cluster: the
merged records are the local run's exactly (``--optimal``'s study solved by the submitter
after the merge), and a task killed with SIGKILL mid-run, then re-run by the same command,
leaves every record present once; with ``--kb``, the predictions the submitter retrieved travel
in the plan and the files are byte-identical to the local run's."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from policy.bench.matrix import build_matrix, parse_platforms, parse_recipes
from policy.bench.runner import RunSpec, run_matrix
from sim.array_plan import read_plan
from tests.slurm.conftest import Cluster, wait_for_final
from tests.support import data_home
from wass_chat.cli import main
from wass_chat.slurm.arrays import submissions

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]

BENCH = [
    "bench",
    "--recipes",
    "montage:60,genome:60",
    "--platforms",
    "hetero:4",
    "--seeds",
    "6",
    "--schedulers",
    "heft,minmin",
]
"""12 instances: 3 per task of 4, so a task killed after its first instance has work left."""
EVALUATE = [
    "train",
    "evaluate",
    "--untrained",
    "--instances",
    "2",
    "--recipes",
    "montage",
    "--ccrs",
    "0,1",
    "--json",
]
KB_SEED = [
    "estimates",
    "seed",
    "--recipes",
    "montage:60,genome:60",
    "--platforms",
    "hetero:4",
    "--seeds",
    "2",
    "--first-seed",
    "0",
    "--runs",
    "1",
]
"""Run 1 of each bench instance (a recurring workflow): every predictions field is filled."""
KB_BENCH = [
    "bench",
    "--recipes",
    "montage:60,genome:60",
    "--platforms",
    "hetero:4",
    "--seeds",
    "2",
    "--schedulers",
    "heft,policy",
    "--estimates",
    "user",
]
"""Under user estimates only, see the kb test."""


@dataclass(frozen=True)
class LocalRuns:
    """What the array runs are compared with: the same commands run locally, once per worker
    session, not once per Slurm version (they do not depend on it; ~16 s of CPU each time)."""

    bench: dict[str, Any]
    """``BENCH --optimal --json``'s document."""
    bench_records: list[dict[str, Any]]
    """``BENCH``'s records from :func:`run_matrix` itself."""
    evaluation: dict[str, Any]
    """``EVALUATE``'s JSON."""
    kb: Path
    """The store ``KB_SEED`` filled, which the kb bench read."""
    kb_bench: list[bytes]
    """``KB_BENCH``'s ``--json`` and ``--markdown`` files."""


@pytest.fixture(scope="session")
def local_runs(tmp_path_factory: pytest.TempPathFactory) -> LocalRuns:
    where = tmp_path_factory.mktemp("local-runs")
    with data_home(where / "home"):
        assert main([*BENCH, "--optimal", "--json", str(where / "bench.json")]) == 0
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(EVALUATE) == 0
        kb = where / "kb"
        assert main([*KB_SEED, "--kb", str(kb)]) == 0
        files = ["--json", str(where / "kb.json"), "--markdown", str(where / "kb.md")]
        assert main([*KB_BENCH, "--kb", str(kb), *files]) == 0
    instances = build_matrix(parse_recipes("montage:60,genome:60"), parse_platforms("hetero:4"), 6)
    expected = run_matrix(instances, RunSpec(("heft", "minmin")))
    return LocalRuns(
        json.loads((where / "bench.json").read_text()),
        [asdict(r) for o in expected for r in o.records],
        json.loads(out.getvalue()),
        kb,
        [(where / f"kb.{suffix}").read_bytes() for suffix in ("json", "md")],
    )


def _first_row_pid(partial: Path) -> int | None:
    """The writer's pid once a partial shard holds its header and at least one instance."""
    try:
        lines = partial.read_text().splitlines()
    except FileNotFoundError:
        return None
    return int(json.loads(lines[0])["pid"]) if len(lines) >= 2 else None


def test_bench_array_equals_the_local_run_and_a_killed_task_reruns_alone(
    cluster: Cluster,
    wass_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    local_runs: LocalRuns,
) -> None:
    array, victim = tmp_path / "array", 1
    argv = [
        *BENCH,
        "--optimal",
        "--slurm-array",
        "4",
        "--array-dir",
        str(array),
        "--json",
        str(tmp_path / "array.json"),
    ]
    first = subprocess.Popen(
        [sys.executable, "-m", "wass_chat.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 180
    while not (array / "plan.json").exists():
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.05)
    shard = read_plan(array).shard(array, victim)
    partial = shard.with_name(shard.name + ".partial")
    while (pid := _first_row_pid(partial)) is None:
        assert time.monotonic() < deadline, "task 1 never finished its first instance"
        assert not shard.exists(), "task 1 finished before it could be killed"
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)  # kill -9 of the array task, one instance written
    _, err = first.communicate(timeout=180)
    assert first.returncode == 1, err
    assert "task 1: FAILED" in err and "run the same command again" in err
    assert not (tmp_path / "array.json").exists()  # nothing written from a partial array
    job = submissions.submissions(array)[0].job_id
    assert wait_for_final([f"{job}_{victim}"])[f"{job}_{victim}"]["State"].startswith("FAILED")

    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err  # the same command re-runs only task 1
    assert [s.tasks for s in submissions.submissions(array)] == [(0, 1, 2, 3), (victim,)]
    assert not partial.exists() and shard.exists()
    on_array = json.loads((tmp_path / "array.json").read_text())
    local = local_runs.bench
    assert on_array == local  # the whole document: records, instances, summary, settings
    assert on_array["optimality"]["instances"] == 50  # --optimal: solved by the submitter
    assert on_array["records"] == local_runs.bench_records
    keys = [(r["instance"], r["scheduler"]) for r in on_array["records"]]
    assert len(keys) == len(set(keys)) == 24  # every record once


def test_evaluate_array_equals_the_local_evaluation(
    cluster: Cluster,
    wass_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    local_runs: LocalRuns,
) -> None:
    """Two tasks for the four (instance, CCR) units: each task's start imports torch (~7 s of
    CPU), and two already merge shards."""
    capsys.readouterr()
    code = main([*EVALUATE, "--slurm-array", "2", "--array-dir", str(tmp_path / "array")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "2/2 tasks done, 0 running, 0 pending, 0 failed" in out.err
    on_array = json.loads(out.out)
    local = local_runs.evaluation
    assert on_array == local and set(local) == {"native", "ccr1"}
    assert [ev["instances"] for ev in local.values()] == [2, 2]


def test_bench_array_with_kb_predictions_equals_the_local_kb_run(
    cluster: Cluster,
    wass_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    local_runs: LocalRuns,
) -> None:
    """Under user estimates only the learned policy uses the predictions (its records differ
    without them) and HEFT plans on the requests, so both paths must arrive intact. One
    estimate mode only: each costs about a minute of the suite on the cluster, and ``kb``
    estimates go through the same plan field (the unit tests cover the shards)."""
    kb = local_runs.kb  # read only, by both runs
    files = ["--json", str(tmp_path / "array.json"), "--markdown", str(tmp_path / "array.md")]
    array = ["--slurm-array", "2", "--array-dir", str(tmp_path / "a")]
    assert main([*KB_BENCH, "--kb", str(kb), *array, *files]) == 0, capsys.readouterr().err
    on_array = [(tmp_path / f"array.{suffix}").read_bytes() for suffix in ("json", "md")]
    assert on_array == local_runs.kb_bench  # byte for byte, --json and --markdown
    plan = (tmp_path / "a" / "plan.json").read_text()
    carried = json.loads(plan)["spec"]["predictions"]
    filled = ("categories", "node_classes", "cases", "tasks", "nodes", "runs")
    assert len(carried) == 4 and all(p[f] for p in carried.values() for f in filled)
    assert str(kb) not in plan  # the tasks read the plan's predictions, never the store
