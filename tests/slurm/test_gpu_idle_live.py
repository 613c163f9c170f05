"""Idle-GPU jobs on the real cluster: asked about in `ask`, and cancelled only with approval.

n4's stand-in GPUs have no NVML, so a running GPU job's use is "not recorded" (sstat has no
gres/gpuutil): the answer says so and a cancel proposal is refused ("cannot tell it is idle").
Use data the cluster can really carry is a jobstats summary an administrator sets in the job's
AdminComment (`scontrol update job=J AdminComment=JS1:...`) giving 0%: then the proposal is
made, and the job is left running without an approval and with a wrong or replayed one; with
the proposal's own approval it is cancelled (sacct: CANCELLED), each decision logged.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.mcp_client import LiveClient, server_command, server_env, structured
from tests.slurm.conftest import Cluster, wait_for_final
from tests.support import no_settings_file
from wass_chat.analytics.gpu_usage import NOT_RECORDED
from wass_chat.slurm.commands import SlurmCommands

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]


def idle_summary(node: str) -> str:
    """A jobstats AdminComment: one GPU of ``node`` at 0%, none of its 40 GiB used."""
    data = {
        "gpus": 1,
        "total_time": 60,
        "nodes": {
            node: {
                "cpus": 1,
                "total_time": 60,
                "used_memory": 1,
                "total_memory": 2**30,
                "gpu_utilization": {"0": 0.0},
                "gpu_used_memory": {"0": 0},
                "gpu_total_memory": {"0": 40 * 2**30},
            }
        },
    }
    return "JS1:" + base64.b64encode(gzip.compress(json.dumps(data).encode())).decode()


def state(commands: SlurmCommands, job: str) -> str:
    return commands.run(["squeue", "-h", "-j", job, "-o", "%T"]).strip()


def running_gpu_job(commands: SlurmCommands, folder: Path) -> str:
    job = commands.sbatch(
        [
            "-N1",
            "-w",
            "n4",
            "--gres=gpu:1",
            "-c1",
            f"--output={folder}/%j.out",
            "--wrap=srun -n1 sleep 300",
        ]
    )
    for _ in range(60):
        if state(commands, job) == "RUNNING":
            break
        time.sleep(0.5)
    assert state(commands, job) == "RUNNING"
    return job


def test_idle_gpu_job_is_cancelled_only_with_its_own_approval(
    cluster: Cluster, tmp_path: Path
) -> None:
    commands = SlurmCommands()
    job = running_gpu_job(commands, tmp_path)
    home = tmp_path / "home"
    env = {
        **os.environ,
        "WASS_HOME": str(home),
        "WASS_CONFIG": no_settings_file(tmp_path),
        "WASS_GPU_IDLE_CANCEL_AFTER_MIN": "0.02",
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "wass_chat.cli", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    try:
        asked = cli("ask", "--offline", "--json", "which GPU jobs are idle right now?")
        assert asked.returncode == 0, asked.stderr
        facts = json.loads(asked.stdout)
        text = json.dumps(facts)
        assert "gpu_usage" in text and NOT_RECORDED in text
        assert f"job {job}" in text and "at 0%" not in text  # not recorded is never 0%

        refused = cli("gpu", "idle", "--propose-cancel", job)
        assert refused.returncode == 2 and "cannot tell it is idle" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        assert not (home / "gpu-idle" / "proposals").exists()

        commands.run(["scontrol", "update", f"job={job}", f"AdminComment={idle_summary('n4')}"])
        time.sleep(1.5)  # over the 0.02-minute setting
        made = cli("gpu", "idle", "--propose-cancel", job, "--json")
        assert made.returncode == 0, made.stderr
        plan = json.loads(made.stdout)
        assert plan["argv"] == ["scancel", job] and plan["utilisation_pct"] == 0
        assert any("AdminComment JS1" in line for line in plan["evidence"])
        ident, digest = plan["proposal_id"], plan["plan_digest"]
        assert state(commands, job) == "RUNNING"  # proposing did nothing

        wrong = cli("gpu", "approve", ident, "--digest", "0" * 64, "--yes")
        assert wrong.returncode == 2 and "nothing was" in wrong.stderr
        other = cli("gpu", "idle", "--propose-cancel", job, "--json")
        other_digest = json.loads(other.stdout)["plan_digest"]
        assert other_digest != digest  # each proposal its own digest
        crossed = cli("gpu", "approve", ident, "--digest", other_digest, "--yes")
        assert crossed.returncode == 2
        assert state(commands, job) == "RUNNING"

        approved = cli("gpu", "approve", ident, "--digest", digest, "--yes")
        assert approved.returncode == 0, approved.stderr
        final = wait_for_final([job], timeout=90, commands=commands)
        assert final[job]["State"].startswith("CANCELLED")

        replayed = cli("gpu", "approve", ident, "--digest", digest, "--yes")
        assert replayed.returncode == 2 and "already approved" in replayed.stderr
        log = [
            json.loads(x)
            for x in (home / "gpu-idle" / "decisions.jsonl").read_text().split("\n")
            if x
        ]
        events = [e["event"] for e in log]
        assert events.count("refused to propose") == 1 and events.count("approved") == 1
        assert events.count("approval refused") == 2 and events.count("proposed") == 2
    finally:
        subprocess.run(["scancel", job], check=False, capture_output=True)


def test_mcp_plan_cancel_idle_gpu_needs_the_persons_code(cluster: Cluster, tmp_path: Path) -> None:
    """The MCP flow of the same: plan_cancel_idle_gpu plans (refused while use is not
    recorded), complete_plan cancels only with the one-time code the person read."""
    commands = SlurmCommands()
    job = running_gpu_job(commands, tmp_path)
    home = tmp_path / "home"
    env = {**server_env(home, no_settings_file(tmp_path)), "WASS_GPU_IDLE_CANCEL_AFTER_MIN": "0.02"}
    client = LiveClient(server_command(env, "--approval", "code"), errlog=tmp_path / "stderr.txt")
    try:
        listed = {t.name for t in client.run(lambda s: s.list_tools()).tools}
        assert {"gpu_usage", "plan_cancel_idle_gpu"} <= listed
        blind = structured(client.call("plan_cancel_idle_gpu", job=job))
        assert blind["error"] and "cannot tell it is idle" in blind["error"], blind
        commands.run(["scontrol", "update", f"job={job}", f"AdminComment={idle_summary('n4')}"])
        time.sleep(1.5)  # over the 0.02-minute setting
        plan = structured(client.call("plan_cancel_idle_gpu", job=job))
        assert plan["error"] is None and plan["verified"], plan["problems"]
        assert plan["facts"]["argv"] == ["scancel", job] and "scancel" in plan["answer"]
        wrong = structured(
            client.call("complete_plan", plan_id=plan["plan_id"], approval_code="ABCD-EFGH")
        )
        assert wrong["error"] and state(commands, job) == "RUNNING"
        text = (home / "mcp" / "approval-codes.txt").read_text()
        code = dict(re.findall(r"approval code for plan (\S+) \(digest \w+\): (\S+)", text))
        done = structured(
            client.call(
                "complete_plan", plan_id=plan["plan_id"], approval_code=code[plan["plan_id"]]
            )
        )
        assert done["error"] is None and done["facts"]["cancelled"] == [job], done
        assert wait_for_final([job], timeout=90)[job]["State"].startswith("CANCELLED")
        replay = structured(
            client.call(
                "complete_plan", plan_id=plan["plan_id"], approval_code=code[plan["plan_id"]]
            )
        )
        assert replay["error"] and "no plan" in replay["error"]
    finally:
        client.close()
        subprocess.run(["scancel", job], check=False, capture_output=True)
