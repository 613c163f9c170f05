"""The real local Slurm cluster (scripts/slurm-cluster), once per test session, and helpers.

Tests using ``cluster`` run in CI (root, packages installed by scripts/install-system-deps) and
skip elsewhere. The cluster lives in its own directory and ports, so a developer's own Slurm is
never touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from sim.model import File, Task, Workflow
from tests.support import require
from wass_chat.slurm.commands import SlurmCommands

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "slurm-cluster"
BINARIES = ("slurmctld", "slurmd", "slurmdbd", "munged", "mariadbd", "sbatch", "sacct")
FINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL")


@dataclass(frozen=True)
class Cluster:
    directory: Path
    slurm_conf: Path
    up_seconds: float

    @property
    def etc(self) -> Path:
        return self.slurm_conf.parent


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    require(os.geteuid() == 0, "a local Slurm cluster needs root")
    missing = [b for b in BINARIES if shutil.which(b) is None]
    require(not missing, f"Slurm packages missing: {', '.join(missing)}")
    directory = Path(os.environ.get("WASS_SLURM_DIR", "/tmp/wass-slurm-tests"))
    # Own directory and ports (overridable, so two developers' suites can run side by side).
    port_base = os.environ.get("WASS_SLURM_TEST_PORT_BASE", "26800")
    env = {**os.environ, "WASS_SLURM_DIR": str(directory), "WASS_SLURM_PORT_BASE": port_base}
    start = time.monotonic()
    done = subprocess.run([str(SCRIPT), "up"], env=env, capture_output=True, text=True,
                          timeout=180, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    up_seconds = time.monotonic() - start
    conf = directory / "etc" / "slurm.conf"
    assert f"export SLURM_CONF={conf}" in done.stdout
    previous = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(conf)
    try:
        yield Cluster(directory, conf, up_seconds)
    finally:
        if previous is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = previous
        start = time.monotonic()
        down = subprocess.run([str(SCRIPT), "down"], env=env, capture_output=True, text=True,
                              timeout=120, check=False)  # fmt: skip
        print(f"\nslurm cluster: up {up_seconds:.1f} s, down {time.monotonic() - start:.1f} s")
        assert down.returncode == 0, down.stderr


@pytest.fixture
def wass_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh WASS_HOME (decision log) for one test; settings re-read from it."""
    from wass_chat.config import settings

    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    settings.cache_clear()
    yield tmp_path / "home"
    settings.cache_clear()


def wait_for_final(
    job_ids: Sequence[str], timeout: float = 90.0, commands: SlurmCommands | None = None
) -> dict[str, dict[str, str]]:
    """Poll sacct until every job is in a final state with Start and End (sacct lags)."""
    commands = commands or SlurmCommands()
    deadline = time.monotonic() + timeout
    while True:
        rows = commands.accounting(job_ids)
        done = [r for r in rows.values()
                if r["State"].split()[0] in FINAL and r["End"] not in ("Unknown", "")]  # fmt: skip
        if len(done) == len(job_ids):
            return rows
        if time.monotonic() > deadline:
            states = {j: rows.get(j, {}).get("State") for j in job_ids}
            raise AssertionError(f"jobs not finished after {timeout} s: {states}")
        time.sleep(0.5)


def layered_workflow(
    name: str, width: Sequence[int], seconds: tuple[float, float], seed: int = 0
) -> Workflow:
    """A DAG of layers (sizes ``width``); each task reads 1-2 outputs of the previous layer."""
    rng = np.random.default_rng(seed)
    tasks: list[Task] = []
    files: list[File] = []
    previous: list[str] = []
    for level, count in enumerate(width):
        current = []
        for k in range(count):
            tid = f"L{level}_{k}"
            out = f"{tid}.out"
            files.append(File(out, 1_000_000))
            inputs: tuple[str, ...] = ()
            if previous:
                chosen = rng.choice(len(previous), size=min(2, len(previous)), replace=False)
                inputs = tuple(f"{previous[int(i)]}.out" for i in sorted(chosen))
            cores = int(rng.choice([1, 2]))
            runtime = float(rng.uniform(*seconds))
            tasks.append(Task(tid, work=runtime * cores * 1e9, cores=cores,
                              inputs=inputs, outputs=(out,)))  # fmt: skip
            current.append(tid)
        previous = current
    return Workflow(name, tuple(tasks), tuple(files))
