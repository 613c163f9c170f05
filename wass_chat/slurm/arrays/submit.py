"""An array directory's batch script, and submitting its tasks that have no shard and are not
queued: the first run submits all of them, a later run only the failed ones."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from sim.array_plan import ArrayPlan, finished_tasks, read_plan, write_plan
from sim.atomic_files import write_atomic
from wass_chat.slurm.arrays.status import queued_tasks
from wass_chat.slurm.arrays.submissions import Submission, record, task_list
from wass_chat.slurm.commands import SlurmCommands

TASK_MODULES = {
    "seed": "kb.seed_shards",
    "bench": "policy.bench.array_task",
    "evaluate": "policy.learned.evaluate_array",
}
"""Each plan kind's task entry point (``python -m MODULE DIR`` runs one task)."""


@dataclass(frozen=True, slots=True)
class ArrayResources:
    """What each array task asks Slurm for."""

    cpus_per_task: int = 1
    """Also the task's worker processes (``--jobs``)."""
    memory_mb: int = 1000
    """Per task; a one-worker seed task peaked at 257 MB (sacct MaxRSS, the README's seed
    spec)."""
    partition: str | None = None


def script_path(directory: Path, kind: str) -> Path:
    return directory / f"{kind}-task.sh"


def batch_script(directory: Path, resources: ArrayResources, kind: str = "seed") -> str:
    """The array's batch script: ``sbatch --array=K DIR/KIND-task.sh`` runs task K alone."""
    module = TASK_MODULES[kind]
    lines = [
        "#!/bin/bash",
        f"# wass-chat: one task of a {kind} array ({module}).",
        f"#SBATCH --job-name=wass-{kind}",
        f"#SBATCH --output={directory / 'logs' / 'task-%a.out'}",
        f"#SBATCH --chdir={directory}",
        "#SBATCH --ntasks=1",
        f"#SBATCH --cpus-per-task={resources.cpus_per_task}",
        f"#SBATCH --mem={resources.memory_mb}M",
    ]
    if resources.partition:
        lines.append(f"#SBATCH --partition={resources.partition}")
    python = shlex.quote(sys.executable)
    lines.append(f"exec {python} -m {module} {shlex.quote(str(directory))}")
    return "\n".join(lines) + "\n"


def prepare(directory: Path, plan: ArrayPlan, resources: ArrayResources) -> Path:
    """Write the plan and the batch script into ``directory``; returns the script."""
    directory = directory.resolve()
    write_plan(directory, plan)
    (directory / "logs").mkdir(exist_ok=True)
    script = script_path(directory, plan.kind)
    write_atomic(script, batch_script(directory, resources, plan.kind), mode=0o755)
    return script


def submit_missing(commands: SlurmCommands, directory: Path) -> Submission | None:
    """Submit the tasks with no finished shard that are not queued (first run: all of them;
    later runs: the failed ones). None when there is nothing to submit."""
    plan = read_plan(directory)
    skip = finished_tasks(directory, plan) | set(queued_tasks(commands, directory))
    todo = [t for t in range(plan.tasks) if t not in skip]
    if not todo:
        return None
    script = script_path(directory, plan.kind)
    job_id = commands.sbatch([f"--array={task_list(todo)}", str(script)])
    submission = Submission(job_id, tuple(todo))
    record(directory, submission)
    return submission
