"""Forking a running dynamic simulation (sim.fork): the copy continues exactly as the original."""

from __future__ import annotations

import pytest

from sim.engine import simulate
from sim.errors import ScheduleError
from sim.fork import Rollout, continue_from
from sim.generators import generate_workflow
from sim.placement import EarliestFinishPlacement
from sim.platforms import ClusterSpec, generate_platform
from sim.schedule import ClusterView, NetworkModel


class _ForkingEft(EarliestFinishPlacement):
    """Earliest finish; every ``every``-th decision also forks the run under a fresh copy."""

    def __init__(self, every: int) -> None:
        super().__init__()
        self.every = every
        self.decisions = 0
        self.rollouts: list[Rollout] = []

    def choose_node(self, task: str, view: ClusterView) -> str:
        self.decisions += 1
        if self.decisions % self.every == 0:
            self.rollouts.append(continue_from(view, EarliestFinishPlacement()))
        return super().choose_node(task, view)


@pytest.mark.parametrize("model", ["fair", "ideal"])
@pytest.mark.parametrize("family", ["montage", "genome"])
def test_a_fork_under_the_same_scheduler_replays_the_rest_of_the_run_exactly(
    family: str, model: NetworkModel
) -> None:
    workflow = generate_workflow(family, 60, seed=3, ccr=1.0)
    platform = generate_platform(ClusterSpec(nodes=6, heterogeneous=True), seed=3)
    forking = _ForkingEft(every=5)
    result = simulate(workflow, platform, forking, model)
    reference = simulate(workflow, platform, EarliestFinishPlacement(), model)
    assert result.tasks == reference.tasks  # forking leaves the original run untouched
    replayed = simulate(workflow, platform, result.to_schedule(), model).makespan
    starts = {r.task: r.start for r in result.tasks}
    assert len(forking.rollouts) == len(workflow.tasks) // 5
    for rollout in forking.rollouts:
        # Same placements, same start times to the last bit, same realised plan and replay.
        assert all(rollout.node(t) == result.placements[t] for t in starts)
        ids = rollout.wf.task_ids
        assert {ids[t]: rollout.start[t] for t in range(len(ids))} == starts
        assert [ids[t] for t in rollout.started] == [r.task for r in result.tasks]
        assert rollout.to_schedule().order == result.to_schedule().order
        assert rollout.replayed_makespan() == replayed


def test_a_fork_can_take_another_decision_and_the_original_run_does_not_see_it() -> None:
    workflow = generate_workflow("montage", 60, seed=1, ccr=1.0)
    platform = generate_platform(ClusterSpec(nodes=4, heterogeneous=True), seed=1)
    nodes = [n.name for n in platform.nodes]

    class Pinned(EarliestFinishPlacement):
        def choose_node(self, task: str, view: ClusterView) -> str:
            return nodes[0]

    class ForkOnce(EarliestFinishPlacement):
        rollout: Rollout | None = None

        def choose_node(self, task: str, view: ClusterView) -> str:
            if self.rollout is None:
                self.rollout = continue_from(view, Pinned())
            return super().choose_node(task, view)

    forking = ForkOnce()
    result = simulate(workflow, platform, forking, "fair")
    assert result.tasks == simulate(workflow, platform, EarliestFinishPlacement(), "fair").tasks
    assert forking.rollout is not None
    assert {forking.rollout.node(t.id) for t in workflow.tasks} == {nodes[0]}
    alone = simulate(workflow, platform, Pinned(), "fair")
    assert (
        forking.rollout.replayed_makespan()
        == simulate(workflow, platform, alone.to_schedule(), "fair").makespan
    )


def test_continuing_needs_the_view_of_a_running_simulation() -> None:
    with pytest.raises(ScheduleError, match="running dynamic simulation"):
        continue_from(object(), EarliestFinishPlacement())  # type: ignore[arg-type]
