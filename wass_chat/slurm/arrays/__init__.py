"""Slurm job arrays: a command's independent items run as the tasks of one array.

Where each part lives: the plan file and the shards every task writes are in
:mod:`sim.array_plan` (the lowest floor, so every floor's tasks use it); each kind's task entry
point sits beside the work it runs (:mod:`kb.seed_shards`, :mod:`policy.bench.array_task`,
:mod:`policy.learned.evaluate_array`). This package is the Slurm side: :mod:`.submit` writes the
batch script and submits the tasks without a shard, :mod:`.status` follows them in squeue and
sacct, :mod:`.usage` reads their cost from sacct, :mod:`.run` runs a plan end to end from an
:class:`~.run.ArrayConfig`, and :mod:`.work` runs the bench, the evaluation and the seed as arrays.
"""
