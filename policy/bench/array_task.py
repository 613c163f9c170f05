"""The bench split into array tasks: each runs its block of the matrix and writes its records.

Why: a bench of hundreds of instances is hours on one machine and independent per instance, so
a Slurm job array (submitted by :mod:`wass_chat.slurm.arrays`) can spread it over a cluster.
This module is the part that runs on the nodes, and the merge; the plan file and the atomic
shards are :mod:`sim.array_plan`'s. Task K runs the K-th contiguous block of the matrix's
instances with :func:`~policy.bench.runner.run_matrix`, appending each instance's outcome to
its ``.partial`` shard as it comes, then publishes the shard. The merge reads the finished
shards and orders the outcomes as the plan lists the instances, which is the order
``run_matrix`` returns on one machine: the records are the same, only the wall-clock
``seconds`` (never part of the results) differ. With ``--kb``, the plan also carries each
instance's retrieved runtime predictions (:mod:`sim.predictions_json`): the submitter queried
the knowledge base, so the tasks never open it (a Chroma store on disk is not for many
concurrent openers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from policy.bench.matrix import Instance
from policy.bench.runner import (
    InstanceOutcome,
    RunSpec,
    outcome_from_dict,
    run_matrix,
    spec_from_dict,
)
from sim.array_plan import (
    ArrayPlan,
    LineShard,
    missing_tasks,
    read_plan,
    run_line_task,
    shard_rows,
    task_main,
)
from sim.predictions_json import predictions_from_json, predictions_to_json
from sim.uncertainty import RuntimePredictions

KIND = "bench"


def bench_plan(
    instances: Sequence[Instance],
    spec: RunSpec,
    tasks: int,
    jobs: int = 1,
    predictions: Mapping[str, RuntimePredictions] | None = None,
) -> ArrayPlan:
    """The bench of ``spec`` on ``instances`` split into ``tasks`` array tasks of ``jobs``
    worker processes each (the workers do not change the records: not in the digest).

    ``predictions`` (instance id -> retrieved predictions, ``--kb``) go into the plan, so into
    its digest: a knowledge base that predicts otherwise gets another array directory.
    """
    payload: dict[str, object] = {
        "instances": [asdict(i) for i in instances],
        "run": asdict(spec),
        "jobs": jobs,
    }
    if predictions is not None:
        payload["predictions"] = {
            i.id: predictions_to_json(predictions[i.id]) for i in instances if i.id in predictions
        }
    return ArrayPlan(KIND, payload, tasks, "json", ("jobs",))


def plan_instances(plan: ArrayPlan) -> list[Instance]:
    return [Instance.from_dict(d) for d in plan.spec["instances"]]


def plan_predictions(
    plan: ArrayPlan, instances: Sequence[Instance]
) -> dict[str, RuntimePredictions] | None:
    """The retrieved predictions the plan carries for ``instances`` (None: planned without
    ``--kb``)."""
    carried = plan.spec.get("predictions")
    if carried is None:
        return None
    return {i.id: predictions_from_json(carried[i.id]) for i in instances if i.id in carried}


def run_task(directory: Path, task: int) -> Path:
    """Run array task ``task`` of the bench plan in ``directory`` into its shard."""

    def work(plan: ArrayPlan, shard: LineShard) -> None:
        block = plan.block(task, plan_instances(plan))
        spec, jobs = spec_from_dict(plan.spec["run"]), int(plan.spec["jobs"])
        predictions = plan_predictions(plan, block)
        run_matrix(
            block, spec, jobs, predictions=predictions, on_outcome=lambda o: shard.write(asdict(o))
        )

    return run_line_task(directory, KIND, task, work)


def merged_outcomes(directory: Path) -> tuple[list[InstanceOutcome], list[int]]:
    """Every finished shard's outcomes in the plan's instance order, and the tasks without a
    finished shard (each instance is in one task's block, so in one shard)."""
    plan = read_plan(directory, KIND)
    order = {i.id: k for k, i in enumerate(plan_instances(plan))}
    found: dict[str, InstanceOutcome] = {}
    for _, row in shard_rows(directory, plan):
        outcome = outcome_from_dict(row)
        found[outcome.instance] = outcome
    missing = missing_tasks(directory, plan)
    return sorted(found.values(), key=lambda o: order[o.instance]), missing


def main(argv: Sequence[str] | None = None) -> int:
    """One bench array task: ``python -m policy.bench.array_task DIR [--task K]``."""
    return task_main("python -m policy.bench.array_task", run_task, argv)


if __name__ == "__main__":
    raise SystemExit(main())
