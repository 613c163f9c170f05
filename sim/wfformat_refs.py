"""Task references of pre-1.5 WfFormat files, resolved to the ids of the tasks they mean.

Up to 1.4 a task's ``parents`` and ``children`` name other tasks by ``name``. In Pegasus and
Makeflow runs names are unique, so a reference is one task, and one naming no task is a
problem. In Nextflow 1.4 runs a name is a *process* name, shared by every task of the process,
and every task carries its process's references: "SKEWER -> UNICYCLER" says that some
UNICYCLER task reads some SKEWER task's output, not that each reads each. So in a file whose
names repeat, every name reference is process-level: it joins exactly the task pairs that a
file joins (the parent writes a file the child reads), and a process that ran no task joins
nothing. That is how WfCommons' own 1.5 and 1.6 conversions of these runs read (WfInstances
``nextflow/legacy/bacass-dirt02-001.json`` and ``fetchngs-dirt02-001.json``). Files are what
join tasks there, so a file whose tasks list no file at all (Nextflow 1.2 runs give
``files: []``) keeps the plain reading even if a name repeats: a name then means every task of
that name, and no declared dependency is lost. A reference that names no task is tried as a
task ``id``, which always means that one task.

A task that references itself is kept as its own parent, so that the model names the
self-loop; it is never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.json_fields import FieldChecker


@dataclass(frozen=True, slots=True)
class DeclaredTask:
    """One task as a pre-1.5 file declares it: its id, the references it makes, its files."""

    id: str
    name: str
    raw_id: str | None
    parents: tuple[str, ...]
    children: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


def task_ids(names: list[str], raw_ids: list[str | None]) -> list[str]:
    """Ids for tasks given by name and optional ``id``, as WfCommons' 1.5 migration makes them.

    A name that contains its ``id`` (Pegasus' ``split_ID0000001``) or comes without one is
    the task's id; otherwise ``name_id`` (Nextflow's ``NFCORE_X.FASTQC_2``). A name still
    repeated after that gets its position appended, so every id is unique.
    """
    ids = [
        name if raw is None or raw in name else f"{name}_{raw}"
        for name, raw in zip(names, raw_ids, strict=True)
    ]
    counts: dict[str, int] = {}
    for task_id in ids:
        counts[task_id] = counts.get(task_id, 0) + 1
    return [tid if counts[tid] == 1 else f"{tid}_{i}" for i, tid in enumerate(ids)]


def resolve_parents(check: FieldChecker, tasks: list[DeclaredTask]) -> dict[str, list[str]]:
    """Task id -> ids of its parents, from references declared on either end.

    Parents come in declaration order without repeats; unknown references (in a file whose
    names are unique) are recorded in ``check``.
    """
    by_name: dict[str, list[DeclaredTask]] = {}
    by_id: dict[str, DeclaredTask] = {}
    for task in tasks:
        by_name.setdefault(task.name, []).append(task)
        by_id.setdefault(task.id, task)
        if task.raw_id is not None:
            by_id.setdefault(task.raw_id, task)
    names_repeat = any(len(named) > 1 for named in by_name.values())
    process_level = names_repeat and any(task.inputs or task.outputs for task in tasks)
    reads = {task.id: frozenset(task.inputs) for task in tasks}
    writes = {task.id: frozenset(task.outputs) for task in tasks}
    parents: dict[str, dict[str, None]] = {task.id: {} for task in tasks}

    def targets(task: DeclaredTask, reference: str, role: str) -> list[DeclaredTask]:
        named = by_name.get(reference)
        if named is None:
            hit = by_id.get(reference)
            if hit is None and not process_level:
                check.add(f"task {task.id!r} has unknown {role} {reference!r}")
            return [] if hit is None else [hit]
        if not process_level:
            return named
        if role == "parent":
            return [other for other in named if writes[other.id] & reads[task.id]]
        return [other for other in named if writes[task.id] & reads[other.id]]

    for task in tasks:
        for reference in task.parents:
            for parent in targets(task, reference, "parent"):
                parents[task.id][parent.id] = None
        for reference in task.children:
            for child in targets(task, reference, "child"):
                parents[child.id][task.id] = None
    return {task_id: list(ps) for task_id, ps in parents.items()}
