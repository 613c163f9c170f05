"""Slurm job arrays: work split into array tasks, run on a cluster as one job array, watched,
re-run.

Slurm is the scale-out engine (no scheduler of our own): ``sbatch --array`` runs the tasks of
an array directory (:mod:`sim.array_plan`) wherever the cluster has room, each writing its own
shard into the directory (which must be on a filesystem the nodes share). The same machinery
runs the knowledge-base seed (:mod:`kb.seed_shards`), the bench
(:mod:`policy.bench.array_task`) and the policy's held-out evaluation
(:mod:`policy.learned.evaluate_array`); each kind's task entry point sits beside the work it
runs, on its own floor, and :data:`.submit.TASK_MODULES` names them.

This package is the Slurm side, one module per step:

- :mod:`.config`: :class:`~.config.ArrayConfig`, what the ``--slurm-array`` flags say;
- :mod:`.submissions`: which job ran which task last (``submissions.json``);
- :mod:`.submit`: the batch script; :func:`~.submit.submit_missing` submits exactly the tasks
  that have no finished shard and are not queued, so running the same command again re-runs
  only the failed tasks (by hand, ``sbatch --array=K DIR/KIND-task.sh`` re-runs task K);
- :mod:`.status`: progress from ``squeue`` and the shards already renamed into place; ``sacct``
  names the final state of a task that ended without a shard (FAILED, CANCELLED...);
- :mod:`.usage`: the tasks' elapsed and CPU seconds from sacct;
- :mod:`.run`: a plan end to end (submit, watch, name the failed tasks);
- :mod:`.work`: the bench, the evaluation and the seed as arrays.
"""
