"""``wass-chat mcp``: its help, its bad options (one line, exit 2), and its approval codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import no_settings_file
from wass_chat.mcp_server.approval_codes import MAX_ATTEMPTS, ApprovalCodes, ApprovalRefused
from wass_chat.mcp_server.audit_log import AuditLog, Caller


def _mcp(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "WASS_HOME": str(tmp_path / "home"),
        "WASS_CONFIG": no_settings_file(tmp_path),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    return subprocess.run(
        [sys.executable, "-m", "wass_chat.cli", "mcp", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_help_names_the_transports_and_the_approval(tmp_path: Path) -> None:
    done = _mcp(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    for words in (
        "--transport",
        "--read-only",
        "--token-file",
        "one-time code",
        "one server per user",
    ):
        assert words in text, words


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--transport", "pigeon"], "'pigeon' is not stdio or http"),
        (["--approval", "nod"], "'nod' is not auto or code"),
        (["--transport", "http", "--port", "0"], "is not a port"),
        (["--transport", "http", "--host", "0.0.0.0"], "needs a bearer token"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(tmp_path: Path, args: list[str], said: str) -> None:
    done = _mcp(tmp_path, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and said in done.stderr, done.stderr


def test_a_code_is_single_use_bound_to_its_plan_and_few_tries() -> None:
    shown: dict[str, tuple[str, str]] = {}
    codes = ApprovalCodes(lambda plan, digest, code: shown.__setitem__(plan, (digest, code)))
    codes.issue("plan-a", "digest-a")
    codes.issue("plan-b", "digest-b")
    code_a, code_b = shown["plan-a"][1], shown["plan-b"][1]
    with pytest.raises(ApprovalRefused, match="not the code"):
        codes.redeem("plan-b", code_a)  # another plan's code
    assert codes.redeem("plan-a", code_a.lower().replace("-", "")) == "digest-a"  # as typed
    with pytest.raises(ApprovalRefused, match="no approval code"):
        codes.redeem("plan-a", code_a)  # replayed
    for _ in range(MAX_ATTEMPTS - 1):
        with pytest.raises(ApprovalRefused):
            codes.redeem("plan-b", "AAAA-AAAA")
    assert codes.dropped("plan-b")  # three wrong codes in all: the plan's code is gone
    with pytest.raises(ApprovalRefused):
        codes.redeem("plan-b", code_b)


def test_the_audit_log_appends_and_never_writes_a_code(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "mcp" / "audit.jsonl")
    who = Caller("alice", "client", "http", "10.0.0.1:5000")
    log.record(who, "job_why", {"jobid": "42"}, "ok")
    log.record(who, "complete_plan", {"plan_id": "p", "approval_code": "K7QF-M2XD"}, "refused: x")
    entries = log.entries()
    assert [e["tool"] for e in entries] == ["job_why", "complete_plan"]
    assert entries[1]["arguments"] == {"plan_id": "p", "approval_code": "<given>"}
    assert "K7QF" not in log.path.read_text()
    assert log.path.stat().st_mode & 0o077 == 0
