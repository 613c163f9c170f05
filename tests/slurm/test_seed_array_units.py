"""`kb seed --slurm-array` without a cluster: Slurm absent is one line and exit 2 with nothing
written; the array spelling, sacct durations, the batch script and the progress line."""

from __future__ import annotations

from pathlib import Path

import pytest

from wass_chat.cli import main
from wass_chat.slurm.arrays.status import ArrayProgress
from wass_chat.slurm.arrays.submissions import task_list
from wass_chat.slurm.arrays.submit import ArrayResources, batch_script
from wass_chat.slurm.arrays.usage import slurm_seconds

SPEC = [
    "kb",
    "seed",
    "--count",
    "8",
    "--recipes",
    "",
    "--shapes",
    "chain",
    "--schedulers",
    "heft",
    "--sizes",
    "10",
    "--slurm-array",
    "2",
]


def test_without_slurm_one_line_exit_2_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no scontrol, no sbatch
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    array, kb = tmp_path / "array", tmp_path / "kb"
    code = main([*SPEC, "--array-dir", str(array), "--kb", str(kb)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().count("\n") == 0 and "Slurm is not installed here" in err
    assert not array.exists() and not kb.exists() and not (tmp_path / "home").exists()


def test_task_list_is_the_array_spelling() -> None:
    assert task_list([3, 0, 1, 2, 7, 5, 8]) == "0-3,5,7-8"
    assert task_list([4]) == "4"


def test_sacct_durations_in_seconds() -> None:
    assert slurm_seconds("00:10.951") == pytest.approx(10.951)
    assert slurm_seconds("01:02:03") == 3723
    assert slurm_seconds("2-00:00:01") == 2 * 86400 + 1


def test_batch_script_runs_one_task_of_the_plan(tmp_path: Path) -> None:
    script = batch_script(tmp_path, ArrayResources(cpus_per_task=2, memory_mb=900, partition="p"))
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert {"#SBATCH --cpus-per-task=2", "#SBATCH --mem=900M", "#SBATCH --partition=p"} <= set(
        lines
    )
    assert f"#SBATCH --output={tmp_path}/logs/task-%a.out" in lines
    assert lines[-1].endswith(f"-m kb.seed_shards {tmp_path}") and lines[-1].startswith("exec ")


def test_progress_line_counts_each_state() -> None:
    state = ArrayProgress(5, done={0, 1}, queued={2: "RUNNING", 3: "PENDING"}, failed={4: "FAILED"})
    assert state.line() == "2/5 tasks done, 1 running, 1 pending, 1 failed"
