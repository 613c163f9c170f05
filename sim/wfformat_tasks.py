"""Tasks and workflows built from WfFormat records, shared by every schema version's reader.

:mod:`sim.wfformat_split` (1.5/1.6) and :mod:`sim.wfformat_legacy` (0.2-1.4) both build their
tasks here, so neither reader imports the other.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sim.errors import WorkflowError
from sim.json_fields import FieldChecker
from sim.model import REFERENCE_SPEED, File, Task, Workflow

MEMORY_IN_BYTES: tuple[tuple[str, int], ...] = (("memoryInBytes", 1),)
"""Memory spelling of 1.4 and later: ``memoryInBytes``."""

MEMORY_ANY_ERA: tuple[tuple[str, int], ...] = (("memoryInBytes", 1), ("memory", 1000))
"""Memory spellings up to 1.4: ``memory`` is in KB (x1000, as WfCommons' migration tool)."""


def read_run(
    check: FieldChecker,
    raw: Mapping[str, Any],
    where: str,
    *,
    runtime_keys: tuple[str, ...],
    cores_key: str,
    memory_keys: tuple[tuple[str, int], ...] = MEMORY_IN_BYTES,
    command: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Runtime, cores, memory, GPUs and command of one task, as ``Task`` keyword arguments.

    ``runtime_keys`` and ``memory_keys`` (key, bytes per unit) list accepted spellings,
    newest first; the first one present is used. ``command`` replaces the ``command``
    field (pre-1.2 files give only ``arguments``). Unusable values are recorded in
    ``check`` and replaced by neutral ones (zero work, one core) so the rest of the file
    can still be checked.
    """
    key = next((k for k in runtime_keys if k in raw), runtime_keys[0])
    runtime = check.get(raw, key, "number", where, default=0.0)
    core_count = check.get(raw, cores_key, "number", where, required=False, default=1)
    memory_key, scale = next(((k, s) for k, s in memory_keys if k in raw), memory_keys[0])
    memory = check.get(raw, memory_key, "number", where, required=False, default=0) * scale
    gpus = check.get(raw, "gpuCount", "int", where, required=False, default=0)
    prefers_gpu = check.get(raw, "gpuPreferred", "bool", where, required=False, default=False)
    release = check.get(raw, "releaseInSeconds", "number", where, required=False, default=0.0)
    exact_work = check.get(raw, "workInFlop", "number", where, required=False)
    if command is None:
        command = _read_command(check, raw.get("command"), where)
    if core_count < 1:
        check.add(f"{where}: {cores_key!r} must be at least 1, got {core_count}")
        core_count = 1
    work = runtime * (core_count * REFERENCE_SPEED)
    if exact_work is not None and math.isclose(exact_work, work, rel_tol=1e-9, abs_tol=1e-6):
        work = exact_work  # the writer's exact value, still consistent with the runtime
    return {
        "work": work,
        "cores": math.ceil(core_count),
        "memory": round(memory),
        "gpus": gpus,
        "command": command,
        "prefers_gpu": prefers_gpu,
        "release": float(release),
    }


def _read_command(check: FieldChecker, raw: Any, where: str) -> tuple[str, ...] | None:
    """``command{program, arguments}`` as an argument vector, each word exactly as written.

    A plain string (Nextflow 1.4 runs and hand-written files give the script) is split into
    words as a POSIX shell would split it, without expanding anything (:func:`shlex.split`);
    one that cannot be split (an unbalanced quote) stays one word. Nothing in a workflow file is
    ever given to a shell to interpret."""
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            return tuple(shlex.split(raw))
        except ValueError:
            return (raw,)
    if not isinstance(raw, Mapping):
        check.add(f"{where}: 'command' must be an object with 'program' and 'arguments'")
        return None
    program = check.get(raw, "program", "str", f"{where} command", required=False)
    arguments = check.get(
        raw, "arguments", "str-list", f"{where} command", required=False, default=[]
    )
    words = ([program] if program is not None else []) + arguments
    return tuple(words) if words else None


FileLists = tuple[tuple[str, ...], tuple[str, ...]]
"""A task's (input file ids, output file ids)."""


def one_writer_per_file(tasks: list[FileLists]) -> list[FileLists]:
    """Each file stays an output of the first task that lists it as one; later ones read it.

    Real runs list some inputs as outputs (Makeflow 1.0 blastall tasks name their input chunk
    so, and WfCommons' 1.5 conversions keep every such entry): a file has one writer in the
    model, and the first lister is the one that ran first. Repeats within a task are dropped.
    """
    written: set[str] = set()
    result: list[FileLists] = []
    for inputs, outputs in tasks:
        again = tuple(f for f in dict.fromkeys(outputs) if f in written and f not in inputs)
        result.append(
            (inputs + again, tuple(f for f in dict.fromkeys(outputs) if f not in written))
        )
        written.update(outputs)
    return result


def explicit_parents(
    check: FieldChecker, declared: list[tuple[Task, list[str], list[str]]]
) -> list[Task]:
    """Tasks whose ``parents`` keep only dependencies that their files do not already imply.

    ``declared`` pairs each task with the parent and child ids its file lists; a dependency
    may be declared on either end. A child naming an unknown task is recorded as a problem
    (unknown parents are reported by the model). A task naming itself stays its own parent,
    so that the model names the self-loop.
    """
    producer = {f: t.id for t, _, _ in declared for f in t.outputs}
    known = {t.id for t, _, _ in declared}
    from_children: dict[str, list[str]] = {}
    for task, _, children in declared:
        for child in children:
            if child not in known:
                check.add(f"task {task.id!r} has unknown child {child!r}")
            else:
                from_children.setdefault(child, []).append(task.id)
    result = []
    for task, parents, _ in declared:
        implied = {producer[f] for f in task.inputs if f in producer}
        keep = dict.fromkeys(
            p
            for p in [*parents, *from_children.get(task.id, [])]
            if p not in implied or p == task.id
        )
        result.append(replace(task, parents=tuple(keep)))
    return result


def build_workflow(
    subject: str,
    check: FieldChecker,
    name: str,
    tasks: list[Task],
    files: list[File],
    description: str,
    meta: Mapping[str, str],
) -> Workflow:
    """The model, or one :class:`WorkflowError` under ``subject`` listing the reader's problems
    followed by the model's own (cycles, self-loops, dangling references, negative sizes...)."""
    try:
        wf = Workflow(name, tuple(tasks), tuple(files), description, dict(meta))
    except WorkflowError as exc:
        raise WorkflowError(subject, [*check.problems, *exc.problems]) from exc
    if check.problems:
        raise WorkflowError(subject, check.problems)
    return wf
