"""WfFormat 1.5 and 1.6: the specification / execution split.

Layout: ``workflow.specification.tasks[]`` (``id``, ``name``, ``parents`` and ``children`` by
id, ``inputFiles``/``outputFiles`` by file id), ``workflow.specification.files[]`` (``id``,
``sizeInBytes``, each file listed once) and ``workflow.execution.tasks[]`` (``id``,
``runtimeInSeconds``, ``coreCount``, ``memoryInBytes``, ``command``). 1.6 adds only optional
``metrics``; execution ``machines`` (1.5 may say ``machine``) are not modelled. A file that
several tasks list as an output is written by the first of them, as in the older versions
(:func:`sim.wfformat_tasks.one_writer_per_file`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sim.json_fields import FieldChecker
from sim.model import File, Task, Workflow
from sim.wfformat_tasks import build_workflow, explicit_parents, one_writer_per_file, read_run


def workflow_from_split(doc: Mapping[str, Any], subject: str, version: str) -> Workflow:
    """Convert a parsed 1.5/1.6 document; every problem is reported in one WorkflowError."""
    check = FieldChecker()
    name = check.get(doc, "name", "str", "instance", default="")
    description = check.get(doc, "description", "str", "instance", required=False, default="")
    workflow = check.get(doc, "workflow", "object", "instance", default={})
    spec = check.get(workflow, "specification", "object", "workflow", default={})
    spec_tasks = check.get(spec, "tasks", "list", "workflow.specification", default=[])
    spec_files = check.get(
        spec, "files", "list", "workflow.specification", required=False, default=[]
    )
    execution = check.get(workflow, "execution", "object", "workflow", default={})
    exec_tasks = check.get(execution, "tasks", "list", "workflow.execution", default=[])

    files = [
        f
        for i, raw in check.objects(spec_files, "specification file")
        if (f := _read_file(check, raw, i))
    ]
    runs = _execution_by_id(check, exec_tasks)
    declared: list[tuple[Task, list[str], list[str]]] = []
    for i, raw in check.objects(spec_tasks, "specification task"):
        where = f"task {raw.get('id', f'#{i}')!r}"
        task_id = check.get(raw, "id", "str", where)
        task_name = check.get(raw, "name", "str", where, default="")
        parents = check.get(raw, "parents", "str-list", where, default=[])
        children = check.get(raw, "children", "str-list", where, default=[])
        inputs = check.get(raw, "inputFiles", "str-list", where, required=False, default=[])
        outputs = check.get(raw, "outputFiles", "str-list", where, required=False, default=[])
        category = check.get(raw, "category", "str", where, required=False, default=task_name)
        if task_id is None:
            continue
        run = runs.get(task_id)
        if run is None:
            check.add(f"{where}: no execution entry (runtimeInSeconds unknown)")
            run = {"work": 0.0}  # placeholder so the model can still check the graph
        task = Task(
            id=task_id,
            name="" if task_name == task_id else task_name,
            category=category,
            inputs=tuple(inputs),
            outputs=tuple(outputs),
            **run,
        )
        declared.append((task, parents, children))
    spec_ids = {t.id for t, _, _ in declared}
    check.problems += [
        f"execution entry {i!r} names no specification task" for i in runs if i not in spec_ids
    ]
    files_of = one_writer_per_file([(t.inputs, t.outputs) for t, _, _ in declared])
    declared = [
        (replace(t, inputs=i, outputs=o), parents, children)
        for (t, parents, children), (i, o) in zip(declared, files_of, strict=True)
    ]
    tasks = explicit_parents(check, declared)
    meta = {"schemaVersion": version}
    return build_workflow(subject, check, name, tasks, files, description, meta)


def _read_file(check: FieldChecker, raw: Mapping[str, Any], index: int) -> File | None:
    where = f"file {raw.get('id', f'#{index}')!r}"
    file_id = check.get(raw, "id", "str", where)
    size = check.get(raw, "sizeInBytes", "int", where, default=0)
    return None if file_id is None else File(file_id, size)


def _execution_by_id(check: FieldChecker, exec_tasks: list[Any]) -> dict[str, dict[str, Any]]:
    """Execution entries as ``Task`` keyword arguments (work, cores, memory, gpus, command)."""
    runs: dict[str, dict[str, Any]] = {}
    for i, raw in check.objects(exec_tasks, "execution task"):
        where = f"task {raw.get('id', f'#{i}')!r} (execution)"
        task_id = check.get(raw, "id", "str", where)
        run = read_run(check, raw, where, runtime_keys=("runtimeInSeconds",), cores_key="coreCount")
        if task_id is None:
            continue
        if task_id in runs:
            check.add(f"{where}: duplicate execution entry")
            continue
        runs[task_id] = run
    return runs
