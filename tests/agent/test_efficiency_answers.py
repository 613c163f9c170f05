"""Efficiency questions asked in words: routed to the efficiency tool, answered from the same
code as `wass-chat sacct efficiency` and the report, on another site's real export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.agent.conftest import UNREACHABLE
from tests.analytics.test_cli import HB, HB_FORMAT
from tests.support import no_settings_file
from wass_chat.cli import main
from wass_chat.config import settings

pytestmark = pytest.mark.xdist_group("agent-home")


@pytest.fixture
def site_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose accounting cache holds the hb-jobinfo export; Slurm is away (no sacct on
    PATH: the answers come from the cache and say so)."""
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_CONFIG", no_settings_file(tmp_path))
    monkeypatch.setenv("WASS_OLLAMA_HOST", UNREACHABLE)
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    settings.cache_clear()
    assert main(["sacct", "import", "--from-file", str(HB), "--format", HB_FORMAT]) == 0
    yield tmp_path
    settings.cache_clear()


def ask(question: str, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["ask", "--offline", "--json", question]) == 0
    return json.loads(capsys.readouterr().out)


def test_one_jobs_efficiency_in_words(site_home: Path, capsys: pytest.CaptureFixture[str]):
    out = ask("how efficient was job 7951797?", capsys)
    assert out["tool_calls"] == [{"name": "efficiency", "arguments": {"jobid": "7951797"}}]
    [job] = out["facts"]["jobs"]
    capsys.readouterr()
    assert main(["sacct", "efficiency", "7951797", "--no-live", "--json"]) == 0
    assert [job] == json.loads(capsys.readouterr().out)  # the same figures as the command
    answer = out["answer"]
    assert "25.5% of its memory" in answer and "99.3% of its 128 CPUs" in answer
    assert "--mem-per-cpu=128M" in answer  # advice, never below the 8.16G it used


def test_period_efficiency_and_top_wasters(site_home: Path, capsys: pytest.CaptureFixture[str]):
    out = ask("which users wasted the most core-hours in april 2024?", capsys)
    assert out["tool_calls"][0]["name"] == "efficiency"
    facts = out["facts"]
    top = facts["top_wasters"][0]
    assert top["user"] == "user2" and facts["period"] == "April 2024"
    assert f"{top['wasted_core_hours']:,.1f} core-hours" in out["answer"]
    assert "allocated CPU time left idle" in out["answer"]  # the ranking is defined
    assert "answered from the local cache: Slurm is not installed here" in facts["note"]
    wasted = [w["wasted_core_hours"] for w in facts["top_wasters"]]
    assert wasted == sorted(wasted, reverse=True) and all(w > 0 for w in wasted)


def test_cpu_efficiency_of_a_month_is_not_a_job_id(
    site_home: Path, capsys: pytest.CaptureFixture[str]
):
    out = ask("what was the cpu efficiency in january 2024?", capsys)
    assert out["tool_calls"] == [
        {"name": "efficiency", "arguments": {"period": "2024-01", "count": 5}}
    ]
    summary = out["facts"]["summary"]
    assert summary["measured_jobs"] == 2
    assert re.search(rf"{summary['cpu_efficiency_pct']:.1f}% of the", out["answer"])


def test_unrecorded_usage_is_said_not_guessed(site_home: Path, capsys: pytest.CaptureFixture[str]):
    out = ask("seff 5908801_3", capsys)
    [job] = out["facts"]["jobs"]
    assert job["usage_recorded"] is False
    assert "no usage" in out["answer"] and "0.0%" not in out["answer"]


def test_a_period_without_jobs_says_where_the_jobs_are(
    site_home: Path, capsys: pytest.CaptureFixture[str]
):
    """Not "import accounting": the cache has jobs, only not in the period asked about."""
    out = ask("which users wasted the most cpu in march 2019?", capsys)
    assert out["facts"]["summary"]["measured_jobs"] == 0
    answer = " ".join(out["answer"].split())
    assert "No job ran in March 2019" in answer and "sacct import" not in answer
    held = re.search(r"holds ([\d,]+) jobs submitted (\S+) to (\S+): ask", answer)
    assert held, answer
