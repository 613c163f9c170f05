"""Honest when Slurm is away (issue #35, item 4): one line naming the cause, exit 2, quickly.

Each case is made for real: a missing or unparsable slurm.conf, a controller port nothing
listens on, Slurm's commands off PATH, no configuration at all, a job the accounting cache saw
pending while Slurm is away. Speed is not asserted (a loaded machine would fail it); the
mechanism is: which check failed (:attr:`SlurmAway.stage`), which commands it ran (none, or
only ``scontrol --version`` / ``scontrol ping``), and the short timeouts it uses.

The one case no real Slurm can produce, a release wass-chat has never seen, puts a two-line
``scontrol`` on PATH that prints ``slurm 27.05.1`` as a future release would.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.slurm.conftest import Cluster
from tests.support import data_home, require
from wass_chat.slurm import availability
from wass_chat.slurm.availability import SlurmAway, ensure_slurm, parse_version
from wass_chat.slurm.commands import SlurmCommands

QUESTION = "why is job 84 pending?"


@pytest.fixture(autouse=True)
def fresh_checks() -> Iterator[None]:
    availability.forget_checks()
    yield
    availability.forget_checks()


@pytest.fixture
def slurm_installed() -> None:
    require(shutil.which("scontrol") is not None, "Slurm's commands are not installed")


def ask(env: dict[str, str], home: Path) -> subprocess.CompletedProcess[str]:
    """``wass-chat ask --offline QUESTION`` as a user runs it, in ``env``."""
    exe = shutil.which("wass-chat", path=str(Path(sys.executable).parent)) or "wass-chat"
    return subprocess.run(
        [exe, "ask", "--offline", QUESTION],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "WASS_HOME": str(home), "COLUMNS": "500"},
        check=False,
    )


def said(done: subprocess.CompletedProcess[str]) -> str:
    """What the answer said, its terminal line wrapping undone."""
    assert "Traceback" not in done.stderr, done.stderr
    return " ".join(done.stdout.split())


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def minimal_conf(path: Path, body: str) -> Path:
    """A slurm.conf of ``body``, plus the ``PluginDir`` of the configuration in use (a newer
    release's commands, from a Debian root, find their own plugins only through it)."""
    active = os.environ.get("SLURM_CONF")
    plugin_dir = [
        line
        for line in (
            Path(active).read_text().splitlines() if active and Path(active).is_file() else []
        )
        if line.startswith("PluginDir=")
    ]
    path.write_text("\n".join([*body.strip().splitlines(), *plugin_dir]) + "\n")
    return path


def env_with(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def test_a_missing_slurm_conf_is_named_before_any_command_runs(
    slurm_installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere" / "slurm.conf"
    monkeypatch.setenv("SLURM_CONF", str(missing))
    with pytest.raises(SlurmAway) as caught:
        SlurmCommands().run(["squeue", "-h"])
    assert caught.value.stage == "config" and caught.value.ran == ()
    line = caught.value.one_line()
    assert line == f"Slurm is not configured here: SLURM_CONF={missing}: no such file"
    done = ask(env_with(SLURM_CONF=str(missing)), tmp_path / "home")
    assert done.returncode == 2
    assert f"SLURM_CONF={missing}: no such file" in said(done)


def test_a_broken_slurm_conf_is_quoted_with_slurms_own_complaint(
    slurm_installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "slurm.conf"
    broken.write_text("this is = not slurm\n")
    monkeypatch.setenv("SLURM_CONF", str(broken))
    with pytest.raises(SlurmAway) as caught:
        ensure_slurm("squeue")
    assert caught.value.stage == "config" and caught.value.ran == ("scontrol --version",)
    line = caught.value.one_line()
    assert "\n" not in line and f"SLURM_CONF={broken} is not a usable slurm.conf" in line
    assert "Parse error" in line  # Slurm's words, with the line it stopped at
    done = ask(env_with(SLURM_CONF=str(broken)), tmp_path / "home")
    assert done.returncode == 2 and f"SLURM_CONF={broken} is not a usable slurm.conf" in said(done)


def test_an_unreachable_controller_is_named_by_host_and_port(
    slurm_installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = closed_port()
    conf = minimal_conf(
        tmp_path / "slurm.conf",
        f"ClusterName=away\nSlurmctldHost=ctl(127.0.0.1)\nSlurmctldPort={port}",
    )
    monkeypatch.setenv("SLURM_CONF", str(conf))
    with pytest.raises(SlurmAway) as caught:
        SlurmCommands(timeout=30).run(["squeue", "-h"])
    away = caught.value
    assert away.stage == "controller"
    assert away.ran == ("scontrol --version", "scontrol ping")  # squeue itself never ran
    assert availability.PING_TIMEOUT_S <= 1.0 and availability.CONNECT_TIMEOUT_S <= 1.0
    assert away.one_line() == (
        f"Slurm is unreachable: nothing listens at ctl (127.0.0.1:{port}) (SlurmctldHost in "
        f"{conf}): slurmctld is not running there"
    )
    done = ask(env_with(SLURM_CONF=str(conf)), tmp_path / "home")
    assert done.returncode == 2 and f"nothing listens at ctl (127.0.0.1:{port})" in said(done)


def test_slurm_off_path_is_a_missing_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    bare = tmp_path / "bin"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    with pytest.raises(SlurmAway) as caught:
        SlurmCommands().run(["squeue", "-h"])
    assert caught.value.stage == "command" and caught.value.ran == ()
    assert caught.value.one_line() == "Slurm is not installed here: squeue not found on PATH"
    done = ask(env_with(PATH=str(bare)), tmp_path / "home")
    assert done.returncode == 2
    assert "Slurm is not installed here: scontrol not found on PATH" in said(done)


def test_a_release_never_seen_is_refused_by_name(
    slurm_installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    future = tmp_path / "bin"
    future.mkdir()
    stand_in = future / "scontrol"
    stand_in.write_text("#!/bin/sh\necho 'slurm 27.05.1'\n")
    stand_in.chmod(0o755)
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=future\nSlurmctldHost=ctl(127.0.0.1)\n")
    path = f"{future}:{os.environ['PATH']}"
    monkeypatch.setenv("PATH", path)
    monkeypatch.setenv("SLURM_CONF", str(conf))
    monkeypatch.delenv(availability.ANY_VERSION_ENV, raising=False)
    with pytest.raises(SlurmAway) as caught:
        ensure_slurm("squeue")
    assert caught.value.stage == "version" and caught.value.ran == ("scontrol --version",)
    assert caught.value.one_line().startswith(
        "Slurm 27.05.1 (scontrol --version) is a release wass-chat has never seen (it reads "
        "22.05-26.05)"
    )
    done = ask(env_with(PATH=path, SLURM_CONF=str(conf)), tmp_path / "home")
    assert done.returncode == 2 and "Slurm 27.05.1 (scontrol --version) is a release" in said(done)


def test_known_releases_are_read_from_real_version_lines() -> None:
    """What Debian's and SchedMD's builds print (22.05: Debian bookworm; 24.11: trixie;
    26.05: sid)."""
    debian = parse_version("slurm-wlm 22.05.8")
    assert debian is not None and str(debian) == "22.05.8" and debian.known
    for line, release in (("slurm 24.11.5", (24, 11)), ("slurm 26.05.1", (26, 5))):
        version = parse_version(line)
        assert version is not None and version.release == release and version.known
    old = parse_version("slurm 21.08.8-2")
    assert old is not None and not old.known
    assert parse_version("scontrol: fatal: Could not establish a configuration source") is None


def test_no_configuration_at_all_says_where_slurm_looked(
    slurm_installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if any(p.exists() for p in availability.DEFAULT_CONF_PATHS):
        pytest.skip("this machine has a default slurm.conf")  # a site's, not ours to hide
    monkeypatch.delenv("SLURM_CONF", raising=False)
    with pytest.raises(SlurmAway) as caught:
        ensure_slurm("squeue")
    assert caught.value.stage == "config" and caught.value.ran == ("scontrol --version",)
    assert caught.value.one_line() == (
        "Slurm is not configured here: SLURM_CONF is unset and /etc/slurm/slurm.conf and "
        "/run/slurm/conf/slurm.conf do not exist, and no DNS SRV record names a controller "
        "(set SLURM_CONF to the cluster's slurm.conf)"
    )


@pytest.mark.slurm
def test_a_job_the_cache_saw_pending_is_not_answered_from_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    """With SLURM_CONF unset, "why is job N pending?" for a job the accounting cache holds as
    pending: exit 2, naming why Slurm was not asked, and the cached state only as history."""
    if any(p.exists() for p in availability.DEFAULT_CONF_PATHS):
        pytest.skip("this machine has a default slurm.conf")
    commands = SlurmCommands()
    submit = [
        "sbatch",
        "--parsable",
        "-N1",
        "--nodelist=n2",
        "--cpus-per-task=2",
        "--mem=64M",
        "--time=10",
        "--output=/dev/null",
        "--wrap=sleep 300",
    ]
    holder = commands.run(submit).strip().split(";")[0]
    waiting = commands.run(submit).strip().split(";")[0]
    home = tmp_path / "home"
    try:
        deadline = time.monotonic() + 60
        while "Resources" not in commands.run(["squeue", "-h", "-j", waiting, "-o", "%r"]):
            assert time.monotonic() < deadline, "the second job never waited for Resources"
            time.sleep(0.5)
        env = {**os.environ, "WASS_HOME": str(home)}
        exe = shutil.which("wass-chat", path=str(Path(sys.executable).parent)) or "wass-chat"
        deadline = time.monotonic() + 60
        while True:  # sacct lags squeue: import until the cache holds the pending job
            busy = [exe, "ask", "--offline", "how busy was the cluster last week?"]
            subprocess.run(busy, capture_output=True, text=True, timeout=120, env=env, check=True)
            if waiting in _cached_jobs(home):
                break
            assert time.monotonic() < deadline, "the import never held the pending job"
            time.sleep(1)
        exe_env = env_with(SLURM_CONF=None)
        done = subprocess.run(
            [exe, "ask", "--offline", f"why is job {waiting} pending?"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**exe_env, "WASS_HOME": str(home)},
            check=False,
        )
        text = said(done)
        assert done.returncode == 2, text
        assert "Slurm is not configured here: SLURM_CONF is unset" in text
        assert "As of the last import at " in text and f"job {waiting} was pending" in text
        assert "that is history, not how it stands now" in text
        assert "Nothing you can change" not in text
    finally:
        commands.cancel([holder, waiting])


def _cached_jobs(home: Path) -> set[str]:
    from wass_chat.config import settings
    from wass_chat.sacct.cache import SacctCache

    with data_home(home):
        frame = SacctCache(settings().sacct_dir).scan().select("job_id").collect()
        return {str(j) for j in frame["job_id"].to_list()}
