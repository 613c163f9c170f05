"""The bench, the held-out evaluation and the knowledge-base seed as job arrays, merged into
exactly what the local run computes.

The bench's instances (:mod:`policy.bench.array_task`), the evaluation's
(:mod:`policy.learned.evaluate_array`) or the seed's jobs (:mod:`kb.seed_shards`) are split into
``cfg.tasks`` tasks; :func:`~wass_chat.slurm.arrays.run.run_array` submits what has no shard,
watches, and raises :class:`~wass_chat.slurm.arrays.run.ArrayIncomplete` naming any task that
failed. The callers then render and write the merged result as they do locally.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from wass_chat.slurm.arrays.config import ArrayConfig
from wass_chat.slurm.arrays.run import (
    ArrayOutcome,
    ArrayReport,
    QuietReport,
    array_directory,
    run_array,
    submit,
    watch,
)

if TYPE_CHECKING:
    from kb.seed import SeedConfig
    from policy.bench.matrix import Instance
    from policy.bench.runner import InstanceOutcome, RunSpec
    from policy.learned.evaluate import Evaluation, HeldOutDraw
    from sim.uncertainty import RuntimePredictions
    from wass_chat.slurm.arrays.submissions import Submission


def bench_on_slurm(
    instances: list[Instance],
    spec: RunSpec,
    cfg: ArrayConfig,
    jobs: int,
    predictions: Mapping[str, RuntimePredictions] | None = None,
    report: ArrayReport | None = None,
) -> list[InstanceOutcome]:
    """The outcomes :func:`~policy.bench.runner.run_matrix` returns for ``instances`` (and the
    retrieved ``predictions``, which travel in the plan), computed by an array of ``cfg.tasks``
    tasks of ``jobs`` workers; reports the array's wall time and its per-instance overhead
    (sacct elapsed of the tasks against the in-process seconds)."""
    from policy.bench.array_task import bench_plan, merged_outcomes

    plan = bench_plan(instances, spec, cfg.tasks, jobs, predictions)
    started = time.perf_counter()
    directory, ended = run_array(plan, cfg, jobs, report)
    outcomes, missing = merged_outcomes(directory)
    _fail_if_missing(missing, directory)
    in_process = sum(sum(o.seconds.values()) for o in outcomes)
    wall = time.perf_counter() - started
    (report or QuietReport()).note(cost_line(wall, ended, in_process, len(outcomes), "instance"))
    return outcomes


def evaluate_on_slurm(
    checkpoint: Path | None,
    draw: HeldOutDraw,
    lookahead: int,
    workers: int,
    cfg: ArrayConfig,
    report: ArrayReport | None = None,
) -> dict[str, Evaluation]:
    """:func:`~policy.learned.evaluate.evaluate_regimes`'s result for the instances ``draw``
    names, computed by an array of ``cfg.tasks`` tasks."""
    from policy.learned.evaluate_array import evaluation_plan, merged_evaluations

    plan = evaluation_plan(checkpoint, draw, "fair", lookahead, cfg.tasks, workers)
    started = time.perf_counter()
    directory, ended = run_array(plan, cfg, workers if lookahead else 1, report)
    evaluations, missing = merged_evaluations(directory)
    _fail_if_missing(missing, directory)
    count = sum(ev.instances for ev in evaluations.values())
    wall = time.perf_counter() - started
    (report or QuietReport()).note(cost_line(wall, ended, None, count, "instance"))
    return evaluations


@dataclass(frozen=True)
class SeedArray:
    """A seed array as submitted, and how it ended when it was watched."""

    directory: Path
    submitted: Submission | None
    outcome: ArrayOutcome | None
    """None under ``wait=False``."""


def seed_on_slurm(
    config: SeedConfig, cfg: ArrayConfig, report: ArrayReport | None = None
) -> SeedArray:
    """``kb seed --slurm-array N``: prepare, submit what lacks a shard and, unless
    ``cfg.wait`` is off, watch until the array ends (the caller merges the shards)."""
    from kb.seed_shards import seed_plan

    plan = seed_plan(config, cfg.tasks)
    directory = array_directory(plan, cfg.directory)
    commands, submitted = submit(plan, directory, config.jobs, cfg.memory_mb, report)
    outcome = watch(commands, directory, report) if cfg.wait else None
    return SeedArray(directory, submitted, outcome)


def _fail_if_missing(missing: list[int], directory: Path) -> None:
    """A shard that vanished between the array's end and the merge (removed by hand)."""
    if missing:
        from sim.errors import InputError

        raise InputError(str(directory), [f"tasks {missing} have no shard: run again"])


def cost_line(
    wall: float, ended: ArrayOutcome, in_process: float | None, items: int, what: str
) -> str:
    """The array's wall time, its tasks' sacct time and, when the in-process time of the items
    is known, the overhead per item."""
    line = (
        f"array: {items} {what}s in {len(ended.progress.done)} tasks, {wall:.1f} s wall; tasks'"
        f" sacct elapsed {ended.elapsed_seconds:.1f} s (CPU {ended.cpu_seconds:.1f} s)"
    )
    if in_process is not None:
        overhead = (ended.elapsed_seconds - in_process) / max(items, 1)
        line += f" against {in_process:.1f} s in-process: {overhead:.2f} s overhead per {what}"
    return line
