"""Dynamic mode: when the scheduler is asked, what it sees, and what happens with its answers."""

from __future__ import annotations

import pytest

from sim.engine import simulate
from sim.model import Platform, Task, Workflow
from sim.placement import EarliestFinishPlacement
from sim.schedule import SHARED_FS, ClusterView
from tests.sim.engine_builders import GB, node, platform, workflow


class Scripted:
    """Places tasks from a fixed table and logs every decision with what the view showed."""

    name = "scripted"

    def __init__(self, placement: dict[str, str], priority: dict[str, float] | None = None):
        self.placement = placement
        self.priorities = priority or {}
        self.log: list[tuple[str, float, int]] = []
        self.views: list[ClusterView] = []

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self.log.clear()

    def priority(self, task: str) -> float:
        return self.priorities.get(task, 0.0)

    def choose_node(self, task: str, view: ClusterView) -> str:
        node = self.placement[task]
        self.log.append((task, view.now, view.free_cores(node)))
        self.views.append(view)
        return node


def test_tasks_are_placed_when_ready_by_priority_then_topological_order() -> None:
    wf = workflow(
        [Task("a", 1e9), Task("b", 1e9), Task("c", 1e9), Task("d", 1e9, parents=("a", "b"))], {}
    )
    sched = Scripted({t: "n1" for t in "abcd"}, priority={"c": 5.0})
    result = simulate(wf, platform(node("n1", cores=4)), sched)
    assert [(t, now) for t, now, _ in sched.log] == [("c", 0), ("a", 0), ("b", 0), ("d", 1.0)]
    assert result.record_by_task["d"].ready == pytest.approx(1.0)


def test_missing_inputs_move_when_placed_and_a_copy_in_flight_is_shared() -> None:
    wf = workflow(
        [
            Task("p", 1e9, outputs=("x",)),
            Task("c1", 1e9, inputs=("x",)),
            Task("c2", 3e9, inputs=("x",)),
        ],
        {"x": 2 * GB},
    )
    sched = Scripted({"p": "n1", "c1": "n2", "c2": "n2"})
    result = simulate(wf, platform(node("n1"), node("n2", cores=2)), sched)
    assert [(t.file, t.source, t.destination, t.start, t.end) for t in result.transfers] == [
        ("x", "n1", "n2", 1.0, 3.0)
    ]
    assert result.makespan == pytest.approx(6.0)


def test_the_view_reports_locations_estimates_and_queue_state() -> None:
    wf = workflow(
        [Task("p", 2e9, inputs=("in",), outputs=("x",)), Task("c", 1e9, inputs=("x",))],
        {"in": GB, "x": GB},
    )
    seen: dict[str, object] = {}

    class Probe(Scripted):
        def choose_node(self, task: str, view: ClusterView) -> str:
            if task == "c":
                seen["locations"] = view.file_locations("x")
                seen["in"] = view.file_locations("in")
                seen["on_n1"] = view.estimate_finish("c", "n1")
                seen["on_n2"] = view.estimate_finish("c", "n2")
                seen["transfer"] = view.estimate_transfer(GB, "n1", "n2")
                seen["runtime"] = view.estimate_runtime("c", "n2")
                seen["task_node"] = view.task_node("p")
            else:
                seen["avail_before"] = view.available_time("n1")
            return super().choose_node(task, view)

    pf = platform(node("n1"), node("n2", bandwidth=0.5e9), latency=0.1)
    simulate(wf, pf, Probe({"p": "n1", "c": "n2"}))
    assert seen["avail_before"] == 0.0
    assert seen["locations"] == frozenset({"n1"})
    assert seen["in"] == frozenset({"n1", SHARED_FS})
    now = 0.1 + 1.0 + 2.0  # "in" read (latency + 1 GB at 1 GB/s), then p's 2 s
    assert seen["on_n1"] == pytest.approx(now + 1.0)
    assert seen["transfer"] == pytest.approx(0.1 + 2.0)
    assert seen["on_n2"] == pytest.approx(now + 2.1 + 1.0)
    assert seen["runtime"] == pytest.approx(1.0)
    assert seen["task_node"] == "n1"


def test_available_time_projects_the_queue_onto_the_cores() -> None:
    wf = workflow([Task(f"t{i}", 2e9) for i in range(3)] + [Task("probe", 1e9)], {})
    times: list[float] = []

    class Probe(Scripted):
        def choose_node(self, task: str, view: ClusterView) -> str:
            if task == "probe":
                times.append(view.available_time("n1"))
                times.append(view.estimate_finish("probe", "n1"))
            return super().choose_node(task, view)

    sched = Probe({"t0": "n1", "t1": "n1", "t2": "n1", "probe": "n1"}, {"probe": -1.0})
    simulate(wf, platform(node("n1", cores=2)), sched)
    # t0, t1 take both cores for 2 s; t2 runs 2..4 on one core; the probe could start at 2.
    assert times == pytest.approx([4.0, 3.0])


def test_earliest_finish_placement_prefers_the_node_holding_the_data() -> None:
    wf = workflow([Task("p", 1e9, outputs=("x",)), Task("c", 1e9, inputs=("x",))], {"x": 10 * GB})
    result = simulate(wf, platform(node("n1"), node("n2")), EarliestFinishPlacement())
    assert result.placements == {"p": "n1", "c": "n1"}
    assert result.transfers == ()
