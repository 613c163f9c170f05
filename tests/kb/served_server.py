"""A Chroma server of the test's own, started and stopped with scripts/kb-server (the way a site
runs its shared knowledge base), for the served-store tests."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.chroma_client import ChromaTarget

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "kb-server"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served_kb(tmp_path: Path) -> Iterator[ChromaTarget]:
    """A Chroma server of its own. Its data lives in /dev/shm when there is one: on this shared
    VM's disk every write waits ~40 ms for fsync, which would only slow the test down."""
    shm = Path("/dev/shm")
    data = Path(shm / f"wass-kb-test-{os.getpid()}" if shm.is_dir() else tmp_path)
    port = free_port()
    env = {**os.environ, "WASS_KB_SERVER_DIR": str(data), "WASS_KB_SERVER_PORT": str(port)}
    up = subprocess.run(
        [str(SCRIPT), "up"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert up.returncode == 0, up.stderr
    assert f"WASS_CHROMA_MODE=http WASS_CHROMA_HOST=127.0.0.1 WASS_CHROMA_PORT={port}" in up.stdout
    try:
        yield ChromaTarget(tmp_path / "nowhere", "http", "127.0.0.1", port)
    finally:
        down = subprocess.run(
            [str(SCRIPT), "purge"], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert down.returncode == 0, down.stderr
        status = subprocess.run(
            [str(SCRIPT), "status"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert status.returncode == 1 and "stopped" in status.stdout
