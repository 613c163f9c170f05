"""`wass-chat bench` on a tiny matrix: outputs agree with direct simulations and are stable."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from policy.base import plan_and_simulate
from policy.bench.instances import random_dag
from policy.bench.matrix import BenchSpecError, PlatformSource, parse_platforms
from policy.bench.stats import geometric_mean_bootstrap_ci, win_tie_loss
from policy.registry import get_scheduler
from sim.wfformat import read_workflow, write_workflow
from wass_chat.cli import main


@pytest.fixture
def workflow_file(tmp_path: Path) -> Path:
    path = tmp_path / "dag.json"
    write_workflow(random_dag(np.random.default_rng(1), 12, 0.3, with_inputs=True), path)
    return path


def _run(workflow_file: Path, out: Path, jobs: int) -> dict:
    out.mkdir(parents=True, exist_ok=True)  # an output's folder must exist (-o rule)
    code = main(
        [
            "bench",
            "--workflows",
            str(workflow_file),
            "--platforms",
            "hetero:4,homo:4",
            "--schedulers",
            "heft,slurm,random",
            "--seeds",
            "2",
            "--network-model",
            "fair",
            "--jobs",
            str(jobs),
            "--json",
            str(out / "b.json"),
            "--markdown",
            str(out / "b.md"),
            "--plots",
            str(out / "plots"),
        ]
    )
    assert code == 0
    return json.loads((out / "b.json").read_text())


@pytest.mark.slow
def test_bench_outputs_match_direct_simulation(workflow_file: Path, tmp_path: Path) -> None:
    first = _run(workflow_file, tmp_path / "one", jobs=1)
    second = _run(workflow_file, tmp_path / "two", jobs=2)
    assert first["records"] == second["records"]  # deterministic, whatever the process count
    assert len(first["records"]) == 2 * 2 * 3
    assert {"python", "numpy"} <= set(first["versions"])
    assert all(len(i["workflow_sha256"]) == 64 for i in first["instances"])

    workflow = read_workflow(workflow_file)
    for record in first["records"]:
        platform = PlatformSource("spec", record["instance"].split("|")[1]).build(record["seed"])
        scheduler = get_scheduler(record["scheduler"], seed=record["seed"])
        direct = plan_and_simulate(scheduler, workflow, platform, "fair")
        assert record["makespan"] == direct.makespan
        assert record["energy"] == direct.energy

    heft = [r["makespan"] for r in first["records"] if r["scheduler"] == "heft"]
    slurm = [r["makespan"] for r in first["records"] if r["scheduler"] == "slurm"]
    ratio = first["summary"]["overall"]["slurm"]["ratio_to_heft"]["value"]
    assert ratio == pytest.approx(float(np.exp(np.mean(np.log(np.array(slurm) / heft)))))
    markdown = (tmp_path / "one" / "b.md").read_text()
    assert f"| slurm | {ratio:.3f}" in markdown
    assert "Traditional Slurm" in markdown and "n/a" in markdown  # learned columns absent
    assert list((tmp_path / "one" / "plots").glob("*.png"))


def test_bad_specs_are_reported_together() -> None:
    with pytest.raises(BenchSpecError) as caught:
        parse_platforms("hetero:8,weird,gpu:x")
    assert len(caught.value.problems) == 2


def test_statistics() -> None:
    estimate = geometric_mean_bootstrap_ci([1.0, 2.0, 4.0])
    assert estimate.value == pytest.approx(2.0)
    assert estimate.low <= estimate.value <= estimate.high
    counts = win_tie_loss({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 2.0, "b": 2.0, "c": 1.0})
    assert counts.as_dict() == {"wins": 1, "ties": 1, "losses": 1}


def test_a_cluster_bootstrap_counts_an_instance_measured_thrice_once() -> None:
    values = [0.8, 0.9, 1.1, 0.95, 0.7, 1.02]
    once = geometric_mean_bootstrap_ci(values)
    thrice = [v for v in values for _ in range(3)]
    clustered = geometric_mean_bootstrap_ci(
        thrice, clusters=[k for k in range(6) for _ in range(3)]
    )
    # resampling whole instances of three equal values is resampling the values themselves
    assert (clustered.low, clustered.value, clustered.high) == pytest.approx(
        (once.low, once.value, once.high)
    )
    naive = geometric_mean_bootstrap_ci(thrice)  # as if 18 independent instances: too narrow
    assert naive.high - naive.low < 0.8 * (once.high - once.low)
    distinct = geometric_mean_bootstrap_ci(values, clusters=list("abcdef"))
    assert distinct == once  # every label distinct: the plain bootstrap, draw for draw
    with pytest.raises(ValueError, match="5 cluster labels for 6 values"):
        geometric_mean_bootstrap_ci(values, clusters=list("abcde"))
