"""``wass-chat bench --arrivals``: streams of workflows, every schedule validated, the curve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policy.bench.arrivals import (
    ArrivalInstance,
    ArrivalSpec,
    StreamRecord,
    arrivals_markdown,
    run_on_stream,
    stream_of,
    summarize_arrivals,
)
from policy.bench.matrix import PlatformSource
from sim.arrivals import StreamSpec, merge_stream
from sim.generators import generate_workflow
from sim.metrics import stream_summary
from sim.wfformat import write_workflow
from wass_chat.cli import main

SCHEDULERS = "online-heft,fifo-deft,heft,eft,slurm"


def _bench(out: Path, jobs: int, *extra: str) -> dict:
    out.mkdir(parents=True, exist_ok=True)  # an output's folder must exist (-o rule)
    code = main(
        [
            "bench",
            "--arrivals",
            "3,6",
            "--window",
            "120",
            "--platforms",
            "gpu:4",
            "--seeds",
            "2",
            "--schedulers",
            SCHEDULERS,
            "--jobs",
            str(jobs),
            "--json",
            str(out / "a.json"),
            "--markdown",
            str(out / "a.md"),
            "--plots",
            str(out / "plots"),
            *extra,
        ]
    )
    assert code == 0
    return json.loads((out / "a.json").read_text())


@pytest.mark.slow
def test_the_curve_is_every_scheduler_on_every_stream_and_the_same_whatever_the_jobs(
    tmp_path: Path,
) -> None:
    first = _bench(tmp_path / "one", 1)
    second = _bench(tmp_path / "two", 2)
    strip = [{k: v for k, v in r.items() if k != "cpu_seconds"} for r in first["records"]]
    assert strip == [{k: v for k, v in r.items() if k != "cpu_seconds"} for r in second["records"]]
    assert len(first["records"]) == 2 * 2 * 5
    spec = ArrivalSpec(stream=StreamSpec(window=120.0))
    for record in first["records"][:10]:
        instance = ArrivalInstance(record["count"], PlatformSource("spec", "gpu:4"), record["seed"])
        workflow = merge_stream(stream_of(instance, spec))
        platform = instance.platform.build(instance.seed)
        result, copies, _ = run_on_stream(record["scheduler"], workflow, platform, "fair")
        assert record["makespan"] == result.makespan and record["copies"] == copies
        assert record["slr"] == stream_summary(result, workflow, platform)["slr"]
    assert any(r["copies"] for r in first["records"] if r["scheduler"] == "fifo-deft")
    for row in first["summary"]["rows"]:
        for metric in ("makespan", "speedup", "slr"):
            assert row[metric]["low"] <= row[metric]["value"] <= row[metric]["high"]
    markdown = (tmp_path / "one" / "a.md").read_text()
    assert "| scheduler | 3 | 6 |" in markdown and "| fifo-deft |" in markdown
    assert (tmp_path / "one" / "plots" / "arrivals.png").read_bytes()[:4] == b"\x89PNG"


def test_flags_of_the_single_workflow_bench_are_refused_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "a.json"
    code = main(["bench", "--arrivals", "3,x", "--recipes", "montage:60", "--json", str(out)])
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "--recipes does not apply to --arrivals" in err and "'3,x'" in err
    assert main(["bench", "--arrivals", "3", "--schedulers", "nope,online-heft"]) == 2
    assert "unknown scheduler 'nope'; known: online-heft, fifo-deft, eft" in capsys.readouterr().err


def test_a_trace_is_replayed_as_one_stream(tmp_path: Path) -> None:
    write_workflow(generate_workflow("fork-join", 6, seed=1), tmp_path / "fj.json")
    trace = tmp_path / "trace.csv"
    trace.write_text("time,workflow\n0,fj.json\n30,fj.json\n31,demo:fork-join-20\n")
    data = _bench(tmp_path, 1, "--arrivals", str(trace))
    assert {r["count"] for r in data["records"]} == {3}
    assert {r["workflows"] for r in data["records"]} == {3}


def _record(scheduler: str, seed: int, makespan: float, slr: float) -> StreamRecord:
    return StreamRecord(
        f"3|gpu:4|seed{seed}",
        3,
        "gpu-4",
        seed,
        scheduler,
        3,
        30,
        makespan,
        2.0,
        slr,
        slr,
        makespan / 2,
        0,
        0.01,
    )


def test_makespan_and_slr_are_also_paired_stream_by_stream_with_the_reference() -> None:
    records = [
        _record("eft", 0, 100.0, 2.0),
        _record("heft", 0, 50.0, 4.0),
        _record("eft", 1, 200.0, 2.0),
        _record("heft", 1, 400.0, 1.0),
        _record("eft", 2, 100.0, 3.0),
        _record("heft", 2, 100.0, 3.0),
    ]
    summary = summarize_arrivals(records)
    assert summary["reference"] == "eft"
    heft = next(r for r in summary["rows"] if r["scheduler"] == "heft")
    # ratios 0.5, 2, 1: geometric mean 1; only the first stream is shorter than eft's
    assert heft["makespan_ratio"]["value"] == pytest.approx(1.0)
    assert heft["makespan_ratio"]["wins"] == 1 and heft["makespan_ratio"]["count"] == 3
    # SLR ratios 2, 0.5, 1: the second stream is the win
    assert heft["slr_ratio"]["value"] == pytest.approx(1.0) and heft["slr_ratio"]["wins"] == 1
    eft = next(r for r in summary["rows"] if r["scheduler"] == "eft")
    assert eft["makespan_ratio"]["value"] == 1.0 and eft["makespan_ratio"]["wins"] == 0
    markdown = arrivals_markdown(summary, "t")
    assert "## makespan (s) over eft's on the same streams" in markdown
    assert "| heft | 1.000 (" in markdown and "), 1/3 |" in markdown


def test_without_the_reference_nothing_is_paired() -> None:
    summary = summarize_arrivals([_record("heft", 0, 50.0, 4.0), _record("heft", 1, 60.0, 3.0)])
    assert summary["reference"] is None
    assert all("makespan_ratio" not in row for row in summary["rows"])
    assert "on the same streams" not in arrivals_markdown(summary, "t")
