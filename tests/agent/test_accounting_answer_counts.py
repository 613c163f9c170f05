"""The accounting summary answer gives one pending count (issue 41 item 5): its statistics and
its pending insight both count the jobs waiting at the period's end. Before, the statistic was
the jobs whose state is PENDING now (0 here: every synthetic job has long finished) beside the
insight's 7 still pending when the period ended."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from tests.agent.conftest import UNREACHABLE
from tests.support import no_settings_file
from wass_chat.answers.checks.answer_check import contradictions
from wass_chat.cli import main
from wass_chat.config import settings
from wass_chat.sacct.render import write_sacct_file
from wass_chat.sacct.synth import synthesize

pytestmark = pytest.mark.xdist_group("agent-home")


@pytest.fixture
def synthetic_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose cache holds 3,000 synthetic jobs of 2024-01-01 to 01-11; Slurm is away."""
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WASS_CONFIG", no_settings_file(tmp_path))
    monkeypatch.setenv("WASS_OLLAMA_HOST", UNREACHABLE)
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    settings.cache_clear()
    export = tmp_path / "export.txt"
    write_sacct_file(synthesize(3000, seed=7, start=datetime(2024, 1, 1), days=10), export)
    assert main(["sacct", "import", "--from-file", str(export)]) == 0
    yield tmp_path
    settings.cache_clear()


def test_one_pending_count_for_a_period_that_ended_mid_queue(
    synthetic_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["ask", "--offline", "--json", "/sacct 2024-01-01..2024-01-05T12:00"]) == 0
    answer = json.loads(capsys.readouterr().out)["answer"]
    statistic = re.search(r"pending at the period's end: (\d+)", answer)
    insight = re.search(r"(\d+) jobs? (?:was|were) still pending at the end", answer)
    assert statistic and insight, answer
    assert statistic.group(1) == insight.group(1) != "0"
    assert contradictions(answer) == []
