"""An independent checker of simulated (or planned) executions.

It re-derives every rule of the execution model from the records alone, sharing no code with
the simulator or the schedulers, so a bug in either shows up here:

* each task ran exactly once, on a node that exists and can host it, for its modelled duration;
* cores and memory of a node are never oversubscribed at any instant;
* a task starts only after each parent has finished;
* each input file is on the task's node before it starts: produced there, or delivered by a
  transfer record whose source held the file when the transfer began;
* the reported makespan is the last task's end.
"""

from __future__ import annotations

from collections import defaultdict

from sim.errors import ScheduleError, raise_if
from sim.model import Platform, Workflow, node_fits
from sim.schedule import SHARED_FS, SimResult, TaskRecord, TransferRecord


def validate_schedule(workflow: Workflow, platform: Platform, result: SimResult) -> list[str]:
    """Every violation of the execution model in ``result``, one line each (empty: valid)."""
    tolerance = 1e-9 * max(1.0, result.makespan)
    problems = _task_problems(workflow, platform, result, tolerance)
    records = {r.task: r for r in result.tasks}
    if len(records) != len(workflow.tasks) or problems:
        return problems  # timing checks need exactly one sane record per task
    problems += _capacity_problems(workflow, platform, result.tasks)
    problems += _precedence_problems(workflow, records, tolerance)
    problems += _data_problems(workflow, records, result.transfers, tolerance)
    last_end = max((r.end for r in result.tasks), default=0.0)
    if abs(result.makespan - last_end) > tolerance:
        problems.append(f"makespan {result.makespan} differs from the last task end {last_end}")
    return problems


def check_schedule(workflow: Workflow, platform: Platform, result: SimResult) -> None:
    """Raise :class:`ScheduleError` listing every violation in ``result``."""
    raise_if(
        validate_schedule(workflow, platform, result),
        ScheduleError,
        f"{result.scheduler or 'schedule'} on {workflow.name}",
    )


def _task_problems(
    workflow: Workflow, platform: Platform, result: SimResult, tolerance: float
) -> list[str]:
    problems: list[str] = []
    counts: dict[str, int] = defaultdict(int)
    for r in result.tasks:
        counts[r.task] += 1
    for task_id, count in counts.items():
        if task_id not in workflow.task_by_id:
            problems.append(f"record for unknown task {task_id!r}")
        elif count > 1:
            problems.append(f"task {task_id!r} ran {count} times")
    problems += [f"task {t.id!r} never ran" for t in workflow.tasks if t.id not in counts]
    nodes = platform.node_by_name
    for r in result.tasks:
        task = workflow.task_by_id.get(r.task)
        node = nodes.get(r.node)
        if task is None:
            continue
        if node is None:
            problems.append(f"task {r.task!r} ran on unknown node {r.node!r}")
            continue
        if not node_fits(task, node):
            problems.append(f"task {r.task!r} ran on {r.node!r}, which cannot host it")
        expected = task.work / (node.speed * task.cores)
        if abs((r.end - r.start) - expected) > tolerance + 1e-9 * expected:
            problems.append(
                f"task {r.task!r} ran {r.end - r.start:.9g} s on {r.node!r}, "
                f"its model duration is {expected:.9g} s"
            )
    return problems


def _capacity_problems(
    workflow: Workflow, platform: Platform, records: tuple[TaskRecord, ...]
) -> list[str]:
    """Sweep each node's start/end events; ends before starts at the same instant."""
    problems: list[str] = []
    events: dict[str, list[tuple[float, int, str]]] = defaultdict(list)
    for r in records:
        if r.end > r.start:
            events[r.node].append((r.start, 1, r.task))
            events[r.node].append((r.end, 0, r.task))
    for node_name, node_events in events.items():
        node = platform.node_by_name[node_name]
        cores = memory = 0
        for time, is_start, task_id in sorted(node_events):
            task = workflow.task_by_id[task_id]
            sign = 1 if is_start else -1
            cores += sign * task.cores
            memory += sign * task.memory
            if cores > node.cores:
                problems.append(
                    f"node {node_name!r} runs {cores} cores > {node.cores} at t={time:.9g} "
                    f"(starting {task_id!r})"
                )
            if memory > node.memory:
                problems.append(
                    f"node {node_name!r} holds {memory} B memory > {node.memory} at "
                    f"t={time:.9g} (starting {task_id!r})"
                )
    return problems


def _precedence_problems(
    workflow: Workflow, records: dict[str, TaskRecord], tolerance: float
) -> list[str]:
    problems = []
    for child, parents in workflow.parents.items():
        for parent in parents:
            if records[child].start < records[parent].end - tolerance:
                problems.append(
                    f"task {child!r} starts at {records[child].start:.9g} before its parent "
                    f"{parent!r} ends at {records[parent].end:.9g}"
                )
    return problems


def _data_problems(
    workflow: Workflow,
    records: dict[str, TaskRecord],
    transfers: tuple[TransferRecord, ...],
    tolerance: float,
) -> list[str]:
    problems: list[str] = []
    # When each file became available where: produced on its node, or copied by a transfer.
    present: dict[tuple[str, str], float] = {}
    for file_id, producer in workflow.producer.items():
        present[(file_id, records[producer].node)] = records[producer].end
    for file_id in workflow.input_files:
        present[(file_id, SHARED_FS)] = 0.0
    for tr in sorted(transfers, key=lambda t: t.start):
        held_since = present.get((tr.file, tr.source))
        if held_since is None or tr.start < held_since - tolerance:
            problems.append(
                f"transfer of {tr.file!r} from {tr.source!r} starts at {tr.start:.9g} "
                "before the file is there"
            )
            continue
        if tr.end < tr.start:
            problems.append(f"transfer of {tr.file!r} to {tr.destination!r} ends before it starts")
        key = (tr.file, tr.destination)
        present[key] = min(present.get(key, tr.end), tr.end)
    for r in records.values():
        for file_id in workflow.task_by_id[r.task].inputs:
            arrived = present.get((file_id, r.node))
            if arrived is None:
                problems.append(f"task {r.task!r} reads {file_id!r}, never delivered to {r.node!r}")
            elif r.start < arrived - tolerance:
                problems.append(
                    f"task {r.task!r} starts at {r.start:.9g} on {r.node!r} before its input "
                    f"{file_id!r} arrives at {arrived:.9g}"
                )
    return problems
