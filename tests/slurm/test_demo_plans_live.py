"""A plan made on the embedded demo platform never reaches Slurm (#45 item 3, on the live cluster).

The demo platform's nodes (cpu01..gpu02) are not the cluster's: ``ask --yes`` on a plan the chat
made there (the model or the question asked for ``platform=demo``, or Slurm did not answer while
planning) is refused in one line, as is ``submit --platform demo --yes``; squeue is unchanged and
no run is logged. ``--yes`` still approves the named workflow's plan on the cluster's own nodes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.slurm.conftest import Cluster
from wass_chat.slurm.commands import SlurmCommands

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]

UNREACHABLE = "http://127.0.0.1:9"


def cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WASS_HOME": str(home), "WASS_OLLAMA_HOST": UNREACHABLE}
    return subprocess.run(
        [sys.executable, "-m", "wass_chat.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def queue() -> list[str]:
    """Every job Slurm holds, with its name."""
    return sorted(SlurmCommands().run(["squeue", "-h", "--states=all", "-o", "%i %j"]).split("\n"))


def test_demo_platform_plans_are_never_submitted_and_yes_approves_only_the_live_plan(
    cluster: Cluster, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    before = queue()
    done = cli(home, "ask", "/submit fork-join-20 platform=demo", "--offline", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    approval = json.loads(done.stdout)["approval"]
    assert approval["decision"] == "reject", approval
    assert "live cluster's nodes" in approval["refused"] and "\n" not in approval["refused"]
    done = cli(home, "submit", "demo:fork-join-20", "--platform", "demo", "--yes")
    assert done.returncode == 2 and "embedded demo platform" in done.stderr, done.stderr
    assert "\n" not in done.stderr.strip()
    # nothing reached Slurm (jobs other tests ended may leave squeue --states=all meanwhile)
    assert set(queue()) <= set(before), set(queue()) - set(before)
    assert not list((home / "runs").glob("*.json"))  # no run logged (the demo's are apart)
    # The positive control: the named workflow's plan on the cluster's nodes is submitted,
    # and the printed answer has one outcome line
    done = cli(home, "ask", "submit fork-join-20", "--offline", "--yes")
    assert done.returncode == 0, done.stderr
    assert "Submitted run" in done.stdout and "Nothing has been submitted" not in done.stdout
    (record,) = (home / "runs").glob("*.json")
    run_id = record.stem
    try:
        names = [line.split()[1] for line in queue() if line and line not in before]
        assert len(names) == 20 and all(n.startswith(f"wass-{run_id}-") for n in names)
    finally:
        done = cli(home, "cancel", run_id, "--yes")
    assert done.returncode == 0 and "cancelled 20 jobs" in done.stdout, done.stdout
