"""TDCA (He et al. 2019) planned per arrival: every schedule valid with its copies, a copy that
shortens the makespan, chains kept whole, nothing started before its workflow arrives."""

from __future__ import annotations

import pytest

from policy.duplication import CopyPlan
from policy.tdca import Tdca
from policy.validate import validate_schedule
from sim.arrivals import Stream, merge_stream
from sim.metrics import critical_path_bound, lower_bound
from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow
from sim.schedule import NetworkModel
from tests.policy.conftest import checked_copy_run, fork_over_slow_links, small_gpu_streams


@pytest.mark.parametrize("model", ["fair", "ideal"])
def test_every_tdca_schedule_is_valid_with_its_copies_and_starts_nothing_before_arrival(
    model: NetworkModel,
) -> None:
    copies = gpu_tasks = 0
    for stream, platform in small_gpu_streams():
        merged = merge_stream(stream)
        gpu_tasks += sum(t.gpus > 0 for t in merged.tasks)
        plan, result = checked_copy_run(Tdca(), merged, platform, model)
        release = {t.id: t.release for t in merged.tasks}
        assert all(r.start >= release[r.task] for r in result.tasks)
        copies += plan.copy_count
    assert copies > 0 and gpu_tasks > 0


def test_a_duplicate_of_the_shared_parent_strictly_shortens_the_makespan() -> None:
    workflow, platform = fork_over_slow_links()
    with_copies = Tdca().plan(workflow, platform)
    without = Tdca(duplicate=False).plan(workflow, platform)
    assert with_copies.copy_count == 1 and without.copy_count == 0
    assert set(with_copies.copies) == {"p"}
    assert with_copies.makespan == pytest.approx(21.0, abs=1e-3)  # both children start at 1 s
    assert without.makespan > 30.0  # the second child waits 10 s for its data, or for a core
    assert validate_schedule(workflow, platform, with_copies.to_result("tdca"), copies=True) == []


def _chain(length: int) -> Workflow:
    """A chain linked by control edges only: no communication anywhere."""
    tasks = [Task("t0", 10 * REFERENCE_SPEED)]
    tasks += [
        Task(f"t{k}", (10 + k) * REFERENCE_SPEED, parents=(f"t{k - 1}",)) for k in range(1, length)
    ]
    return Workflow("chain", tuple(tasks), ())


def test_a_chain_without_communication_is_one_cluster_on_the_fastest_node_at_the_bound() -> None:
    workflow = _chain(6)
    nodes = (Node("slow", 2, speed=REFERENCE_SPEED), Node("fast", 2, speed=3 * REFERENCE_SPEED))
    platform = Platform("mixed", nodes)
    scheduler = Tdca()
    plan = scheduler.plan(workflow, platform)
    assert scheduler.cluster_sizes == [6]
    assert set(plan.placement.values()) == {"fast"} and plan.copy_count == 0
    assert plan.makespan == pytest.approx(critical_path_bound(workflow, platform), rel=1e-9)
    assert plan.makespan >= lower_bound(workflow, platform) - 1e-9


def test_what_was_planned_never_depends_on_later_arrivals() -> None:
    stream, platform = small_gpu_streams()[2]
    merged = merge_stream(stream)
    early = merge_stream(Stream("early", stream.arrivals[:4]))
    full, part = Tdca().plan(merged, platform), Tdca().plan(early, platform)
    assert {t: full.start[t] for t in part.start} == part.start
    assert {t: full.copies.get(t) for t in part.copies} == part.copies


def test_a_gpu_task_is_never_copied_onto_a_node_without_gpus() -> None:
    """A task of a cluster left without a node of its own may go to any host; the duplicates
    above it that need a GPU are then not copied there."""
    files = (File("in", 0), File("a", 10**9))
    tasks = (
        Task("g", REFERENCE_SPEED, gpus=1, inputs=("in",), outputs=("a",)),
        Task("c", 20 * REFERENCE_SPEED, inputs=("a",)),
    )
    nodes = (Node("gpu", 1, gpus=1, bandwidth=1e9), Node("cpu", 1, bandwidth=1e9))
    workflow, platform = Workflow("gpu-pair", tasks, files), Platform("mixed", nodes)
    plan = CopyPlan(workflow, platform)
    plan.place(plan.slot("g", nodes[0]))
    slot, copies = Tdca()._with_copies(plan, "c", nodes[1], ["g"])
    assert copies == [] and slot.node == "cpu"
    assert slot.start == pytest.approx(2.0, abs=1e-3)  # g on the GPU node, then a 1 s transfer
