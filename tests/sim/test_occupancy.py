"""Other jobs' holds (sim.occupancy) in the simulator: taken at time 0, freed at their ends."""

from __future__ import annotations

import pytest

from sim.engine import simulate
from sim.errors import InputError
from sim.generators import generate_workflow
from sim.model import Node, Platform, Task, Workflow
from sim.occupancy import NO_OCCUPANCY, Hold, Occupancy, OccupancyError
from sim.platforms import ClusterSpec, generate_platform
from sim.schedule import StaticSchedule
from tests.sim.engine_builders import node, pinned, platform, workflow


def _instance() -> tuple[Workflow, Platform]:
    wf = generate_workflow("montage", 60, seed=3)
    pf = generate_platform(ClusterSpec(nodes=6, heterogeneous=True), seed=3)
    return wf, pf


def _round_robin(wf: Workflow, pf: Platform) -> StaticSchedule:
    """Tasks dealt over the nodes in topological order (a valid static schedule)."""
    names = [n.name for n in pf.nodes if n.gpus == 0] or list(pf.node_names)
    assignment = {t: names[i % len(names)] for i, t in enumerate(wf.topological_order)}
    return pinned(assignment)


def test_no_holds_is_the_idle_run() -> None:
    wf, pf = _instance()
    schedule = _round_robin(wf, pf)
    idle = simulate(wf, pf, schedule)
    assert simulate(wf, pf, schedule, occupancy=NO_OCCUPANCY) == idle
    ended = Occupancy((Hold(pf.nodes[0].name, pf.nodes[0].cores, 0.0),))
    assert simulate(wf, pf, schedule, occupancy=ended) == idle


def test_whole_node_holds_equal_background_tasks_run_first() -> None:
    """The reference: a background task per busy node, first in its order, with every core
    for ``until`` seconds; the workflow's own records must be the same to the last bit."""
    wf, pf = _instance()
    schedule = _round_robin(wf, pf)
    used = sorted(schedule.order)
    busy = {used[0]: 400.0, used[1]: 95.5}
    holds = Occupancy.whole_nodes(pf, busy)
    extra = [
        Task(
            f"bg-{n}",
            u * pf.node_by_name[n].speed * pf.node_by_name[n].cores,
            cores=pf.node_by_name[n].cores,
        )
        for n, u in busy.items()
    ]
    loaded = Workflow(wf.name, (*wf.tasks, *extra), wf.files)
    assignment = {**schedule.assignment, **{t.id: t.id[3:] for t in extra}}
    order = dict(schedule.order)
    for t in extra:
        order[t.id[3:]] = (t.id, *order.get(t.id[3:], ()))
    reference = simulate(loaded, pf, StaticSchedule(assignment, order))
    result = simulate(wf, pf, schedule, occupancy=holds)
    own = [r for r in reference.tasks if not r.task.startswith("bg-")]
    assert sorted(result.tasks, key=lambda r: r.task) == sorted(own, key=lambda r: r.task)
    idle = simulate(wf, pf, schedule)
    assert min(r.start for r in result.tasks if r.node == used[0]) >= 400.0
    assert sum(r.start for r in result.tasks) > sum(r.start for r in idle.tasks)


def test_a_partial_hold_leaves_the_other_cores_free() -> None:
    pf = platform(node("n0", cores=4))
    tasks = [Task(f"t{i}", 10e9) for i in range(3)]
    wf = workflow(tasks, {})
    occupancy = Occupancy((Hold("n0", 2, 25.0, "job-7"),))
    result = simulate(wf, pf, pinned(dict.fromkeys(("t0", "t1", "t2"), "n0")), "ideal", occupancy)
    starts = {r.task: r.start for r in result.tasks}
    assert starts == {"t0": 0.0, "t1": 0.0, "t2": 10.0}
    full = Occupancy((Hold("n0", 2, 25.0), Hold("n0", 1, 5.0)))
    starts = {
        r.task: r.start
        for r in simulate(
            wf, pf, pinned(dict.fromkeys(("t0", "t1", "t2"), "n0")), "ideal", full
        ).tasks
    }
    assert starts == {"t0": 0.0, "t1": 5.0, "t2": 10.0}


class _Earliest:
    """Dynamic: the node the view says finishes first (what sees the holds)."""

    name = "earliest"

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self.seen: list[tuple[int, float]] = []

    def priority(self, task: str) -> float:
        return 0.0

    def choose_node(self, task: str, view: object) -> str:
        v = view  # EngineView
        self.seen.append((v.free_cores("a"), v.available_time("a")))  # type: ignore[attr-defined]
        return min(("a", "b"), key=lambda n: v.estimate_finish(task, n))  # type: ignore[attr-defined]


def test_dynamic_schedulers_see_the_holds_through_the_view() -> None:
    pf = platform(Node("a", 2, speed=2e9, bandwidth=1e9), node("b", cores=2))
    wf = workflow([Task("t", 10e9)], {})
    chooser = _Earliest()
    idle = simulate(wf, pf, chooser, "ideal")
    assert idle.tasks[0].node == "a" and chooser.seen == [(2, 0.0)]
    busy = simulate(wf, pf, chooser, "ideal", Occupancy((Hold("a", 2, 30.0),)))
    assert busy.tasks[0].node == "b" and chooser.seen == [(0, 30.0)]


def test_holds_that_do_not_fit_are_refused_all_at_once() -> None:
    pf = platform(node("a", cores=2))
    wf = workflow([Task("t", 1e9)], {})
    bad = Occupancy((Hold("zz", 1, 3.0), Hold("a", 2, 1.0), Hold("a", 1, float("nan"))))
    with pytest.raises(OccupancyError) as caught:
        simulate(wf, pf, pinned({"t": "a"}), occupancy=bad)
    assert isinstance(caught.value, InputError)
    assert len(caught.value.problems) == 3
    assert "unknown node 'zz'" in caught.value.one_line()
