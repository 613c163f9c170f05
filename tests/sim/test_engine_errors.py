"""Bad input fails before simulating, with a message naming what is wrong."""

from __future__ import annotations

import pytest

from sim.engine import simulate
from sim.errors import PlatformError, ScheduleError, WorkflowError
from sim.model import Node, Platform, Task
from sim.schedule import ClusterView, StaticSchedule
from tests.sim.engine_builders import node, pinned, platform, workflow


def test_a_task_that_fits_no_node_is_named() -> None:
    wf = workflow([Task("small", 1e9), Task("huge", 1e9, cores=64)], {})
    with pytest.raises(WorkflowError, match=r"'huge'"):
        simulate(wf, platform(node("n1", cores=8)), pinned({"small": "n1", "huge": "n1"}))


def test_an_unknown_node_in_a_static_schedule_is_named() -> None:
    wf = workflow([Task("a", 1e9)], {})
    with pytest.raises(ScheduleError, match=r"'ghost'"):
        simulate(wf, platform(node("n1")), pinned({"a": "ghost"}))


def test_a_missing_task_in_a_static_schedule_is_named() -> None:
    wf = workflow([Task("a", 1e9), Task("b", 1e9)], {})
    with pytest.raises(ScheduleError, match=r"'b' is not placed"):
        simulate(wf, platform(node("n1")), pinned({"a": "n1"}))


def test_a_per_node_order_that_would_deadlock_is_rejected() -> None:
    wf = workflow([Task("a", 1e9, outputs=("x",)), Task("b", 1e9, inputs=("x",))], {"x": 1})
    bad = StaticSchedule({"a": "n1", "b": "n1"}, {"n1": ("b", "a")}, "backwards")
    with pytest.raises(ScheduleError, match=r"deadlock"):
        simulate(wf, platform(node("n1")), bad)


def test_zero_bandwidth_is_rejected_when_the_platform_is_built() -> None:
    with pytest.raises(PlatformError, match=r"'n1'.*bandwidth"):
        Platform("p", (Node("n1", 1, bandwidth=0.0),))


class Stubborn:
    """A scheduler that always answers with the same node name."""

    def __init__(self, answer: str) -> None:
        self.name = "stubborn"
        self.answer = answer

    def reset(self, workflow: object, platform: object) -> None:
        pass

    def priority(self, task: str) -> float:
        return 0.0

    def choose_node(self, task: str, view: ClusterView) -> str:
        return self.answer


def test_a_scheduler_choosing_an_unknown_node_is_named_with_the_task() -> None:
    wf = workflow([Task("a", 1e9)], {})
    with pytest.raises(ScheduleError, match=r"'stubborn'.*'a'.*'nowhere'"):
        simulate(wf, platform(node("n1")), Stubborn("nowhere"))


def test_a_scheduler_choosing_a_node_too_small_is_named_with_the_task() -> None:
    wf = workflow([Task("wide", 1e9, cores=4)], {})
    pf = platform(node("tiny", cores=1), node("big", cores=4))
    with pytest.raises(ScheduleError, match=r"'wide'.*'tiny'.*cannot host"):
        simulate(wf, pf, Stubborn("tiny"))


def test_an_unknown_network_model_is_refused() -> None:
    wf = workflow([Task("a", 1e9)], {})
    with pytest.raises(ScheduleError, match=r"'lossy'"):
        simulate(wf, platform(node("n1")), pinned({"a": "n1"}), "lossy")  # type: ignore[arg-type]
