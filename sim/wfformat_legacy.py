"""WfFormat 0.2 to 1.4: tasks that list their own files and name each other.

Layout of every version up to 1.4: ``workflow.jobs[]`` (0.2-1.2) or ``workflow.tasks[]``
(1.3, 1.4), each task with ``name``, ``parents`` (and, in most runs, ``children``) naming other
tasks, a runtime, and ``files[]`` entries ``{name, size, link: input|output, path?}``. The
versions differ in spellings; every spelling is accepted in every version (the version's own
first, then the other), so a 1.4 file that kept a 1.3 spelling still reads:

* runtime: ``runtimeInSeconds`` (1.4) or ``runtime`` (earlier), seconds;
* memory: ``memoryInBytes`` (1.4) or ``memory`` in KB (x1000, as WfCommons' migration tool);
* file size: ``sizeInBytes`` (1.4) or ``size``, which schemas 0.2-1.3 define in KB (x1000)
  but Pegasus runs of that era hold in bytes (wfcommons/pegasus-instances issue 1);
* command: ``command{program, arguments}`` (1.2 on) or top-level ``arguments`` (0.2-1.1);
* ``id`` and ``category`` exist from 1.2 on. Without ``category`` the category is the
  command's program when it is one word, else the name without its ``_ID...`` suffix.

A file's id is ``path + name``; when tasks disagree on a file's size the first one is kept,
as WfCommons' migration tool does. When several tasks list one file as an output (real
Makeflow 1.0 runs list some inputs that way) the first one writes it and the others read it.
References between tasks are resolved by :mod:`sim.wfformat_refs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sim.json_fields import FieldChecker
from sim.model import File, Task, Workflow
from sim.wfformat_refs import DeclaredTask, resolve_parents, task_ids
from sim.wfformat_tasks import (
    MEMORY_ANY_ERA,
    build_workflow,
    explicit_parents,
    one_writer_per_file,
    read_run,
)

TASK_LIST_KEY = {
    "0.2": "jobs",
    "1.0": "jobs",
    "1.1": "jobs",
    "1.2": "jobs",
    "1.3": "tasks",
    "1.4": "tasks",
}
"""Where each inline-files version keeps its tasks (the other key is accepted as well)."""


def workflow_from_legacy(doc: Mapping[str, Any], subject: str, version: str) -> Workflow:
    """Convert a parsed 0.2-1.4 document; every problem is reported in one WorkflowError."""
    check = FieldChecker()
    name = check.get(doc, "name", "str", "instance", default="")
    description = check.get(doc, "description", "str", "instance", required=False, default="")
    workflow = check.get(doc, "workflow", "object", "instance", default={})
    key = TASK_LIST_KEY[version]
    other = "tasks" if key == "jobs" else "jobs"
    if key not in workflow and other in workflow:
        key = other
    raw_tasks = check.get(workflow, key, "list", "workflow", default=[])
    kb = 1 if "pegasus" in _runtime_system(doc) else 1000
    runtime_keys = (
        ("runtimeInSeconds", "runtime") if version == "1.4" else ("runtime", "runtimeInSeconds")
    )

    sizes: dict[str, int] = {}
    parsed = [
        p
        for i, raw in check.objects(raw_tasks, "task")
        if (p := _parse_task(check, raw, i, sizes, kb, runtime_keys))
    ]
    ids = task_ids([d.name for d, _ in parsed], [d.raw_id for d, _ in parsed])
    renamed = [replace(d, id=i) for i, (d, _) in zip(ids, parsed, strict=True)]
    file_lists = one_writer_per_file([(d.inputs, d.outputs) for d in renamed])
    declared = [
        replace(d, inputs=i, outputs=o) for d, (i, o) in zip(renamed, file_lists, strict=True)
    ]
    parents = resolve_parents(check, declared)
    tasks: list[tuple[Task, list[str], list[str]]] = [
        (
            Task(
                d.id,
                name="" if d.name == d.id else d.name,
                inputs=d.inputs,
                outputs=d.outputs,
                **run,
            ),
            parents[d.id],
            [],
        )
        for d, (_, run) in zip(declared, parsed, strict=True)
    ]
    files = [File(file_id, size) for file_id, size in sizes.items()]
    meta = {"schemaVersion": version}
    return build_workflow(
        subject, check, name, explicit_parents(check, tasks), files, description, meta
    )


def _parse_task(
    check: FieldChecker,
    raw: Mapping[str, Any],
    index: int,
    sizes: dict[str, int],
    kb: int,
    runtime_keys: tuple[str, ...],
) -> tuple[DeclaredTask, dict[str, Any]] | None:
    """One task as declared (its name standing in for its id) and its run as ``Task`` kwargs."""
    where = f"task {raw.get('name', f'#{index}')!r}"
    task_name = check.get(raw, "name", "str", where)
    raw_id = check.get(raw, "id", "str", where, required=False)
    parents = check.get(raw, "parents", "str-list", where, required=False, default=[])
    children = check.get(raw, "children", "str-list", where, required=False, default=[])
    category = check.get(
        raw,
        "category",
        "str",
        where,
        required=False,
        default=_category(task_name or "", _program(raw)),
    )
    command = _arguments_command(check, raw, where, category)
    run = read_run(
        check,
        raw,
        where,
        runtime_keys=runtime_keys,
        cores_key="cores",
        memory_keys=MEMORY_ANY_ERA,
        command=command,
    )
    raw_files = check.get(raw, "files", "list", where, required=False, default=[])
    inputs, outputs = _task_files(check, raw_files, where, sizes, kb)
    if task_name is None:
        return None
    declared = DeclaredTask(
        task_name, task_name, raw_id, tuple(parents), tuple(children), inputs, outputs
    )
    return declared, {**run, "category": category}


def _runtime_system(doc: Mapping[str, Any]) -> str:
    system = doc.get("wms") or doc.get("runtimeSystem") or {}
    return str(system.get("name", "")).lower() if isinstance(system, Mapping) else ""


def _program(raw: Mapping[str, Any]) -> str | None:
    command = raw.get("command")
    program = command.get("program") if isinstance(command, Mapping) else None
    return program if isinstance(program, str) else None


def _category(task_name: str, program: str | None) -> str:
    """The command's program when it is one word, else the name without ``_ID...``."""
    if program and not program.split()[1:]:
        return program
    return task_name.split("_ID")[0] if "_ID" in task_name else task_name


def _arguments_command(
    check: FieldChecker, raw: Mapping[str, Any], where: str, category: str
) -> tuple[str, ...] | None:
    """The command of a 0.2-1.1 task (``arguments`` only), as WfCommons' 1.2 migration builds
    it: the category as program; None when the task has a ``command`` of its own."""
    if "command" in raw or "arguments" not in raw:
        return None
    arguments = check.get(raw, "arguments", "str-list", where, default=[])
    return (category, *arguments)


def _task_files(
    check: FieldChecker, raw_files: list[Any], where: str, sizes: dict[str, int], kb: int
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(inputs, outputs) of one task; records each new file's size in bytes in ``sizes``."""
    inputs: dict[str, None] = {}
    outputs: dict[str, None] = {}
    for j, raw in check.objects(raw_files, f"{where} file"):
        file_where = f"{where} file {raw.get('name', f'#{j}')!r}"
        file_name = check.get(raw, "name", "str", file_where)
        size_key, scale = (
            ("sizeInBytes", 1) if "sizeInBytes" in raw or "size" not in raw else ("size", kb)
        )
        size = round(check.get(raw, size_key, "number", file_where, default=0) * scale)
        link = check.get(raw, "link", "str", file_where, default="input")
        path = check.get(raw, "path", "str", file_where, required=False, default="")
        if link.lower() not in ("input", "output"):
            check.add(f"{file_where}: 'link' must be 'input' or 'output', got {link!r}")
        if file_name is None:
            continue
        file_id = path + file_name
        sizes.setdefault(file_id, size)
        (outputs if link.lower() == "output" else inputs)[file_id] = None
    return tuple(inputs), tuple(outputs)
