"""`run_bench` as a library: its config's defaults are the CLI's, every field is documented,
progress is reported per stage, and the CLI writes exactly the document it returns."""

from __future__ import annotations

import inspect
import json
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from policy.bench.instances import random_dag
from policy.bench.matrix import BenchSpecError
from policy.bench.run import BenchConfig, plan_bench, run_bench
from sim.wfformat import write_workflow
from tests.config_fields import cli_defaults, undocumented_fields
from wass_chat.cli import main
from wass_chat.cli.bench_cmds import bench

# CLI parameters that are not part of a bench's config: where the output goes, Slurm, and the
# many-workflows bench (`--arrivals`, its own run: policy/bench/arrivals.py).
OUTPUT_AND_SLURM = {
    "json_path",
    "markdown_path",
    "plots",
    "as_json",
    "slurm_array",
    "array_dir",
    "memory_mb",
    "arrivals",
    "window",
    "stream_ccr",
}


def test_the_config_defaults_are_the_cli_defaults() -> None:
    options = [n for n in inspect.signature(bench).parameters if n not in OUTPUT_AND_SLURM]
    cli = cli_defaults(bench, {n: n for n in options})
    config: dict[str, object] = {f.name: f.default for f in fields(BenchConfig)}
    assert set(cli) == set(config)
    assert config.pop("workflows") == () and cli.pop("workflows") == []  # a tuple when frozen
    assert cli == config


def test_every_config_field_has_a_docstring() -> None:
    assert undocumented_fields(BenchConfig) == set()


def test_a_bad_config_is_refused_before_any_work() -> None:
    with pytest.raises(BenchSpecError) as error:
        plan_bench(BenchConfig(recipes="montage:60", estimates="bogus", noise=-1))
    assert len(error.value.problems) == 2


def test_run_bench_reports_progress_and_the_cli_writes_its_document(tmp_path: Path) -> None:
    workflow = tmp_path / "dag.json"
    write_workflow(random_dag(np.random.default_rng(3), 10, 0.3, with_inputs=True), workflow)
    cfg = BenchConfig(
        workflows=(str(workflow),), platforms="hetero:4", seeds=2, schedulers="heft,minmin"
    )
    seen: list[tuple[str, int, int]] = []
    result = run_bench(cfg, lambda stage, done, total: seen.append((stage, done, total)))
    assert seen[0] == ("2 instances", 0, 2)
    assert seen[-1] == ("2 instances", 2, 2)
    assert result.document["settings"] == cfg.settings(None)
    assert {r["scheduler"] for r in result.document["records"]} == {"heft", "minmin"}
    assert result.markdown.startswith("# wass-chat bench (fair network)")

    argv = [
        "bench",
        "--workflows",
        str(workflow),
        "--platforms",
        "hetero:4",
        "--seeds",
        "2",
        "--schedulers",
        "heft,minmin",
        "--json",
        str(tmp_path / "b.json"),
        "--markdown",
        str(tmp_path / "b.md"),
    ]
    assert main(argv) == 0
    written = json.loads((tmp_path / "b.json").read_text())
    assert written["records"] == result.document["records"]
    assert written["summary"] == json.loads(json.dumps(result.summary))
    assert (tmp_path / "b.md").read_text() == result.markdown
