"""Cross-run comparisons of the bench under estimates (`estimates compare`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policy.bench.compare import compare_runs, guard_check, makespans
from wass_chat.cli import main


def _document(values: dict[str, list[float]]) -> dict:
    records = [
        {"scheduler": s, "instance": f"i{k}", "makespan": v}
        for s, row in values.items()
        for k, v in enumerate(row)
    ]
    return {"records": records}


USER = _document(
    {
        "heft": [100.0, 200.0, 300.0],
        "peft": [90.0, 210.0, 300.0],
        "policy": [80.0, 180.0, 270.0],
        "policy-norag": [100.0, 180.0, 300.0],
        "rag-guarded": [90.0, 205.0, 300.0],
    }
)
KB = _document({"heft": [50.0, 100.0, 150.0], "policy": [50.0, 100.0, 150.0]})


def test_ratios_pair_instances_within_and_across_modes() -> None:
    result = compare_runs({"user": USER, "kb": KB})
    user = result["modes"]["user"]
    assert user["over_heft"]["policy"]["value"] == pytest.approx((0.8 * 0.9 * 0.9) ** (1 / 3))
    assert user["over_heft"]["policy"]["wins"] == 3
    assert user["rag_over_norag"]["value"] == pytest.approx((0.8 * 1.0 * 0.9) ** (1 / 3))
    across = result["versus_heft_on_kb"]["user"]["policy"]
    assert across["value"] == pytest.approx((1.6 * 1.8 * 1.8) ** (1 / 3))
    assert across["losses"] == 3
    assert "rag_over_norag" not in result["modes"]["kb"]


def test_guard_check_counts_losses_to_the_better_classic() -> None:
    guard = guard_check(makespans(USER))
    assert guard is not None
    assert guard["losses"] == 1  # 205 against min(200, 210)
    assert guard["worst"] == pytest.approx(205 / 200)
    assert guard_check(makespans(KB)) is None


def test_the_guard_is_also_held_to_choosing_between_the_classics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _document(
        {
            "heft": [100.0, 200.0, 300.0],
            "peft": [90.0, 210.0, 300.0],
            "heft-or-peft": [100.0, 200.0, 300.0],
            "rag-guarded": [90.0, 205.0, 310.0],
        }
    )
    entry = compare_runs({"user": run})["modes"]["user"]
    assert entry["chooser"]["losses"] == 1  # picked HEFT's 100 where PEFT ran 90
    assert entry["chooser"]["worst"] == pytest.approx(100 / 90)
    versus = entry["guard_over_chooser"]
    assert versus["losses"] == 2 and versus["worst"] == pytest.approx(310 / 300)
    assert versus["ratio"]["value"] == pytest.approx((0.9 * 1.025 * 310 / 300) ** (1 / 3))
    assert compare_runs({"kb": KB})["modes"]["kb"]["chooser"] is None
    path = tmp_path / "user.json"
    path.write_text(json.dumps(run))
    assert main(["estimates", "compare", f"user={path}"]) == 0
    assert "rag-guarded / heft-or-peft: 2 losses of 3" in capsys.readouterr().out


def test_compare_command_reads_runs_and_rejects_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user, kb = tmp_path / "user.json", tmp_path / "kb.json"
    user.write_text(json.dumps(USER))
    kb.write_text(json.dumps(KB))
    assert main(["estimates", "compare", f"user={user}", f"kb={kb}", "--print-json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["modes"]["user"]["guard"]["losses"] == 1
    assert main(["estimates", "compare", f"user={user}", str(kb)]) == 2
    assert "MODE=FILE" in capsys.readouterr().err


def test_baseline_pairs_each_scheduler_with_itself_in_another_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = compare_runs({"busy": USER, "idle": KB}, baseline="idle")
    assert set(result["versus_baseline"]) == {"busy"}
    cells = result["versus_baseline"]["busy"]
    assert set(cells) == {"heft", "policy"}  # the schedulers both runs have
    assert cells["heft"]["value"] == pytest.approx(2.0) and cells["heft"]["losses"] == 3
    busy, idle = tmp_path / "busy.json", tmp_path / "idle.json"
    busy.write_text(json.dumps(USER))
    idle.write_text(json.dumps(KB))
    argv = ["estimates", "compare", f"busy={busy}", f"idle={idle}"]
    assert main([*argv, "--baseline", "idle"]) == 0
    assert "busy over the baseline" in capsys.readouterr().out
    assert main([*argv, "--baseline", "nowhere"]) == 2
    assert "--baseline 'nowhere'" in capsys.readouterr().err


def test_a_mode_pools_runs_and_pairs_them_in_order_with_another_modes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    busy_user = _document({"heft": [100.0, 100.0, 100.0], "policy": [50.0, 100.0, 100.0]})
    busy_kb = _document({"heft": [25.0, 50.0, 50.0], "policy": [25.0, 50.0, 50.0]})
    result = compare_runs({"user": [USER, busy_user], "kb": [KB, busy_kb]})
    assert result["runs"] == {"user": 2, "kb": 2}
    over = result["modes"]["user"]["over_heft"]["policy"]
    assert over["count"] == 6 and over["instances"] == 3  # i0-i2, each under two loads
    assert over["value"] == pytest.approx((0.8 * 0.9 * 0.9 * 0.5 * 1 * 1) ** (1 / 6))
    assert (over["wins"], over["losses"]) == (4, 0)
    # the first runs pair with each other, the second with each other: 80/50, ..., 50/25, ...
    on_kb = result["versus_heft_on_kb"]["user"]["policy"]
    assert on_kb["value"] == pytest.approx((1.6 * 1.8 * 1.8 * 2 * 2 * 2) ** (1 / 6))
    argv = ["estimates", "compare", "--print-json"]
    for k, (mode, doc) in enumerate(
        (("user", USER), ("user", busy_user), ("kb", KB), ("kb", busy_kb))
    ):
        path = tmp_path / f"{k}.json"
        path.write_text(json.dumps(doc))
        argv.append(f"{mode}={path}")
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == {"user": 2, "kb": 2}


def test_seeds_pick_instances_and_bad_ones_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [
        {"scheduler": s, "instance": f"w|p|seed{seed}", "seed": seed, "makespan": v * (seed + 1)}
        for seed in range(4)
        for s, v in (("heft", 100.0), ("policy", 90.0 if seed < 2 else 120.0))
    ]
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"records": records}))
    assert main(["estimates", "compare", f"user={path}", "--seeds", "2-3", "--print-json"]) == 0
    development = json.loads(capsys.readouterr().out)["modes"]["user"]["over_heft"]["policy"]
    assert development["count"] == 2 and development["value"] == pytest.approx(1.2)
    assert main(["estimates", "compare", f"user={path}", "--seeds", "0,1", "--print-json"]) == 0
    assert json.loads(capsys.readouterr().out)["modes"]["user"]["over_heft"]["policy"][
        "value"
    ] == pytest.approx(0.9)
    for bad, said in (("3-1", "runs backwards"), ("x", "is not N or A-B"), ("7", "no instance")):
        assert main(["estimates", "compare", f"user={path}", "--seeds", bad]) == 2
        assert said in capsys.readouterr().err


def test_expected_makespans_are_compared_only_where_the_bench_reran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = _document(
        {"heft": [100.0, 200.0], "peft": [110.0, 190.0], "rag-guarded": [109.0, 180.0]}
    )
    for record, expected in zip(document["records"], [100, 200, 100, 200, 95, 190], strict=True):
        record["expected_makespan"] = float(expected)
    guard = compare_runs({"user": document}, field="expected_makespan")["modes"]["user"]["guard"]
    assert guard["losses"] == 0 and guard["worst"] == pytest.approx(0.95)
    assert guard_check(makespans(document))["losses"] == 1  # one run's luck: 109 over 100
    path, plain = tmp_path / "rerun.json", tmp_path / "plain.json"
    path.write_text(json.dumps(document))
    plain.write_text(json.dumps(USER))
    assert main(["estimates", "compare", f"user={path}", "--expected"]) == 0
    assert "mean makespan over reruns" in capsys.readouterr().out
    assert main(["estimates", "compare", f"user={plain}", "--expected"]) == 2
    assert "bench it with --reruns N" in capsys.readouterr().err
    plain.write_text(json.dumps({"records": [{"scheduler": "heft"}]}))
    assert main(["estimates", "compare", f"user={plain}"]) == 2
    assert "not a bench JSON document" in capsys.readouterr().err
