"""Read and write WfCommons' WfFormat JSON instances (schema versions 1.4, 1.5 and 1.6).

Reading dispatches on ``schemaVersion``: 1.5 and 1.6 share one layout
(``workflow.specification.{tasks,files}`` + ``workflow.execution.{tasks,machines}``); 1.4 keeps
each task's files inline (see :mod:`sim.wfformat_legacy`). Every problem in a file (malformed
JSON, missing or mistyped fields, unknown references, cycles) is reported at once as one
:class:`~sim.errors.WorkflowError`. Nothing is ever fetched: WfCommons' own ``Instance`` class
downloads the schema at run time, so it is not used.

Conversion to :mod:`sim.model`:

* ``work = runtimeInSeconds * coreCount * REFERENCE_SPEED``; ``cores = ceil(coreCount)``.
* ``memoryInBytes`` -> ``memory``; ``command.program`` + ``arguments`` joined by spaces.
* A task's ``parents`` (plus tasks that list it as a child) minus the producers of its input
  files become its *explicit* parents: data dependencies are derived from files by the model.
* ``category``, ``gpuCount`` and ``workInFlop`` are our extensions (WfFormat permits extra
  properties). Without ``category`` a task's category is its ``name``; a ``name`` equal to the
  ``id`` reads as no name.

Writing produces 1.6 (default) or 1.5, and ``read(write(wf)) == wf`` holds exactly: the runtime
is chosen so the reader recomputes the same ``work`` bit for bit, and ``workInFlop`` is added
for the rare float that no runtime reproduces.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sim.errors import WorkflowError
from sim.json_fields import FieldChecker
from sim.model import REFERENCE_SPEED, File, Task, Workflow
from sim.wfformat_legacy import workflow_from_v14
from sim.wfformat_tasks import build_workflow, explicit_parents, read_run
from sim.workflow_stats import level_widths

READ_VERSIONS = ("1.4", "1.5", "1.6")
WRITE_VERSIONS = ("1.5", "1.6")
DEFAULT_WRITE_VERSION = "1.6"

_PLACEHOLDER_EXECUTED_AT = "1970-01-01T00:00:00Z"
"""WfFormat requires ``execution.executedAt``; a fixed value keeps written files reproducible."""


# --- reading ------------------------------------------------------------------------------


def read_workflow(path: str | Path) -> Workflow:
    """Read a WfFormat file; raise :class:`WorkflowError` naming every problem in it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkflowError(str(path), [f"cannot read file: {exc}"]) from exc
    return loads_workflow(text, subject=str(path))


def loads_workflow(text: str, subject: str = "<string>") -> Workflow:
    """Parse WfFormat JSON text (``subject`` names it in error messages)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkflowError(subject, [f"malformed JSON: {exc}"]) from exc
    return workflow_from_dict(doc, subject)


def workflow_from_dict(doc: Any, subject: str = "<document>") -> Workflow:
    """Convert a parsed WfFormat document, dispatching on its ``schemaVersion``."""
    if not isinstance(doc, Mapping):
        raise WorkflowError(subject, ["top level must be a JSON object"])
    version = doc.get("schemaVersion")
    if version is None:
        raise WorkflowError(subject, ["missing 'schemaVersion'"])
    if version not in READ_VERSIONS:
        raise WorkflowError(
            subject,
            [f"unknown schemaVersion {version!r} (readable: {', '.join(READ_VERSIONS)})"],
        )
    if version == "1.4":
        return workflow_from_v14(doc, subject)
    return _workflow_from_v15(doc, subject)


def _workflow_from_v15(doc: Mapping[str, Any], subject: str) -> Workflow:
    check = FieldChecker()
    name = check.get(doc, "name", "str", "instance", default="")
    description = check.get(doc, "description", "str", "instance", required=False, default="")
    workflow = check.get(doc, "workflow", "object", "instance", default={})
    spec = check.get(workflow, "specification", "object", "workflow", default={})
    spec_tasks = check.get(spec, "tasks", "list", "workflow.specification", default=[])
    spec_files = check.get(spec, "files", "list", "workflow.specification", required=False,
                           default=[])
    execution = check.get(workflow, "execution", "object", "workflow", default={})
    exec_tasks = check.get(execution, "tasks", "list", "workflow.execution", default=[])

    files = [f for i, raw in check.objects(spec_files, "specification file")
             if (f := _read_file(check, raw, i))]
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
    tasks = explicit_parents(check, declared)
    meta = {"schemaVersion": str(doc["schemaVersion"])}
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
        run = read_run(check, raw, where, runtime_keys=("runtimeInSeconds",),
                       cores_key="coreCount")
        if task_id is None:
            continue
        if task_id in runs:
            check.add(f"{where}: duplicate execution entry")
            continue
        runs[task_id] = run
    return runs


def workflow_to_dict(wf: Workflow, schema_version: str = DEFAULT_WRITE_VERSION) -> dict[str, Any]:
    """The WfFormat document for ``wf`` (1.5 or 1.6, which share one layout)."""
    if schema_version not in WRITE_VERSIONS:
        raise WorkflowError(
            wf.name or "workflow",
            [f"cannot write schemaVersion {schema_version!r} "
             f"(writable: {', '.join(WRITE_VERSIONS)})"],
        )
    doc: dict[str, Any] = {"name": wf.name}
    if wf.description:
        doc["description"] = wf.description
    doc["schemaVersion"] = schema_version
    spec: dict[str, Any] = {
        "tasks": [
            {
                "name": t.name or t.id,
                "id": t.id,
                "category": t.category,
                "parents": list(wf.parents[t.id]),
                "children": list(wf.children[t.id]),
                "inputFiles": list(t.inputs),
                "outputFiles": list(t.outputs),
            }
            for t in wf.tasks
        ],
        "files": [{"id": f.id, "sizeInBytes": f.size} for f in wf.files],
    }
    execution: dict[str, Any] = {
        "makespanInSeconds": 0.0,
        "executedAt": _PLACEHOLDER_EXECUTED_AT,
        "tasks": [_execution_entry(t) for t in wf.tasks],
    }
    if schema_version == "1.6":
        widths = level_widths(wf)
        spec["metrics"] = {
            "numberOfTasks": len(wf.tasks),
            "numberOfFiles": len(wf.files),
            "sumOfFileSizesInBytes": wf.total_bytes,
            "numberOfLevels": len(widths),
            "minimumWidth": min(widths),
            "maximumWidth": max(widths),
        }
        execution["metrics"] = {"sumTaskRuntimesInSeconds": sum(t.runtime for t in wf.tasks)}
    doc["workflow"] = {"specification": spec, "execution": execution}
    return doc


def _execution_entry(task: Task) -> dict[str, Any]:
    runtime, exact = runtime_reproducing(task.work, task.cores)
    entry: dict[str, Any] = {"id": task.id, "runtimeInSeconds": runtime, "coreCount": task.cores}
    if not exact:
        entry["workInFlop"] = task.work
    if task.memory:
        entry["memoryInBytes"] = task.memory
    if task.gpus:
        entry["gpuCount"] = task.gpus
    if task.command is not None:
        program, *arguments = task.command.split(" ")
        entry["command"] = {"program": program, "arguments": arguments}
    return entry


def runtime_reproducing(work: float, cores: int) -> tuple[float, bool]:
    """A runtime ``r`` with ``r * (cores * REFERENCE_SPEED) == work``, and whether one exists.

    ``work / scale`` is within an ulp or two of such a value when it exists; the neighbours are
    tried in turn. When none reproduces ``work`` the plain quotient is returned with False.
    """
    scale = cores * REFERENCE_SPEED
    first = work / scale
    candidate = first
    for step in range(5):
        for direction in (math.inf, -math.inf):
            candidate = first
            for _ in range(step):
                candidate = math.nextafter(candidate, direction)
            if candidate * scale == work:
                return candidate, True
    return first, False


def dumps_workflow(wf: Workflow, schema_version: str = DEFAULT_WRITE_VERSION) -> str:
    """WfFormat JSON text for ``wf``, ending with a newline."""
    return json.dumps(workflow_to_dict(wf, schema_version), indent=2) + "\n"


def write_workflow(
    wf: Workflow, path: str | Path, schema_version: str = DEFAULT_WRITE_VERSION
) -> None:
    """Write ``wf`` as a WfFormat file (the text is built fully before the file is opened)."""
    text = dumps_workflow(wf, schema_version)
    Path(path).write_text(text, encoding="utf-8")
