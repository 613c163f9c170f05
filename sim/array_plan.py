"""Work split into independent array tasks: the plan file, the shard files, their atomic writes.

Why: the knowledge-base seed, the bench and the policy's held-out evaluation are each a fixed
list of independent items (seed jobs, bench instances, evaluation instances) that a site's
cluster can run as the tasks of one Slurm job array. This module is the part every one of them
shares on the nodes and in the merge; it knows nothing about Slurm (which submits the tasks:
:mod:`wass_chat.slurm.arrays`) and lives on the lowest floor so every floor's tasks can use it.

An *array directory* holds ``plan.json`` (what is computed, as JSON, and the number of tasks),
``shard-KKKKK.<suffix>`` for each finished task K and, while task K runs,
``shard-KKKKK.<suffix>.partial``. Task K takes the K-th contiguous block of the plan's items. A
shard is written under its ``.partial`` name, then fsynced and renamed: a task killed at any
instant leaves at most a ``.partial`` file, which a merge never reads and a re-run deletes first.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sim.atomic_files import publish, write_atomic
from sim.errors import InputError

PLAN_FILE = "plan.json"
Item = TypeVar("Item")


@dataclass(frozen=True)
class ArrayPlan:
    """A list of items split into ``tasks`` array tasks; ``spec`` says what to compute."""

    kind: str
    """Which work this is (``seed``, ``bench``, ``evaluate``): a directory holds one kind."""
    spec: dict[str, Any]
    """JSON-ready: everything a task needs to rebuild its items and run them."""
    tasks: int
    shard_suffix: str = "json"
    volatile: tuple[str, ...] = ()
    """Keys of ``spec`` that change how the work runs, not what it computes (workers per task):
    left out of :attr:`digest`, so changing them reuses the finished shards."""

    def __post_init__(self) -> None:
        # As read back from plan.json (tuples as lists), so a plan equals its own round trip.
        object.__setattr__(self, "spec", json.loads(json.dumps(self.spec)))

    def to_json(self) -> str:
        return json.dumps(
            {
                "kind": self.kind,
                "spec": self.spec,
                "tasks": self.tasks,
                "shard_suffix": self.shard_suffix,
                "volatile": list(self.volatile),
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> ArrayPlan:
        doc = json.loads(text)
        return cls(
            doc["kind"], doc["spec"], int(doc["tasks"]), doc["shard_suffix"], tuple(doc["volatile"])
        )

    @property
    def digest(self) -> str:
        """Names the plan: what is computed and how it is split (not the workers per task)."""
        what = {k: v for k, v in self.spec.items() if k not in self.volatile}
        payload = json.dumps({"kind": self.kind, "spec": what, "tasks": self.tasks}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def block(self, task: int, items: Sequence[Item]) -> list[Item]:
        """Task ``task``'s contiguous block of ``items`` (blocks differ in size by at most 1)."""
        if not 0 <= task < self.tasks:
            raise InputError("array task", [f"{task} is outside 0..{self.tasks - 1}"])
        n = len(items)
        return list(items[task * n // self.tasks : (task + 1) * n // self.tasks])

    def block_start(self, task: int, items: int) -> int:
        """Index in the whole list of task ``task``'s first item."""
        return task * items // self.tasks

    def shard(self, directory: Path, task: int) -> Path:
        return directory / f"shard-{task:05d}.{self.shard_suffix}"


def write_plan(directory: Path, plan: ArrayPlan) -> None:
    """Write ``plan`` into ``directory`` (atomically); a directory holding another plan is an
    InputError, so shards of two plans never mix."""
    if plan.tasks < 1:
        raise InputError("--slurm-array", [f"{plan.tasks}: need at least 1 task"])
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / PLAN_FILE
    if path.exists():
        held = _load(path)
        if (held.kind, held.digest) != (plan.kind, plan.digest):
            raise InputError(str(directory), [f"holds the shards of another {held.kind} plan"])
        if held == plan:
            return
    write_atomic(path, plan.to_json())


def read_plan(directory: Path, kind: str | None = None) -> ArrayPlan:
    """The plan of ``directory``; when ``kind`` is given, it must be a plan of that kind."""
    path = directory / PLAN_FILE
    if not path.exists():
        raise InputError(str(directory), [f"no {PLAN_FILE}: not an array directory"])
    plan = _load(path)
    if kind is not None and plan.kind != kind:
        raise InputError(str(directory), [f"holds a {plan.kind} array, not a {kind} one"])
    return plan


def _load(path: Path) -> ArrayPlan:
    try:
        return ArrayPlan.from_json(path.read_text())
    except (KeyError, TypeError, ValueError) as exc:  # an older layout, a damaged file
        raise InputError(
            str(path), [f"not an array plan ({exc!r}): use another --array-dir"]
        ) from None


def finished_tasks(directory: Path, plan: ArrayPlan) -> set[int]:
    """The tasks whose shard is complete (renamed into place)."""
    return {k for k in range(plan.tasks) if plan.shard(directory, k).exists()}


def missing_tasks(directory: Path, plan: ArrayPlan) -> list[int]:
    """The tasks without a finished shard (failed, killed, or still running)."""
    return sorted(set(range(plan.tasks)) - finished_tasks(directory, plan))


def partial_path(final: Path) -> Path:
    return final.with_name(final.name + ".partial")


def clear_partial(final: Path) -> Path:
    """Delete what a killed earlier run of the task left (the partial file, SQLite's journal);
    returns the partial path to write."""
    partial = partial_path(final)
    for leftover in (partial, partial.with_name(partial.name + "-journal")):
        leftover.unlink(missing_ok=True)
    return partial


class LineShard:
    """A task's shard as JSON lines: a header (plan digest, task, pid), then one line per
    finished item, flushed as it comes; :meth:`finish` publishes it."""

    def __init__(self, directory: Path, plan: ArrayPlan, task: int) -> None:
        self.task = task
        self.final = plan.shard(directory, task)
        self.partial = clear_partial(self.final)
        self._file = open(self.partial, "w")  # noqa: SIM115 - closed by finish()
        self.write({"plan": plan.digest, "task": task, "pid": os.getpid()})

    def write(self, row: dict[str, Any]) -> None:
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()

    def finish(self) -> Path:
        self._file.close()
        return publish(self.partial, self.final)


def run_line_task(
    directory: Path, kind: str, task: int, work: Callable[[ArrayPlan, LineShard], None]
) -> Path:
    """Run array task ``task`` of the ``kind`` plan in ``directory``: ``work`` writes the
    task's rows into its :class:`LineShard`, which is then published; returns its path. A
    task whose shard already exists does nothing (a re-submitted finished task)."""
    plan = read_plan(directory, kind)
    final = plan.shard(directory, task)
    if final.exists():
        return final
    shard = LineShard(directory, plan, task)
    work(plan, shard)
    return shard.finish()


def shard_rows(directory: Path, plan: ArrayPlan) -> Iterator[tuple[int, dict[str, Any]]]:
    """(task, row) of every finished :class:`LineShard` of ``plan`` (headers checked, skipped)."""
    for task in sorted(finished_tasks(directory, plan)):
        path = plan.shard(directory, task)
        lines = path.read_text().splitlines()
        if not lines or json.loads(lines[0]).get("plan") != plan.digest:
            raise InputError(str(path), [f"belongs to another {plan.kind} plan"])
        for line in lines[1:]:
            yield task, json.loads(line)


def task_main(
    prog: str, run_task: Callable[[Path, int], Path], argv: Sequence[str] | None = None
) -> int:
    """Entry point of one array task: ``python -m MODULE DIR [--task K]`` (K defaults to
    ``$SLURM_ARRAY_TASK_ID``); runs ``run_task(DIR, K)``."""
    parser = argparse.ArgumentParser(prog=prog, description=task_main.__doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--task", type=int, default=None)
    args = parser.parse_args(argv)
    task = args.task if args.task is not None else os.environ.get("SLURM_ARRAY_TASK_ID")
    if task is None:
        parser.error("no --task and no SLURM_ARRAY_TASK_ID")
    path = run_task(args.directory, int(task))
    print(f"task {task}: {path}")
    return 0
