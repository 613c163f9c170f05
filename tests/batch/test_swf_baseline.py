"""The SWF figure's commands on a real log: the first 400 jobs of the SDSC SP2 log (1998, 128
processors; tests/batch/data/swf/README.md), whose recorded waits judge the replay.

The recorded mean wait is worked out here from the file's own field 3 (jobs with a run time),
not by the reader; `validate-swf` and `whatif cluster --swf` must report that figure, and the
what-if gives a difference only if its unchanged replay comes within 25% of it (on this
excerpt it does not: EASY waits less than half as long as the SP2 did).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wass_chat.batch.baseline_match import BASELINE_TOLERANCE
from wass_chat.cli import main

LOG = Path(__file__).parent / "data" / "swf" / "SDSC-SP2-1998-first400.swf"


def recorded_waits() -> list[float]:
    """Field 3 of every job that ran (field 4 > 0) and has a recorded wait."""
    rows = [line.split() for line in LOG.read_text().splitlines() if not line.startswith(";")]
    return [float(r[2]) for r in rows if float(r[3]) > 0 and float(r[2]) >= 0]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_validate_swf_reports_the_logs_own_waits(capsys: pytest.CaptureFixture[str]) -> None:
    waits = recorded_waits()
    report = run(capsys, "whatif", "validate-swf", str(LOG))
    assert report["with_recorded_wait"] == len(waits) == 374
    easy = report["runs"]["fifo-easy"]
    assert easy["recorded_waits"]["mean_s"] == pytest.approx(sum(waits) / len(waits))
    assert 0.0 < easy["within_tolerance"] < report["no_queue_reference"]["within_tolerance"]
    assert easy["simulated_waits"]["mean_s"] < easy["recorded_waits"]["mean_s"] / 2


def test_the_what_if_on_the_log_refuses_a_difference_its_baseline_cannot_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    waits = recorded_waits()
    report = run(capsys, "whatif", "cluster", "--swf", str(LOG), "--add-nodes", "pool:1")
    check = report["baseline_check"]
    assert check["recorded_wait_mean_s"] == pytest.approx(sum(waits) / len(waits))
    assert check["ratio"] < 1 - BASELINE_TOLERANCE and not check["matches"]
    assert "difference" not in report and "variant" not in report
    assert check["calibration"] == [
        "every job held at least 1 s after it became eligible, the shortest recorded"
    ]
