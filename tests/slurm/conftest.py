"""The real local Slurm cluster (scripts/slurm-cluster), once per test session and version.

Tests using ``cluster`` run in CI (root, packages installed by scripts/install-system-deps) and
skip elsewhere. Each Slurm version Debian ships can be the cluster: 22.05 (the host's), 24.11
and 26.05 (Debian roots, scripts/slurm-root). ``WASS_SLURM_VERSIONS`` (comma-separated, or
``all``; default 22.05) chooses them; `make test` runs all three. The ``cluster`` fixture is
parametrized over them, so every test using it runs once per version (its id ends in
``[24.11]``...) and pytest groups the tests by version: one xdist group per version
(``slurm-24.11``), so two workers run two versions side by side. A cluster
lives in its own directory (``$WASS_SLURM_DIR-<version>``) and ports (``$WASS_SLURM_TEST_PORT_BASE``
+ 1000 per version), so a developer's own Slurm is never touched.

Where Slurm itself behaves differently by version, a test says so, never by skipping: either a
per-version expectation in its body (``{"22.05": a, "24.11": b, "26.05": c}[cluster.version]``)
or the marker ``slurm_version_differs(*versions, reason=..., case=None)``, which makes the test
(or only its parametrized ``case``) a strict xfail on those versions: reported with the reason,
and failing the day it passes.
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
# Every version uses the host's munged and MariaDB; 22.05 also its Slurm, the newer ones a
# Debian root (debootstrap) and the host's slurmstepd path as a mount point.
HOST_BINARIES = ("munged", "mariadbd")
HOST_SLURM = ("slurmctld", "slurmd", "slurmdbd", "sbatch", "sacct")
ROOT_BUILD = ("debootstrap", "slurmstepd")
FINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL")
# The versions scripts/slurm-cluster knows, in port order (the 22.05 host's first).
SLURM_VERSIONS = ("22.05", "24.11", "26.05")
SLURM_GROUP = "slurm"
"""The pytest-xdist group (``--dist loadgroup``) of the Slurm tests that use no cluster (the
modules' own marks); a test on the cluster goes to its version's group, :func:`slurm_group`."""


def slurm_group(version: str) -> str:
    """The pytest-xdist group of every test on version ``version``'s cluster: one worker runs
    them all, and two workers run two versions' clusters side by side (their own directories,
    ports, munged and MariaDB)."""
    return f"{SLURM_GROUP}-{version}"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slurm_version_differs(*versions, reason, case=None): on those Slurm versions the test "
        "(or its parametrized case) is expected to fail, for the reason given (strict xfail)",
    )


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put every test that uses ``cluster`` in its version's xdist group (``slurm-22.05``...),
    and only there; turn ``slurm_version_differs`` into a strict xfail on the versions it names.

    The group is not left to each module's marks: a worker that runs a cluster test brings up
    the version's cluster in the one directory and ports all workers share, and takes it down
    when it moves on to the next version, under the other worker's tests (CI run 2: a module
    without the mark took 24.11's cluster down in the middle of the slurm group's tests). One
    group per version, not one for all: the cluster tests mostly wait for Slurm, and in one
    group the three versions ran one after another on one worker, 2/3 of the suite's wall
    (docs/testing.md).

    pytest-xdist joins all of a test's ``xdist_group`` marks into one name, so a module's
    ``xdist_group("slurm")`` beside the version's made a second group per version
    (``slurm_slurm-26.05``) that another worker ran on the same cluster at the same time (CI,
    stop 48: a fault test stopped 26.05's slurmctld under a start-time test). The module's and
    class's marks are therefore moved onto each test, where the version's replaces them."""
    parents = {id(p): p for item in items for p in item.listchain()[:-1]}
    for item in items:
        chain = item.listchain()[:-1]
        item.own_markers.extend(m for p in chain for m in p.own_markers if m.name == "xdist_group")
    for parent in parents.values():
        parent.own_markers[:] = [m for m in parent.own_markers if m.name != "xdist_group"]
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        version = params.get("cluster")
        if version is not None or "cluster" in getattr(item, "fixturenames", ()):
            group = SLURM_GROUP if version is None else slurm_group(version)
            item.own_markers[:] = [m for m in item.own_markers if m.name != "xdist_group"]
            item.add_marker(pytest.mark.xdist_group(group))
        if version is None:
            continue
        for mark in item.iter_markers("slurm_version_differs"):
            case = mark.kwargs.get("case")
            if version in mark.args and (case is None or case in params.values()):
                reason = f"Slurm {version}: {mark.kwargs['reason']}"
                item.add_marker(pytest.mark.xfail(strict=True, reason=reason))


def selected_versions() -> tuple[str, ...]:
    """The versions ``WASS_SLURM_VERSIONS`` asks for (``all``, or a comma-separated list)."""
    raw = os.environ.get("WASS_SLURM_VERSIONS", SLURM_VERSIONS[0]).strip()
    if raw == "all":
        return SLURM_VERSIONS
    chosen = tuple(v.strip() for v in raw.split(",") if v.strip())
    unknown = [v for v in chosen if v not in SLURM_VERSIONS]
    if unknown or not chosen:
        raise pytest.UsageError(
            f"WASS_SLURM_VERSIONS={raw!r}: choose among {', '.join(SLURM_VERSIONS)} or 'all'"
        )
    return chosen


@dataclass(frozen=True)
class Cluster:
    directory: Path
    slurm_conf: Path
    up_seconds: float
    version: str
    """Slurm's major.minor release, e.g. ``24.11``: for expectations that differ by version."""

    @property
    def etc(self) -> Path:
        return self.slurm_conf.parent


def _cluster_env(version: str) -> dict[str, str]:
    """The environment scripts/slurm-cluster gets: this version's directory and ports."""
    base = os.environ.get("WASS_SLURM_DIR", "/tmp/wass-slurm-tests")
    port_base = int(os.environ.get("WASS_SLURM_TEST_PORT_BASE", "26800"))
    port_base += 1000 * SLURM_VERSIONS.index(version)
    return {
        **os.environ,
        "WASS_SLURM_DIR": f"{base}-{version}",
        "WASS_SLURM_PORT_BASE": str(port_base),
    }


def _exported(stdout: str, name: str) -> str | None:
    """The value of ``export NAME=...`` among the lines `slurm-cluster up` printed."""
    prefix = f"export {name}="
    return next(
        (line[len(prefix) :] for line in stdout.splitlines() if line.startswith(prefix)), None
    )


@pytest.fixture(scope="session", params=selected_versions())
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    version: str = request.param
    require(os.geteuid() == 0, "a local Slurm cluster needs root")
    needed = HOST_BINARIES + (HOST_SLURM if version == SLURM_VERSIONS[0] else ROOT_BUILD)
    missing = [b for b in needed if shutil.which(b) is None]
    require(not missing, f"packages for Slurm {version} missing: {', '.join(missing)}")
    env = _cluster_env(version)
    argv = [str(SCRIPT), "up", "--slurm", version]
    start = time.monotonic()
    # A newer version's first `up` on a machine builds its Debian root (about a minute).
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    up_seconds = time.monotonic() - start
    conf = Path(env["WASS_SLURM_DIR"]) / "etc" / "slurm.conf"
    assert _exported(done.stdout, "SLURM_CONF") == str(conf)
    path = _exported(done.stdout, "PATH")  # a newer version's own commands come first
    previous = {k: os.environ.get(k) for k in ("SLURM_CONF", "PATH")}
    os.environ["SLURM_CONF"] = str(conf)
    if path is not None:
        os.environ["PATH"] = path.replace("$PATH", os.environ["PATH"])
    try:
        # The clients on PATH are the cluster's version (the product calls them by name).
        reported = subprocess.run(
            ["sinfo", "--version"], capture_output=True, text=True, check=True
        ).stdout.split()
        assert reported[-1].startswith(f"{version}."), reported
        yield Cluster(Path(env["WASS_SLURM_DIR"]), conf, up_seconds, version)
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        start = time.monotonic()
        down = subprocess.run(
            [str(SCRIPT), "down", "--slurm", version],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        print(
            f"\nslurm {version} cluster: up {up_seconds:.1f} s, "
            f"down {time.monotonic() - start:.1f} s"
        )
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
        done = [
            r
            for r in rows.values()
            if r["State"].split()[0] in FINAL and r["End"] not in ("Unknown", "")
        ]
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
            tasks.append(
                Task(tid, work=runtime * cores * 1e9, cores=cores, inputs=inputs, outputs=(out,))
            )
            current.append(tid)
        previous = current
    return Workflow(name, tuple(tasks), tuple(files))
