"""``wass-chat ask`` for scripts: JSON with answer, facts, cited ids and mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.conftest import UNREACHABLE, SbatchRecorder
from tests.agent.fake_ollama import MODEL, FakeOllama, Reply
from wass_chat.cli import main

pytestmark = pytest.mark.xdist_group("agent-home")


def run_ask(
    args: list[str],
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    host: str = UNREACHABLE,
) -> dict[str, object]:
    monkeypatch.setenv("WASS_HOME", str(home))
    monkeypatch.setenv("WASS_OLLAMA_HOST", host)
    from wass_chat.config import settings

    settings.cache_clear()
    try:
        assert main(["ask", *args, "--json"]) == 0
    finally:
        settings.cache_clear()
    document: dict[str, object] = json.loads(capsys.readouterr().out)
    return document


def test_ask_json_answers_offline_with_facts_and_cited_ids(
    agent_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run_ask(
        ["why did task merge_bams of run demo-genomics-49-heft go to gpu02?"],
        agent_home,
        monkeypatch,
        capsys,
    )
    assert out["mode"] == "offline" and out["verified"] is True
    facts = out["facts"]
    assert isinstance(facts, dict) and facts["kind"] == "placement"
    cited = out["cited_ids"]
    assert isinstance(cited, list) and "demo-genomics-49-heft" in cited and len(cited) >= 4
    assert "merge_bams" in str(out["answer"])


def test_ask_submit_without_yes_never_submits(
    tmp_path: Path,
    sbatch: SbatchRecorder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run_ask(["submit fork-join-20", "--offline"], tmp_path / "home", monkeypatch, capsys)
    approval = out["approval"]
    assert isinstance(approval, dict) and approval["decision"] == "reject"
    assert sbatch.calls() == []
    out = run_ask(
        ["submit fork-join-20", "--offline", "--yes"], tmp_path / "home", monkeypatch, capsys
    )
    approval = out["approval"]
    assert isinstance(approval, dict) and approval["decision"] == "approve"
    assert len(sbatch.calls()) == 20


def test_yes_does_not_approve_a_plan_the_question_did_not_ask_for(
    tmp_path: Path,
    sbatch: SbatchRecorder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = [Reply(tool_calls=[("submit_workflow", {"workflow": "fork-join-20"})]), Reply("ok")]
    with FakeOllama(script) as server:
        monkeypatch.setenv("WASS_OLLAMA_MODEL", MODEL)
        out = run_ask(
            ["what is the cluster status?", "--yes"],
            tmp_path / "home",
            monkeypatch,
            capsys,
            host=server.url,
        )
    assert out["mode"] == "ollama"
    approval = out["approval"]
    assert isinstance(approval, dict) and approval["decision"] == "reject"
    assert sbatch.calls() == []
