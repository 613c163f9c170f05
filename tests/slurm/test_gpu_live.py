"""GPU jobs on the real cluster: what was held, and "not recorded" for what was used.

Node n4 has two stand-in GPUs (a GRES backed by /dev/null and /dev/zero, no NVML:
scripts/slurm-cluster), and the cluster accounts ``AccountingStorageTRES=gres/gpu`` only. So
AllocTRES carries ``gres/gpu=N`` while no step records ``gres/gpuutil``/``gres/gpumem``: the
efficiency view must say what was held and that use was not recorded (and what would record
it), never 0%, on every Slurm version; the report's GPU section says the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from tests.slurm.conftest import Cluster, wait_for_final
from tests.support import no_settings_file
from wass_chat.analytics.analysis import analyze
from wass_chat.analytics.gpu_usage import NOT_RECORDED
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.ingest import ingest_slurm
from wass_chat.slurm.commands import SlurmCommands

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]


def test_live_gpu_jobs_show_what_was_held_and_that_use_was_not_recorded(
    cluster: Cluster, tmp_path: Path
) -> None:
    commands = SlurmCommands()
    out = f"--output={tmp_path}/%j.out"
    two = commands.sbatch(["-N1", "-w", "n4", "--gres=gpu:2", "-c1", out, "--wrap=sleep 1"])
    one = commands.sbatch(
        ["-N1", "-w", "n4", "--gres=gpu:1", "-c1", out, "--wrap=srun -n1 sleep 1"]
    )
    wait_for_final([two, one], timeout=90, commands=commands)
    env = {
        **os.environ,
        "WASS_HOME": str(tmp_path / "home"),
        "WASS_CONFIG": no_settings_file(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "wass_chat.cli", "sacct", "efficiency", two, one, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = {r["job_id"]: r for r in json.loads(done.stdout)}
    for job_id, gpus in ((two, 2), (one, 1)):
        g = rows[job_id]["gpu"]
        assert g["gpus"] == gpus and g["held_source"] == "AllocTRES gres/gpu", g
        assert g["gpu_hours_held"] > 0
        assert not g["recorded"] and g["utilisation_pct"] is None
        assert g["not_recorded_why"].startswith(NOT_RECORDED)
        assert "AccountingStorageTRES=gres/gpu,gres/gpumem,gres/gpuutil" in g["not_recorded_why"]
    text = subprocess.run(
        [sys.executable, "-m", "wass_chat.cli", "sacct", "efficiency", two],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert f"GPU use: {NOT_RECORDED}" in text and "GPU utilisation" not in text
    asked = subprocess.run(
        [
            sys.executable,
            "-m",
            "wass_chat.cli",
            "ask",
            "--offline",
            "--json",
            f"how well did job {two} use its GPUs?",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert asked.returncode == 0, asked.stderr
    said = json.loads(asked.stdout)
    assert [c["name"] for c in said["tool_calls"]] == ["gpu_usage"] and said["verified"]
    (held,) = said["facts"]["jobs"]  # the same figures as `sacct efficiency`
    assert held["gpus"] == 2 and held["gpu_hours_held"] == rows[two]["gpu"]["gpu_hours_held"]
    assert not held["recorded"] and NOT_RECORDED in said["answer"] and "0%" not in said["answer"]

    cache = SacctCache(tmp_path / "sacct")
    now = datetime.now()
    ingest_slurm(cache, now - timedelta(hours=2), now + timedelta(minutes=1))
    stored = cache.scan().collect()
    version = set(stored["slurm_version"].drop_nulls())
    assert len(version) == 1 and version.pop().startswith(f"{cluster.version}.")
    mine = cache.scan().filter(
        pl.col("job_id").is_in([two, one])
        | pl.col("job_id").str.starts_with(f"{two}.")
        | pl.col("job_id").str.starts_with(f"{one}.")
    )  # other tests' jobs (an idle job given a jobstats summary) are no part of this
    a = analyze(mine, now - timedelta(hours=2), now + timedelta(minutes=1))
    assert a.gpu_use is not None and a.gpu_use.gpu_jobs >= 2 and a.gpu_use.recorded_jobs == 0
    note = a.gpu_use.not_recorded_note()
    assert note is not None and note.startswith(NOT_RECORDED)
