"""The validator accepts a real execution and names each kind of hand-made violation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from policy.base import plan_and_simulate
from policy.heft import HEFT
from policy.validate import check_schedule, validate_schedule
from sim.errors import ScheduleError
from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow
from sim.schedule import SimResult, TaskRecord


def _instance() -> tuple[Workflow, Platform]:
    """a -> b, a -> c on two one-core nodes with slow links: b and c run on different nodes."""
    files = (File("in", 10**6), File("ab", 10**9), File("ac", 10**9))
    tasks = (
        Task("a", 10 * REFERENCE_SPEED, inputs=("in",), outputs=("ab", "ac")),
        Task("b", 10 * REFERENCE_SPEED, inputs=("ab",)),
        Task("c", 10 * REFERENCE_SPEED, inputs=("ac",)),
    )
    nodes = (Node("n0", 1, bandwidth=1e9), Node("n1", 1, bandwidth=1e9))
    return Workflow("vee", tasks, files), Platform("two", nodes)


@pytest.fixture
def valid() -> tuple[Workflow, Platform, SimResult]:
    workflow, platform = _instance()
    result = plan_and_simulate(HEFT(), workflow, platform, "ideal")
    assert len(set(result.placements.values())) == 2
    return workflow, platform, result


def _with_task(result: SimResult, task: str, **changes: object) -> SimResult:
    tasks = tuple(replace(r, **changes) if r.task == task else r for r in result.tasks)  # type: ignore[arg-type]
    return replace(result, tasks=tasks)


def _remote_child(result: SimResult) -> str:
    return next(t for t in ("b", "c") if result.placements[t] != result.placements["a"])


def test_accepts_a_simulated_execution(valid: tuple[Workflow, Platform, SimResult]) -> None:
    workflow, platform, result = valid
    assert validate_schedule(workflow, platform, result) == []
    check_schedule(workflow, platform, result)


def test_task_missing_or_duplicated(valid: tuple[Workflow, Platform, SimResult]) -> None:
    workflow, platform, result = valid
    missing = replace(result, tasks=result.tasks[:-1])
    assert any("never ran" in p for p in validate_schedule(workflow, platform, missing))
    doubled = replace(result, tasks=(*result.tasks, result.tasks[0]))
    assert any("ran 2 times" in p for p in validate_schedule(workflow, platform, doubled))
    with pytest.raises(ScheduleError):
        check_schedule(workflow, platform, missing)


def test_unknown_or_unfit_node(valid: tuple[Workflow, Platform, SimResult]) -> None:
    workflow, platform, result = valid
    moved = _with_task(result, "a", node="nowhere")
    assert any("unknown node" in p for p in validate_schedule(workflow, platform, moved))
    big = replace(
        workflow, tasks=tuple(replace(t, cores=2) if t.id == "a" else t for t in workflow.tasks)
    )
    assert any("cannot host" in p for p in validate_schedule(big, platform, result))


def test_wrong_duration(valid: tuple[Workflow, Platform, SimResult]) -> None:
    workflow, platform, result = valid
    record = result.record_by_task["b"]
    short = _with_task(result, "b", end=record.end - 1.0)
    assert any("model duration" in p for p in validate_schedule(workflow, platform, short))


def test_cores_oversubscribed(valid: tuple[Workflow, Platform, SimResult]) -> None:
    workflow, platform, result = valid
    child = _remote_child(result)
    node_a = result.placements["a"]
    other = "c" if child == "b" else "b"  # the child sharing a's node
    record = result.record_by_task[other]
    # Move the remote child onto a's node, overlapping the other child.
    clash = _with_task(result, child, node=node_a, start=record.start, end=record.end)
    problems = validate_schedule(workflow, platform, clash)
    assert any("cores" in p for p in problems)


def test_precedence_violated(valid: tuple[Workflow, Platform, SimResult]) -> None:
    workflow, platform, result = valid
    child = _remote_child(result)
    early = _with_task(result, child, start=0.0, end=10.0 / 1.0)
    assert any("before its parent" in p for p in validate_schedule(workflow, platform, early))


def test_input_never_delivered_or_late(valid: tuple[Workflow, Platform, SimResult]) -> None:
    workflow, platform, result = valid
    child = _remote_child(result)
    edge_file = "ab" if child == "b" else "ac"
    dropped = replace(result, transfers=tuple(t for t in result.transfers if t.file != edge_file))
    assert any("never delivered" in p for p in validate_schedule(workflow, platform, dropped))
    late = replace(
        result,
        transfers=tuple(
            replace(t, end=t.end + 100.0) if t.file == edge_file else t for t in result.transfers
        ),
    )
    assert any("before its input" in p for p in validate_schedule(workflow, platform, late))
    premature = replace(
        result,
        transfers=tuple(
            replace(t, start=0.0) if t.file == edge_file else t for t in result.transfers
        ),
    )
    assert any(
        "before the file is there" in p for p in validate_schedule(workflow, platform, premature)
    )


def test_makespan_mismatch(valid: tuple[Workflow, Platform, SimResult]) -> None:
    workflow, platform, result = valid
    wrong = replace(result, makespan=result.makespan + 5.0)
    assert any("makespan" in p for p in validate_schedule(workflow, platform, wrong))


def test_records_built_by_hand_pass_when_consistent() -> None:
    workflow, platform = _instance()
    tasks = (TaskRecord("a", "n0", 0, 0.001001, 10.001001),)
    partial = SimResult("vee", "two", "hand", "ideal", 10.001001, tasks, (), 0.0)
    assert any("never ran" in p for p in validate_schedule(workflow, platform, partial))
