"""``bench ... --slurm-array N`` and ``train evaluate ... --slurm-array N``: the work as a job
array, merged into exactly what the local run computes.

The bench's instances (:mod:`policy.bench.array_task`) or the evaluation's
(:mod:`policy.learned.evaluate_array`) are split into N tasks; :mod:`wass_chat.cli.array_run`
submits what has no shard, watches, and stops with exit 1 naming any task that failed (with its
sacct state). The callers then render and write the merged result as they do locally.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from wass_chat.cli import array_run
from wass_chat.cli.output import err_console

if TYPE_CHECKING:
    from policy.bench.matrix import Instance
    from policy.bench.runner import InstanceOutcome, RunSpec
    from policy.learned.evaluate import Evaluation, HeldOutDraw
    from sim.uncertainty import RuntimePredictions


def bench_on_slurm(
    instances: list[Instance],
    spec: RunSpec,
    tasks: int,
    jobs: int,
    array_dir: Path | None,
    memory_mb: int,
    predictions: Mapping[str, RuntimePredictions] | None = None,
) -> list[InstanceOutcome]:
    """The outcomes :func:`~policy.bench.runner.run_matrix` returns for ``instances`` (and the
    retrieved ``predictions``, which travel in the plan), computed by an array of ``tasks``
    tasks of ``jobs`` workers; prints the array's wall time and its per-instance overhead
    (sacct elapsed of the tasks against the in-process seconds)."""
    from policy.bench.array_task import bench_plan, merged_outcomes

    plan = bench_plan(instances, spec, tasks, jobs, predictions)
    directory = array_run.array_directory(plan, array_dir)
    started = time.perf_counter()
    ended = array_run.run(plan, directory, jobs, memory_mb)
    outcomes, missing = merged_outcomes(directory)
    _fail_if_missing(missing, directory)
    in_process = sum(sum(o.seconds.values()) for o in outcomes)
    _print_cost(time.perf_counter() - started, ended, in_process, len(outcomes), "instance")
    return outcomes


def evaluate_on_slurm(
    checkpoint: Path | None,
    draw: HeldOutDraw,
    lookahead: int,
    workers: int,
    tasks: int,
    array_dir: Path | None,
    memory_mb: int,
) -> dict[str, Evaluation]:
    """:func:`~policy.learned.evaluate.evaluate_regimes`'s result for the instances ``draw``
    names, computed by an array of ``tasks`` tasks."""
    from policy.learned.evaluate_array import evaluation_plan, merged_evaluations

    plan = evaluation_plan(checkpoint, draw, "fair", lookahead, tasks, workers)
    directory = array_run.array_directory(plan, array_dir)
    started = time.perf_counter()
    ended = array_run.run(plan, directory, workers if lookahead else 1, memory_mb)
    evaluations, missing = merged_evaluations(directory)
    _fail_if_missing(missing, directory)
    count = sum(ev.instances for ev in evaluations.values())
    _print_cost(time.perf_counter() - started, ended, None, count, "instance")
    return evaluations


def _fail_if_missing(missing: list[int], directory: Path) -> None:
    """A shard that vanished between the array's end and the merge (removed by hand)."""
    if missing:
        from sim.errors import InputError

        raise InputError(str(directory), [f"tasks {missing} have no shard: run again"])


def _print_cost(
    wall: float, ended: array_run.ArrayOutcome, in_process: float | None, items: int, what: str
) -> None:
    """One stderr line: the array's wall time, its tasks' sacct time and, when the in-process
    time of the items is known, the overhead per item."""
    line = (
        f"array: {items} {what}s in {len(ended.progress.done)} tasks, {wall:.1f} s wall; tasks'"
        f" sacct elapsed {ended.elapsed_seconds:.1f} s (CPU {ended.cpu_seconds:.1f} s)"
    )
    if in_process is not None:
        overhead = (ended.elapsed_seconds - in_process) / max(items, 1)
        line += f" against {in_process:.1f} s in-process: {overhead:.2f} s overhead per {what}"
    err_console.print(line, soft_wrap=True)
