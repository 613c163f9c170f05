"""An independent checker of simulated (or planned) executions.

It re-derives every rule of the execution model from the records alone, sharing no code with
the simulator or the schedulers (only the model's own definitions: which node can host a task,
how long it computes there, which GPUs it takes), so a bug in either shows up here:

* each task ran exactly once, on a node that exists and can host it, for its modelled duration
  (:func:`sim.model.compute_time`), never before its release (its workflow's arrival);
* cores, memory and GPUs of a node are never oversubscribed at any instant;
* a task starts only after each parent has finished;
* each input file is on the task's node before it starts: produced there, or delivered by a
  transfer record whose source held the file when the transfer began;
* the reported makespan is the last task's end.

With task duplication (``copies=True``: FIFO-DEFT runs a parent again on a child's node to save
a transfer) a task may run several times, at most once per node, and every rule holds for every
copy: a copy starts after *some* copy of each parent has finished, and a file is on a node once
any copy of its producer ends there (or a transfer from a node holding it lands). So a copy may
feed any successor, and no dependency is ever broken.
"""

from __future__ import annotations

from collections import defaultdict

from sim.errors import ScheduleError, raise_if
from sim.model import Platform, Workflow, compute_time, gpus_used, node_fits
from sim.schedule import SHARED_FS, SimResult, TaskRecord, TransferRecord


def validate_schedule(
    workflow: Workflow, platform: Platform, result: SimResult, *, copies: bool = False
) -> list[str]:
    """Every violation of the execution model in ``result``, one line each (empty: valid).

    ``copies``: the schedule duplicates tasks (at most one copy per node).
    """
    tolerance = 1e-9 * max(1.0, result.makespan)
    problems = _task_problems(workflow, platform, result, tolerance, copies)
    if problems:
        return problems  # timing checks need sane records, and at least one per task
    records: dict[str, list[TaskRecord]] = defaultdict(list)
    for r in result.tasks:
        records[r.task].append(r)
    problems += _capacity_problems(workflow, platform, result.tasks)
    problems += _precedence_problems(workflow, records, tolerance)
    problems += _data_problems(workflow, records, result.transfers, tolerance)
    last_end = max((r.end for r in result.tasks), default=0.0)
    if abs(result.makespan - last_end) > tolerance:
        problems.append(f"makespan {result.makespan} differs from the last task end {last_end}")
    return problems


def check_schedule(
    workflow: Workflow, platform: Platform, result: SimResult, *, copies: bool = False
) -> None:
    """Raise :class:`ScheduleError` listing every violation in ``result``."""
    raise_if(
        validate_schedule(workflow, platform, result, copies=copies),
        ScheduleError,
        f"{result.scheduler or 'schedule'} on {workflow.name}",
    )


def _task_problems(
    workflow: Workflow, platform: Platform, result: SimResult, tolerance: float, copies: bool
) -> list[str]:
    problems: list[str] = []
    counts: dict[str, int] = defaultdict(int)
    per_node: dict[tuple[str, str], int] = defaultdict(int)
    for r in result.tasks:
        counts[r.task] += 1
        per_node[(r.task, r.node)] += 1
    for task_id, count in counts.items():
        if task_id not in workflow.task_by_id:
            problems.append(f"record for unknown task {task_id!r}")
        elif count > 1 and not copies:
            problems.append(f"task {task_id!r} ran {count} times")
    if copies:
        problems += [
            f"task {task!r} ran {count} times on {node!r} (one copy per node)"
            for (task, node), count in per_node.items()
            if count > 1 and task in workflow.task_by_id
        ]
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
        expected = compute_time(task, node)
        if abs((r.end - r.start) - expected) > tolerance + 1e-9 * expected:
            problems.append(
                f"task {r.task!r} ran {r.end - r.start:.9g} s on {r.node!r}, "
                f"its model duration is {expected:.9g} s"
            )
        if r.start < task.release - tolerance:
            problems.append(
                f"task {r.task!r} starts at {r.start:.9g} before its release at {task.release:.9g}"
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
        cores = memory = gpus = 0
        for time, is_start, task_id in sorted(node_events):
            task = workflow.task_by_id[task_id]
            sign = 1 if is_start else -1
            cores += sign * task.cores
            memory += sign * task.memory
            gpus += sign * gpus_used(task, node)
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
            if gpus > node.gpus:
                problems.append(
                    f"node {node_name!r} uses {gpus} GPUs > {node.gpus} at t={time:.9g} "
                    f"(starting {task_id!r})"
                )
    return problems


def _precedence_problems(
    workflow: Workflow, records: dict[str, list[TaskRecord]], tolerance: float
) -> list[str]:
    problems = []
    for child, parents in workflow.parents.items():
        for parent in parents:
            first_end = min(r.end for r in records[parent])
            for copy in records[child]:
                if copy.start < first_end - tolerance:
                    problems.append(
                        f"task {child!r} starts at {copy.start:.9g} on {copy.node!r} before its "
                        f"parent {parent!r} ends at {first_end:.9g}"
                    )
    return problems


def _data_problems(
    workflow: Workflow,
    records: dict[str, list[TaskRecord]],
    transfers: tuple[TransferRecord, ...],
    tolerance: float,
) -> list[str]:
    problems: list[str] = []
    # When each file became available where: produced on a node (by any copy of its producer),
    # or copied there by a transfer.
    present: dict[tuple[str, str], float] = {}
    for file_id, producer in workflow.producer.items():
        for r in records[producer]:
            key = (file_id, r.node)
            present[key] = min(present.get(key, r.end), r.end)
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
    for copies in records.values():
        for r in copies:
            for file_id in workflow.task_by_id[r.task].inputs:
                arrived = present.get((file_id, r.node))
                if arrived is None:
                    problems.append(
                        f"task {r.task!r} reads {file_id!r}, never delivered to {r.node!r}"
                    )
                elif r.start < arrived - tolerance:
                    problems.append(
                        f"task {r.task!r} starts at {r.start:.9g} on {r.node!r} before its input "
                        f"{file_id!r} arrives at {arrived:.9g}"
                    )
    return problems
