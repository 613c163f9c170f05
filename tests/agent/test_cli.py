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
    # Slurm away: the plan is the demo platform's, which --yes never approves (#45; the
    # positive control is on the live cluster, tests/slurm/test_demo_plans_live.py)
    out = run_ask(
        ["submit fork-join-20", "--offline", "--yes"], tmp_path / "home", monkeypatch, capsys
    )
    approval = out["approval"]
    assert isinstance(approval, dict) and approval["decision"] == "reject"
    assert "live cluster's nodes" in str(approval["refused"])
    assert sbatch.calls() == []


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


def test_yes_refuses_a_plan_for_another_file_than_the_question_named(
    tmp_path: Path,
    sbatch: SbatchRecorder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """#45 item 3: a model obeying injected text proposes another file; ``--yes`` approved it
    (2 of 2 jobs ran a command as root). Now it is refused in one line and nothing is sent."""
    from sim.model import Task, Workflow
    from sim.wfformat import write_workflow

    evil = tmp_path / "other.json"
    marker = tmp_path / "ran-as-root"
    tasks = tuple(Task(f"t{i}", 1e9, command=("touch", str(marker))) for i in range(2))
    write_workflow(Workflow("other", tasks, ()), evil)
    script = [Reply(tool_calls=[("submit_workflow", {"workflow": str(evil)})]), Reply("Done.")]
    with FakeOllama(script) as server:
        monkeypatch.setenv("WASS_OLLAMA_MODEL", MODEL)
        out = run_ask(
            ["submit demo:fork-join-20", "--yes"],
            tmp_path / "home",
            monkeypatch,
            capsys,
            host=server.url,
        )
    assert out["mode"] == "ollama" and out["tool_calls"][0]["arguments"] == {"workflow": str(evil)}
    approval = out["approval"]
    assert isinstance(approval, dict) and approval["decision"] == "reject"
    refused = str(approval["refused"])
    assert "`fork-join-20`" in refused and "other.json" in refused and "\n" not in refused
    assert sbatch.calls() == [] and not marker.exists()
    assert not list((tmp_path / "home").rglob("runs/run-*.json"))


def test_yes_passes_the_named_file_but_not_its_plan_on_the_demo_platform(
    tmp_path: Path,
    sbatch: SbatchRecorder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The control of the test above: the model proposes the named workflow, which passes the
    workflow check; with Slurm away it was planned on the demo platform, so it is refused for
    that alone (the live positive control: tests/slurm/test_demo_plans_live.py)."""
    script = [
        Reply(tool_calls=[("submit_workflow", {"workflow": "demo:fork-join-20"})]),
        Reply("Done."),
    ]
    with FakeOllama(script) as server:
        monkeypatch.setenv("WASS_OLLAMA_MODEL", MODEL)
        out = run_ask(
            ["submit demo:fork-join-20", "--yes"],
            tmp_path / "home",
            monkeypatch,
            capsys,
            host=server.url,
        )
    approval = out["approval"]
    assert isinstance(approval, dict) and approval["decision"] == "reject", approval
    refused = str(approval["refused"])
    assert "live cluster's nodes" in refused and "different workflow" not in refused
    assert sbatch.calls() == []


def test_the_printed_answer_has_one_truthful_outcome_line(
    tmp_path: Path,
    sbatch: SbatchRecorder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Not 'Nothing has been submitted' right above 'Submitted run': the outcome replaces it.
    Here the outcome is the refusal of a demo-platform plan (Slurm away); the submitted one is
    checked on the live cluster (tests/slurm/test_demo_plans_live.py)."""
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_OLLAMA_HOST", UNREACHABLE)
    monkeypatch.setenv("COLUMNS", "200")
    from wass_chat.config import settings

    settings.cache_clear()
    try:
        assert main(["ask", "submit fork-join-20", "--offline", "--yes"]) == 0
    finally:
        settings.cache_clear()
    out, err = capsys.readouterr()
    assert "Submitted run" not in out
    assert "Refused: --yes approves only a plan on the live cluster's nodes" in err
    assert "--mem=" in out and "--time=" in out  # each job's sbatch options are shown
    assert sbatch.calls() == []


def test_yes_never_approves_a_plan_on_a_platform_file_either(
    tmp_path: Path,
    sbatch: SbatchRecorder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--yes`` covers the named workflow's plan on the live cluster's nodes only: a plan on a
    platform file (here the demo's nodes under another name) needs a person's approval."""
    from tests.agent.conftest import submit_on_site

    out = run_ask(
        [submit_on_site(tmp_path), "--offline", "--yes"], tmp_path / "home", monkeypatch, capsys
    )
    approval = out["approval"]
    assert isinstance(approval, dict) and approval["decision"] == "reject"
    assert "live cluster's nodes" in str(approval["refused"]) and "site-cluster" in str(
        approval["refused"]
    )
    assert sbatch.calls() == []
