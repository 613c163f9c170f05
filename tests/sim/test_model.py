"""The domain model: derived graph views and validation that names every offender."""

from __future__ import annotations

import math

import pytest

from sim.errors import PlatformError, WorkflowError
from sim.model import File, Node, Platform, Task, Workflow, check_fits, find_cycle


def diamond() -> Workflow:
    """a -> (b, c) -> d through files, plus an explicit control edge b -> c."""
    return Workflow(
        "diamond",
        (
            Task("a", 1e9, outputs=("ab", "ac")),
            Task("b", 2e9, inputs=("ab",), outputs=("bd",)),
            Task("c", 3e9, inputs=("ac", "in"), outputs=("cd",), parents=("b",)),
            Task("d", 4e9, inputs=("bd", "cd")),
        ),
        tuple(File(f, s) for f, s in [("ab", 10), ("ac", 20), ("bd", 30), ("cd", 40), ("in", 5)]),
    )


def test_graph_views_are_derived_from_files_and_explicit_parents() -> None:
    wf = diamond()
    assert wf.parents["c"] == ("a", "b")
    assert wf.children["a"] == ("b", "c")
    assert wf.edge_files[("b", "c")] == ()
    assert wf.edge_bytes("a", "c") == 20
    assert wf.input_files == ("in",)
    assert wf.topological_order == ("a", "b", "c", "d")
    assert (wf.entry_tasks, wf.exit_tasks) == (("a",), ("d",))


def problems_of(build: object) -> tuple[str, ...]:
    with pytest.raises(WorkflowError) as info:
        build()  # type: ignore[operator]
    return info.value.problems


def test_a_cycle_is_named_task_by_task() -> None:
    problems = problems_of(
        lambda: Workflow(
            "w",
            (
                Task("x", 1, inputs=("zx",), outputs=("xy",)),
                Task("y", 1, inputs=("xy",), outputs=("yz",)),
                Task("z", 1, inputs=("yz",), outputs=("zx",)),
            ),
            (File("xy", 1), File("yz", 1), File("zx", 1)),
        )
    )
    assert problems == ("cycle x -> y -> z -> x",)


def test_every_structural_problem_is_reported_at_once() -> None:
    problems = problems_of(
        lambda: Workflow(
            "w",
            (
                Task("a", -1.0, inputs=("ghost",)),
                Task("a", 1.0),
                Task("b", math.nan, parents=("nobody",)),
                Task("c", 1.0, outputs=("f",)),
                Task("d", 1.0, outputs=("f",)),
            ),
            (File("f", -5),),
        )
    )
    text = " | ".join(problems)
    for expected in (
        "duplicate task id 'a'",
        "task 'a' reads unknown file 'ghost'",
        "task 'a' has negative",
        "task 'b' has negative or undefined work",
        "task 'b' has unknown parent 'nobody'",
        "file 'f' has negative size -5",
        "file 'f' is written by both 'c' and 'd'",
    ):
        assert expected in text


def test_find_cycle_is_none_for_a_dag() -> None:
    assert find_cycle(diamond()) is None


def test_a_task_that_fits_no_node_is_named() -> None:
    platform = Platform("small", (Node("n1", 4, memory=8 * 2**30),))
    wf = Workflow("w", (Task("ok", 1.0), Task("huge", 1.0, cores=8), Task("gpu", 1.0, gpus=1)), ())
    with pytest.raises(WorkflowError) as info:
        check_fits(wf, platform)
    assert [p.split()[1] for p in info.value.problems] == ["'huge'", "'gpu'"]


def test_platform_problems_name_the_node() -> None:
    with pytest.raises(PlatformError) as info:
        Platform(
            "p", (Node("n1", 0), Node("n2", 4, bandwidth=0.0), Node("n2", 4)), shared_fs_bandwidth=0
        )
    text = " | ".join(info.value.problems)
    assert "node 'n1' has 0 cores" in text
    assert "node 'n2' has non-positive bandwidth 0.0" in text
    assert "duplicate node name 'n2'" in text
    assert "non-positive shared filesystem bandwidth" in text
