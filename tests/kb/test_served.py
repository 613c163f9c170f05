"""A served knowledge base (scripts/kb-server: `chroma run`): two processes with different
WASS_HOMEs add and query one store at once; every case is there afterwards, once."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.chroma_client import ChromaTarget
from kb.store import KnowledgeBase
from tests.kb.conftest import make_case

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "kb-server"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def kb_server(tmp_path: Path) -> Iterator[ChromaTarget]:
    """A Chroma server of its own. Its data lives in /dev/shm when there is one: on this shared
    VM's disk every write waits ~40 ms for fsync, which would only slow the test down."""
    shm = Path("/dev/shm")
    data = Path(shm / f"wass-kb-test-{os.getpid()}" if shm.is_dir() else tmp_path)
    port = free_port()
    env = {**os.environ, "WASS_KB_SERVER_DIR": str(data), "WASS_KB_SERVER_PORT": str(port)}
    up = subprocess.run([str(SCRIPT), "up"], env=env, capture_output=True, text=True,
                        timeout=120, check=False)  # fmt: skip
    assert up.returncode == 0, up.stderr
    assert f"WASS_CHROMA_MODE=http WASS_CHROMA_HOST=127.0.0.1 WASS_CHROMA_PORT={port}" in up.stdout
    try:
        yield ChromaTarget(tmp_path / "nowhere", "http", "127.0.0.1", port)
    finally:
        down = subprocess.run([str(SCRIPT), "purge"], env=env, capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip
        assert down.returncode == 0, down.stderr
        status = subprocess.run([str(SCRIPT), "status"], env=env, capture_output=True,
                                text=True, timeout=60, check=False)  # fmt: skip
        assert status.returncode == 1 and "stopped" in status.stdout


@pytest.mark.slow
def test_two_homes_add_and_query_one_served_store_at_once(
    kb_server: ChromaTarget, tmp_path: Path
) -> None:
    """1,000 operations per process (500 single-case adds, 500 queries), 100 cases added by
    both; then a third client finds all 900 cases, each once, in records and vectors."""
    env = {**os.environ, "WASS_CHROMA_MODE": "http", "WASS_CHROMA_HOST": kb_server.host,
           "WASS_CHROMA_PORT": str(kb_server.port), "PYTHONPATH": str(ROOT)}  # fmt: skip
    runs = {"a": (0, 499), "b": (899, 400)}  # seeds 400-499 are added by both, in opposite order
    workers = {}
    for name, (first, last) in runs.items():
        argv = [
            "-m",
            "tests.kb.served_worker",
            str(first),
            str(last),
            str(tmp_path / f"{name}.json"),
        ]
        home = {"WASS_HOME": str(tmp_path / f"home-{name}")}
        workers[name] = subprocess.Popen([sys.executable, *argv], env={**env, **home}, cwd=ROOT)
    for process in workers.values():
        assert process.wait(timeout=600) == 0
    done = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in runs}
    for name, doc in done.items():
        assert doc["adds"] + doc["queries"] == 1000
        assert doc["home"] == str(tmp_path / f"home-{name}")
        assert not (tmp_path / f"home-{name}" / "kb" / "cases.sqlite").exists()  # all served
    expected = {make_case(seed).case_id for seed in range(900)}
    assert set(done["a"]["added"]) | set(done["b"]["added"]) == expected

    kb = KnowledgeBase(kb_server)  # a third client, a third home
    assert kb.sidecar.ids() == expected and kb.count() == 900
    vector_ids = kb.cases.get(include=[])["ids"]
    assert len(vector_ids) == kb.cases.count() == 900 and set(vector_ids) == expected
    assert kb.sidecar.chroma_in_sync(kb.cases.name) and kb.missing_vectors == 0
    records = kb.get_cases(sorted(expected))
    assert len(records) == 900 and all(r.metrics.makespan > 0 for r in records.values())
    for seed in range(0, 900, 9):
        case = make_case(seed)
        assert kb.get_cases([case.case_id])[case.case_id].metrics == case.metrics
        assert kb.query(case.workflow, case.platform, k=1)[0].case_id == case.case_id
    print(f"\nqueries that found their probe while both wrote: a {done['a']['found']}/500,"
          f" b {done['b']['found']}/500")  # fmt: skip
