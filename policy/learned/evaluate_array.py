"""The held-out evaluation split into array tasks: each scores its block of instances.

Why: a held-out evaluation with the lookahead takes minutes per seed on one machine, and its
instances are independent, so a Slurm job array (submitted by
:mod:`wass_chat.slurm.arrays`) can spread them over a cluster. This module is the part that
runs on the nodes, and the merge; the plan file and the atomic shards are
:mod:`sim.array_plan`'s. The plan lists every regime's instances in the order
:meth:`~policy.learned.evaluate.HeldOutDraw.specs` draws them; task K scores the K-th block with
:func:`~policy.learned.evaluate.score_instances` and writes one line per instance. The merge
puts the scores back in that order and summarises each regime with
:func:`~policy.learned.evaluate.summarize_scores`, so the result is the local one exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from policy.learned.evaluate import (
    Evaluation,
    HeldOutDraw,
    score_instances,
    summarize_scores,
)
from policy.learned.instances import InstanceSpec
from policy.learned.model import PolicyNet
from sim import array_plan
from sim.array_plan import ArrayPlan, LineShard
from sim.errors import InputError

KIND = "evaluate"


def evaluation_net(checkpoint: str | Path | None) -> PolicyNet:
    """The network of ``checkpoint``, or (None) a fresh one drawn with torch seed 0: the
    untrained prior, the same in every process."""
    if checkpoint is None:
        import torch

        torch.manual_seed(0)
        return PolicyNet()
    from policy.learned.planner import load_policy_net

    return load_policy_net(checkpoint)


def evaluation_plan(
    checkpoint: Path | None,
    draw: HeldOutDraw,
    network_model: str,
    lookahead: int,
    tasks: int,
    workers: int = 1,
) -> ArrayPlan:
    """The evaluation of ``checkpoint`` (None: the untrained prior) on the instances ``draw``
    names, in ``tasks`` array tasks; the checkpoint's sha256 is part of the plan, so new
    weights make a new plan."""
    if checkpoint is not None and not checkpoint.is_file():
        raise InputError(str(checkpoint), ["no policy checkpoint here"])
    digest = hashlib.sha256(checkpoint.read_bytes()).hexdigest() if checkpoint else None
    spec = {
        "checkpoint": str(checkpoint.resolve()) if checkpoint else None,
        "checkpoint_sha256": digest,
        "draw": asdict(draw),
        "network_model": network_model,
        "lookahead": lookahead,
        "workers": workers,
    }
    return ArrayPlan(KIND, spec, tasks, "json", ("workers",))


def plan_specs(plan: ArrayPlan) -> dict[str, list[InstanceSpec]]:
    draw: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in plan.spec["draw"].items()
    }
    return HeldOutDraw(**draw).specs()


def run_task(directory: Path, task: int) -> Path:
    """Score array task ``task``'s block into its shard, one line per instance (the lookahead
    a chunk of ``workers`` instances at a time)."""

    def work(plan: ArrayPlan, shard: LineShard) -> None:
        items = [s for specs in plan_specs(plan).values() for s in specs]
        block, start = plan.block(task, items), plan.block_start(task, len(items))
        net = evaluation_net(plan.spec["checkpoint"])
        lookahead, workers = int(plan.spec["lookahead"]), int(plan.spec["workers"])
        chunk = workers if lookahead > 0 else 1
        for first in range(0, len(block), chunk):
            specs = block[first : first + chunk]
            scores = score_instances(net, specs, plan.spec["network_model"], lookahead, workers)
            for k, (ratio, heft_over_bound) in enumerate(scores):
                shard.write(
                    {
                        "index": start + first + k,
                        "label": specs[k].label,
                        "ratio": ratio,
                        "heft_over_bound": heft_over_bound,
                    }
                )

    return array_plan.run_line_task(directory, KIND, task, work)


def merged_evaluations(directory: Path) -> tuple[dict[str, Evaluation], list[int]]:
    """Each regime's evaluation from the finished shards, and the tasks without a shard
    (while any is missing, no evaluation: a partial summary would read as a whole one)."""
    plan = array_plan.read_plan(directory, KIND)
    missing = array_plan.missing_tasks(directory, plan)
    if missing:
        return {}, missing
    scores = {
        int(row["index"]): (float(row["ratio"]), float(row["heft_over_bound"]))
        for _, row in array_plan.shard_rows(directory, plan)
    }
    result, offset = {}, 0
    for regime, specs in plan_specs(plan).items():
        result[regime] = summarize_scores(specs, [scores[offset + k] for k in range(len(specs))])
        offset += len(specs)
    return result, []


def main(argv: Sequence[str] | None = None) -> int:
    """One evaluation array task: ``python -m policy.learned.evaluate_array DIR [--task K]``."""
    return array_plan.task_main("python -m policy.learned.evaluate_array", run_task, argv)


if __name__ == "__main__":
    raise SystemExit(main())
