"""WfFormat 1.4 (and the 1.3 spellings it grew from): tasks with inline file lists.

Layout: ``workflow.tasks[]``, each with ``name`` (the reference other tasks use in
``parents``/``children``), optional ``id``/``category``/``command``, ``runtimeInSeconds`` (1.3:
``runtime``), ``cores``, ``memoryInBytes``, and ``files[]`` entries ``{name, sizeInBytes (1.3:
size), link: input|output, path?}``. A file's id is ``path + name``; when tasks disagree on a
file's size the first one is kept, as WfCommons' own migration tool does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim.json_fields import FieldChecker
from sim.model import File, Task, Workflow
from sim.wfformat_tasks import build_workflow, explicit_parents, read_run


def workflow_from_v14(doc: Mapping[str, Any], subject: str) -> Workflow:
    """Convert a parsed 1.4 document; every problem is reported in one WorkflowError."""
    check = FieldChecker()
    name = check.get(doc, "name", "str", "instance", default="")
    description = check.get(doc, "description", "str", "instance", required=False, default="")
    workflow = check.get(doc, "workflow", "object", "instance", default={})
    raw_tasks = check.get(workflow, "tasks", "list", "workflow", default=[])

    sizes: dict[str, int] = {}
    declared: list[tuple[Task, list[str], list[str]]] = []
    for i, raw in check.objects(raw_tasks, "task"):
        where = f"task {raw.get('name', f'#{i}')!r}"
        task_name = check.get(raw, "name", "str", where)
        parents = check.get(raw, "parents", "str-list", where, required=False, default=[])
        children = check.get(raw, "children", "str-list", where, required=False, default=[])
        command = raw.get("command")
        program = command.get("program") if isinstance(command, Mapping) else None
        category = check.get(raw, "category", "str", where, required=False,
                             default=program if isinstance(program, str) else "")
        run = read_run(check, raw, where, runtime_keys=("runtimeInSeconds", "runtime"),
                       cores_key="cores")
        raw_files = check.get(raw, "files", "list", where, required=False, default=[])
        inputs, outputs = _task_files(check, raw_files, where, sizes)
        if task_name is None:
            continue
        task = Task(id=task_name, category=category, inputs=inputs, outputs=outputs, **run)
        declared.append((task, parents, children))
    tasks = explicit_parents(check, declared)
    files = [File(file_id, size) for file_id, size in sizes.items()]
    meta = {"schemaVersion": "1.4"}
    return build_workflow(subject, check, name, tasks, files, description, meta)


def _task_files(
    check: FieldChecker, raw_files: list[Any], where: str, sizes: dict[str, int]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(inputs, outputs) of one task; records each new file's size in ``sizes``."""
    inputs: dict[str, None] = {}
    outputs: dict[str, None] = {}
    for j, raw in check.objects(raw_files, f"{where} file"):
        file_where = f"{where} file {raw.get('name', f'#{j}')!r}"
        file_name = check.get(raw, "name", "str", file_where)
        size_key = "sizeInBytes" if "sizeInBytes" in raw or "size" not in raw else "size"
        size = check.get(raw, size_key, "int", file_where, default=0)
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
