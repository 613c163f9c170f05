"""The chat's cluster what-if on the live cluster drains the queue as it stands now.

Eighteen 2-CPU jobs fill the 16 CPUs of the local cluster (nodes of 2, 2, 4 and 8 CPUs) with
eight and leave ten pending; "what if we add 2 nodes to the debug partition?" then replays the
jobs running and pending now (``scontrol show job``) on the live cluster. Without the change
eight of the ten start when the running jobs reach their 4-minute limit and the last two a
limit later; two more 2-CPU nodes start two at once and the other eight at the first limit,
so the queue drains a whole limit sooner. The accounting's past
is replayed too (its own baseline check), and every number of the answer is in its facts.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.agent.conftest import UNREACHABLE
from tests.slurm.conftest import Cluster
from tests.support import no_settings_file
from wass_chat.answers.checks.answer_check import problems
from wass_chat.cli import main
from wass_chat.config import settings

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]

JOBS, RUNNING = 18, 8


def squeue_states(job_ids: list[str]) -> list[str]:
    out = subprocess.run(
        ["squeue", "-h", "-j", ",".join(job_ids), "-o", "%T"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


def test_adding_nodes_drains_the_pending_queue_sooner(
    cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_CONFIG", no_settings_file(tmp_path))
    monkeypatch.setenv("WASS_OLLAMA_HOST", UNREACHABLE)
    settings.cache_clear()
    submit = [
        "sbatch",
        "--parsable",
        "-p",
        "debug",
        "-N1",
        "-n2",
        "--mem=100M",
        "-t",
        "4",
        "--wrap",
        "sleep 200",
    ]
    ids = [
        subprocess.run(submit, capture_output=True, text=True, check=True).stdout.split(";")[0]
        for _ in range(JOBS)
    ]
    ids = [i.strip() for i in ids]
    try:
        for _ in range(60):  # the main scheduler starts the eight that fit within seconds
            if squeue_states(ids).count("RUNNING") == RUNNING:
                break
            time.sleep(1)
        assert squeue_states(ids).count("RUNNING") == RUNNING
        capsys.readouterr()
        question = "what if we add 2 nodes to the debug partition?"
        assert main(["ask", "--offline", "--json", question]) == 0
        out = json.loads(capsys.readouterr().out)
    finally:
        subprocess.run(["scancel", *ids], check=False)
        settings.cache_clear()
    facts = out["facts"]
    assert facts["cluster"] == "live (scontrol)" and facts["changes"] == ["+2 nodes in debug"]
    q = facts["queue_now"]
    assert (q["running"], q["pending"], q["replayed_pending"]) == (RUNNING, 10, 10)
    before, after = q["before"], q["after"]
    assert before["starting_now"] == 0 and after["starting_now"] == 2
    limit = 240
    assert limit - 60 < before["last_start_from_now_s"] - after["last_start_from_now_s"] <= limit
    assert after["last_start_from_now_s"] <= limit
    assert after["mean_start_from_now_s"] < before["mean_start_from_now_s"]
    assert q["starting_sooner"] >= 4 and q["starting_later"] == 0
    answer = out["answer"]
    assert "the 10 jobs pending now would all have started within" in answer
    assert "**The queue now** (live): 8 running jobs, 10 pending" in answer
    assert problems(answer, facts) == []
