"""``wass-chat mcp --read-only`` over stdio without a cluster, through the SDK's client: the
workflow tools answer as ``ask`` does, the gated tools do not exist, and a bad prompt argument
is a protocol error. (The cluster's questions and the approvals: tests/slurm/test_mcp_live.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.mcp_client import LiveClient, server_command, server_env, structured
from tests.support import no_settings_file


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveClient, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("mcp-stdio")
    env = server_env(folder / "home", no_settings_file(folder))
    env.pop("SLURM_CONF", None)
    live = LiveClient(server_command(env, "--read-only"), errlog=folder / "stderr.txt")
    yield live, env
    live.close()


def test_a_simulation_is_the_answer_ask_gives(setup: tuple[LiveClient, dict[str, str]]) -> None:
    client, env = setup
    out = structured(client.call("simulate", workflow="montage-60", scheduler="heft"))
    assert out["error"] is None and out["verified"], out["problems"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "wass_chat.cli",
            "ask",
            "--offline",
            "--json",
            "/simulate montage-60 scheduler=heft",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    asked = json.loads(done.stdout)
    assert out["answer"] == asked["answer"]
    assert out["facts"]["baseline"] == asked["facts"]["baseline"]


def test_read_only_has_no_gated_tool(setup: tuple[LiveClient, dict[str, str]]) -> None:
    client, _ = setup
    names = {t.name for t in client.run(lambda s: s.list_tools()).tools}
    assert "job_why" in names and not names & {"plan_submit", "plan_cancel", "complete_plan"}
    refused = structured(client.call("complete_plan", plan_id="apr-1"))
    assert "this server is read-only" in refused["error"]
    audit = (Path(setup[1]["WASS_HOME"]) / "mcp" / "audit.jsonl").read_text().splitlines()
    last = json.loads(audit[-1])
    assert last["tool"] == "complete_plan" and last["outcome"].startswith("error: no tool named")


def test_a_prompt_needs_a_job_id(setup: tuple[LiveClient, dict[str, str]]) -> None:
    client, _ = setup
    with pytest.raises(MCPError, match="needs a Slurm job id"):
        client.run(lambda s: s.get_prompt("explain_job", {"jobid": "42; scancel -u root"}))
