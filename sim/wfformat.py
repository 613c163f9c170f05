"""Read and write WfCommons' WfFormat JSON instances (every schema version, 0.2 to 1.6).

Reading dispatches on ``schemaVersion``, as WfCommons does; a file without one is placed by
its layout (:func:`version_from_layout`). Two readers cover every version:

* :mod:`sim.wfformat_split`: 1.5 and 1.6 (``workflow.specification`` + ``workflow.execution``);
* :mod:`sim.wfformat_legacy`: 0.2 (WorkflowHub) to 1.4, tasks listing their own files and
  naming each other (references resolved by :mod:`sim.wfformat_refs`).

Every problem in a file (malformed JSON, missing or mistyped fields, unknown references,
self-loops, cycles) is reported at once as one :class:`~sim.errors.WorkflowError`. Nothing is
ever fetched: WfCommons' own ``Instance`` class downloads the schema at run time, so it is not
used.

Conversion to :mod:`sim.model`:

* ``work = runtime * cores * REFERENCE_SPEED``; ``cores = ceil(cores)`` (1 when absent).
* memory and file sizes in bytes (pre-1.4 KB spellings are converted, see the legacy reader);
  ``command.program`` + ``arguments`` as the task's argument vector, word for word.
* A task's parents (plus tasks that list it as a child) minus the producers of its input
  files become its *explicit* parents: data dependencies are derived from files by the model.
* ``category``, ``gpuCount``, ``gpuPreferred``, ``releaseInSeconds`` (a stream's arrival,
  :mod:`sim.arrivals`) and ``workInFlop`` are our extensions (WfFormat permits extra
  properties), written only when they differ from the default. Without ``category`` a task's
  category is its ``name`` (1.5/1.6); a ``name`` equal to the ``id`` reads as no name.

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
from sim.model import REFERENCE_SPEED, Task, Workflow
from sim.wfformat_legacy import TASK_LIST_KEY, workflow_from_legacy
from sim.wfformat_split import workflow_from_split
from sim.workflow_stats import level_widths

SPLIT_VERSIONS = ("1.5", "1.6")
READ_VERSIONS = (*TASK_LIST_KEY, *SPLIT_VERSIONS)
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
        version = version_from_layout(doc)
        if version is None:
            raise WorkflowError(
                subject,
                [
                    "missing 'schemaVersion', and 'workflow' holds none of 'specification', "
                    "'tasks' or 'jobs' to tell the version by"
                ],
            )
    if version in SPLIT_VERSIONS:
        return workflow_from_split(doc, subject, version)
    if version in TASK_LIST_KEY:
        return workflow_from_legacy(doc, subject, version)
    raise WorkflowError(
        subject, [f"unknown schemaVersion {version!r} (readable: {', '.join(READ_VERSIONS)})"]
    )


def version_from_layout(doc: Mapping[str, Any]) -> str | None:
    """The oldest version whose layout ``doc`` has, for files without ``schemaVersion``.

    ``specification`` -> 1.5; ``jobs`` -> 1.0 (0.2 to 1.2 read alike); ``tasks`` -> 1.4 when
    a task says ``runtimeInSeconds``, else 1.3. None when the layout is none of these.
    """
    workflow = doc.get("workflow")
    if not isinstance(workflow, Mapping):
        return None
    if "specification" in workflow:
        return "1.5"
    if isinstance(workflow.get("jobs"), list):
        return "1.0"
    tasks = workflow.get("tasks")
    if not isinstance(tasks, list):
        return None
    new = any(isinstance(t, Mapping) and "runtimeInSeconds" in t for t in tasks)
    return "1.4" if new else "1.3"


# --- writing ------------------------------------------------------------------------------


def workflow_to_dict(wf: Workflow, schema_version: str = DEFAULT_WRITE_VERSION) -> dict[str, Any]:
    """The WfFormat document for ``wf`` (1.5 or 1.6, which share one layout)."""
    if schema_version not in WRITE_VERSIONS:
        raise WorkflowError(
            wf.name or "workflow",
            [
                f"cannot write schemaVersion {schema_version!r} "
                f"(writable: {', '.join(WRITE_VERSIONS)})"
            ],
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
    if task.prefers_gpu:
        entry["gpuPreferred"] = True
    if task.release:
        entry["releaseInSeconds"] = task.release
    if task.command:
        program, *arguments = task.command
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
