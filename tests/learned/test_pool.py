"""Pooling held-out results across training seeds (`wass-chat train pool`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from policy.learned.evaluate import pool_runs
from wass_chat.cli import main


def test_pooling_takes_every_instance_once_and_pairs_by_label() -> None:
    seed0 = {"native": {"a#0": 1.0, "b#0": 0.9}, "ccr1": {"c#0": 0.5}}
    seed1 = {"native": {"a#1": 1.1, "b#1": 1.0}}
    base0 = {"native": {"a#0": 1.0, "b#0": 1.0}, "ccr1": {"c#0": 1.0}}
    pooled = pool_runs([seed0, seed1], [base0])
    assert list(pooled) == ["native", "ccr1", "all"]  # the runs' own order, then everything
    native = pooled["native"]
    assert (native.runs, native.instances) == (2, 4)
    assert native.ratio_gm == pytest.approx(math.exp((math.log(0.9) + math.log(1.1)) / 4))
    assert (native.wins, native.ties, native.losses) == (1, 2, 1)
    assert native.ci_low < native.ratio_gm < native.ci_high
    # Only seed 0's instances have a baseline: b#0 is 0.9x it, a#0 equal.
    assert native.paired_instances == 2
    assert native.paired is not None
    assert native.paired[0] == pytest.approx(math.sqrt(0.9))
    assert pooled["ccr1"].runs == 1 and pooled["ccr1"].paired == (0.5, 0.5, 0.5)
    everything = pooled["all"]
    assert (everything.runs, everything.instances, everything.paired_instances) == (2, 5, 3)
    assert everything.ratio_gm == pytest.approx(math.exp(math.log(0.9 * 1.1 * 0.5) / 5))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """One command run in-process (a subprocess would import torch again: ~10 s under load)."""
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_pool_reads_what_train_evaluate_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, err = cli(
        capsys,
        "train",
        "evaluate",
        "--untrained",
        "--instances",
        "2",
        "--recipes",
        "srasearch",
        "--ccrs",
        "1",
        "--json",
    )
    assert code == 0, err
    result = tmp_path / "untrained.json"
    result.write_text(stdout)
    evaluated = json.loads(stdout)["ccr1"]
    code, stdout, err = cli(
        capsys, "train", "pool", str(result), "--baseline", str(result), "--json"
    )
    assert code == 0, err
    data = json.loads(stdout)["ccr1"]
    assert data["instances"] == evaluated["instances"] == 2
    assert data["ratio_gm"] == pytest.approx(evaluated["ratio_gm"])
    assert data["paired"] == pytest.approx([1.0, 1.0, 1.0])  # against itself


def test_a_result_without_per_instance_ratios_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"native": {"ratio_gm": 1.0}}))
    for bad in (summary, tmp_path / "missing.json"):
        code, _, err = cli(capsys, "train", "pool", str(bad))
        assert code == 2, err
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: invalid input"), err
