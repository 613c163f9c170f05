"""A finished dynamic simulation leaves nothing behind on the compiled core.

The core's run holds the scheduler's callbacks, which hold the run's Python wrapper, which holds
the core's run: a cycle only the garbage collector can free, so the core's run type must take
part in collection. When it did not, every comparison in a chat session kept its simulations,
forks and learned networks alive (9 MB a question, answers 5x slower after 120 questions).
"""

from __future__ import annotations

import gc
import weakref

import pytest

from sim import fast
from sim.engine import simulate
from sim.fast import CoreRun
from sim.fork import continue_from
from sim.generators import generate_workflow
from sim.placement import EarliestFinishPlacement
from sim.platforms import ClusterSpec, generate_platform
from sim.schedule import ClusterView

pytestmark = pytest.mark.skipif(not fast.enabled(), reason="needs the compiled core")


class _ForkingEft(EarliestFinishPlacement):
    """Earliest finish that also forks the run at every 4th decision (as rollout planners do)."""

    def __init__(self) -> None:
        super().__init__()
        self.decisions = 0

    def choose_node(self, task: str, view: ClusterView) -> str:
        self.decisions += 1
        if self.decisions % 4 == 0:
            continue_from(view, EarliestFinishPlacement())
        return super().choose_node(task, view)


def _live_core_runs() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, CoreRun))


def test_a_dynamic_run_and_its_scheduler_are_freed_once_done() -> None:
    workflow = generate_workflow("montage", 60, seed=1)
    platform = generate_platform(ClusterSpec(nodes=4, heterogeneous=True), seed=1)
    scheduler = _ForkingEft()
    simulate(workflow, platform, scheduler)
    assert scheduler.decisions == len(workflow.tasks)
    gone = weakref.ref(scheduler)
    del scheduler
    gc.collect()
    assert gone() is None, "the finished run still holds its scheduler"


def test_thirty_forking_simulations_leave_no_core_run_alive() -> None:
    workflow = generate_workflow("montage", 60, seed=2)
    platform = generate_platform(ClusterSpec(nodes=4, heterogeneous=True), seed=2)
    simulate(workflow, platform, _ForkingEft())  # warm-up: compiled instances are cached
    before = _live_core_runs()
    for _ in range(30):
        simulate(workflow, platform, _ForkingEft())
    assert _live_core_runs() == before == 0
