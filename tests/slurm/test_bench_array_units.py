"""`bench` and `train evaluate` with `--slurm-array` without a cluster: Slurm absent is one line
and exit 2 with nothing written; the tasks' shards (run here in process, as a node runs them)
merge to the local result (with ``--kb``'s predictions carried in the plan too), and a partial
shard is never read."""

from __future__ import annotations

from pathlib import Path

import pytest

from policy.bench.array_task import bench_plan, merged_outcomes, run_task
from policy.bench.matrix import build_matrix, parse_platforms, parse_recipes
from policy.bench.runner import RunSpec, run_matrix
from policy.learned import evaluate_array
from policy.learned.evaluate import HeldOutDraw, evaluate_regimes
from sim.array_plan import LineShard, write_plan
from sim.errors import InputError
from sim.uncertainty import CategoryPrediction, RuntimePredictions, task_category
from wass_chat.cli import main
from wass_chat.slurm.arrays.submit import ArrayResources, batch_script, script_path

BENCH = [
    "bench",
    "--recipes",
    "montage:60",
    "--platforms",
    "hetero:4",
    "--seeds",
    "2",
    "--schedulers",
    "heft,minmin",
    "--slurm-array",
    "2",
]
EVALUATE = [
    "train",
    "evaluate",
    "--untrained",
    "--instances",
    "1",
    "--recipes",
    "montage",
    "--ccrs",
    "0",
    "--slurm-array",
    "2",
]


@pytest.mark.parametrize("argv", [BENCH, EVALUATE], ids=["bench", "evaluate"])
def test_without_slurm_one_line_exit_2_and_nothing_written(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no scontrol, no sbatch
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    array = tmp_path / "array"
    extra = ["--markdown", str(tmp_path / "out.md")] if argv is BENCH else ["--json"]
    code = main([*argv, "--array-dir", str(array), *extra])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip().count("\n") == 0 and "Slurm is not installed here" in captured.err
    assert captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no array, no output, no home


def test_without_slurm_the_kb_is_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The retrieval takes minutes on a real history: Slurm is asked first."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    kb = tmp_path / "kb"
    kb.mkdir()  # a directory, as --kb requires; opening the store would fill it
    argv = [*BENCH, "--estimates", "kb", "--kb", str(kb), "--array-dir", str(tmp_path / "a")]
    assert main(argv) == 2
    assert "Slurm is not installed here" in capsys.readouterr().err
    assert list(kb.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["kb"]


def test_bench_shards_merge_to_the_local_run_and_a_partial_is_never_read(tmp_path: Path) -> None:
    instances = build_matrix(parse_recipes("montage:60"), parse_platforms("hetero:4"), 4)
    spec = RunSpec(("heft", "minmin"))
    plan = bench_plan(instances, spec, 3)
    write_plan(tmp_path, plan)
    run_task(tmp_path, 0)
    run_task(tmp_path, 2)
    killed = LineShard(tmp_path, plan, 1)  # task 1 as if killed after writing one line
    killed.write({"instance": "not a record"})
    merged, missing = merged_outcomes(tmp_path)
    assert missing == [1] and len(merged) == 3  # blocks of 1, 1 and 2 instances
    run_task(tmp_path, 1)  # the re-run replaces the partial file
    assert not killed.partial.exists()
    merged, missing = merged_outcomes(tmp_path)
    local = run_matrix(instances, spec)
    assert missing == [] and [o.instance for o in merged] == [o.instance for o in local]
    assert [o.records for o in merged] == [o.records for o in local]
    assert [o.load for o in merged] == [o.load for o in local]
    with pytest.raises(InputError, match="another bench plan"):
        write_plan(tmp_path, bench_plan(instances, RunSpec(("heft",)), 3))
    with pytest.raises(InputError, match="holds a bench array, not a evaluate one"):
        evaluate_array.merged_evaluations(tmp_path)


def test_bench_shards_plan_on_the_predictions_the_plan_carries(tmp_path: Path) -> None:
    instances = build_matrix(parse_recipes("montage:60"), parse_platforms("hetero:4"), 3)
    spec = RunSpec(("heft", "minmin"), estimates="kb")
    predictions = {}  # each instance its own, so a task reading another's would differ
    for k, instance in enumerate(instances):
        tasks = instance.workflow.build(instance.seed).tasks
        categories = sorted({task_category(t) for t in tasks})[: 2 + k]  # the rest: requests
        predictions[instance.id] = RuntimePredictions(
            {c: CategoryPrediction(3.0 + j / 7 + k, 0.2, 4) for j, c in enumerate(categories)},
            {"cpu-4c": 1.1 + k / 10},
            0.3 + k / 10,
            5,
        )
    plan = bench_plan(instances, spec, 2, predictions=predictions)
    write_plan(tmp_path, plan)
    for task in range(2):
        run_task(tmp_path, task)
    merged, missing = merged_outcomes(tmp_path)
    local = run_matrix(instances, spec, predictions=predictions)
    assert missing == [] and [o.records for o in merged] == [o.records for o in local]
    without = run_matrix(
        instances, spec, predictions={i.id: RuntimePredictions() for i in instances}
    )
    assert [o.records for o in merged] != [o.records for o in without]  # they made a difference
    assert "predictions" not in bench_plan(instances, spec, 2).spec  # digest of old plans kept
    other = {**predictions, instances[0].id: RuntimePredictions()}
    assert bench_plan(instances, spec, 2, predictions=other).digest != plan.digest


def test_evaluation_shards_merge_to_the_local_evaluation(tmp_path: Path) -> None:
    draw = HeldOutDraw(("montage",), 2, 3, (50, 60), (8,), (0.0, 1.0))
    plan = evaluate_array.evaluation_plan(None, draw, "fair", 0, 3)
    write_plan(tmp_path, plan)
    for task in range(3):
        evaluate_array.run_task(tmp_path, task)
    merged, missing = evaluate_array.merged_evaluations(tmp_path)
    local = evaluate_regimes(evaluate_array.evaluation_net(None), draw)
    assert missing == [] and merged == local and list(merged) == ["native", "ccr1"]


def test_a_plan_file_of_another_layout_is_one_error(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text('{"config": {}, "tasks": 4}')  # before the shared plan
    with pytest.raises(InputError, match="not an array plan"):
        merged_outcomes(tmp_path)


@pytest.mark.parametrize(
    ("kind", "module"),
    [("bench", "policy.bench.array_task"), ("evaluate", "policy.learned.evaluate_array")],
)
def test_each_kind_s_batch_script_runs_its_task_module(
    kind: str, module: str, tmp_path: Path
) -> None:
    lines = batch_script(tmp_path, ArrayResources(cpus_per_task=2), kind).splitlines()
    assert f"#SBATCH --job-name=wass-{kind}" in lines and "#SBATCH --cpus-per-task=2" in lines
    assert lines[-1].endswith(f"-m {module} {tmp_path}")
    assert script_path(tmp_path, kind).name == f"{kind}-task.sh"
