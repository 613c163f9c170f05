"""The live queue as a workflow plan's holds (#41 item 7), on each release's captured queue.

The captures of ``tests/slurm/data/slurm-V/queue-model/`` (a full cluster, 20-26 jobs pending)
are the judge: the holds from now must be what ``scontrol show nodes`` counts allocated on each
node (CPUAlloc, AllocMem), the pending jobs' holds must start where the queue model starts them,
and a plan made on them never puts a task where its memory is not free.
"""

from __future__ import annotations

import pytest

from policy.registry import get_scheduler
from sim.model import Platform, Task, Workflow
from tests.slurm.test_queue_model_units import VERSIONS, _moment
from wass_chat.slurm.commands import scontrol_records
from wass_chat.slurm.nodes import platform_from_records
from wass_chat.slurm.queue_holds import BEHIND_THE_QUEUE, QueueHolds, holds_of_queue
from wass_chat.slurm.queue_model import LiveQueue, predict


def _holds(version: str) -> tuple[LiveQueue, Platform, list[dict[str, str]], QueueHolds]:
    """The captured queue, the platform of its nodes, their records, and the holds."""
    folder, queue, cluster, scheduler = _moment(version)
    records = scontrol_records((folder / "scontrol-oneliner-show-nodes.txt").read_text())
    platform = platform_from_records(records, "debug").platform
    return queue, platform, records, holds_of_queue(queue, cluster, scheduler, platform)


@pytest.mark.parametrize("version", VERSIONS)
def test_holds_from_now_are_what_slurm_counts_allocated(version: str) -> None:
    _queue, platform, records, holds = _holds(version)
    holds.occupancy.check(platform)  # never more than a node has, at any instant
    now = [h for h in holds.occupancy.holds if h.start == 0]
    cpus: dict[str, int] = {}
    memory: dict[str, int] = {}
    for h in now:
        cpus[h.node] = cpus.get(h.node, 0) + h.cores
        memory[h.node] = memory.get(h.node, 0) + h.memory
    assert cpus == {r["NodeName"]: int(r["CPUAlloc"]) for r in records if int(r["CPUAlloc"])}
    assert memory == {
        r["NodeName"]: int(r["AllocMem"]) * 2**20 for r in records if int(r["AllocMem"])
    }
    assert holds.memory_counted


@pytest.mark.parametrize("version", VERSIONS)
def test_pending_jobs_hold_their_nodes_from_their_predicted_start(version: str) -> None:
    queue, _platform, _records, holds = _holds(version)
    _folder, _queue, cluster, scheduler = _moment(version)
    prediction = predict(queue, cluster, scheduler)
    later = [h for h in holds.occupancy.holds if h.start > 0]
    assert holds.queued_ahead == len({h.job for h in later}) >= 10
    for h in later:
        start = prediction.starts[h.job]
        assert start is not None and h.node in prediction.nodes[h.job]
        assert h.start == pytest.approx((start - queue.now).total_seconds())
        waiting = queue.job(h.job)
        assert waiting is not None and waiting.limit_s is not None
        assert h.until == pytest.approx(h.start + waiting.limit_s)
    assert BEHIND_THE_QUEUE in holds.caveats
    assert holds.at_the_earliest == bool(queue.left_out or queue.future_reservations)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_plan_on_the_queue_never_overlaps_a_node_whose_memory_is_taken(version: str) -> None:
    """Every task asks the whole memory of the smallest node: wherever it goes, the holds there
    leave it that memory at every instant it runs, and its start is counted from the queue."""
    _queue, platform, _records, found = _holds(version)
    holds = found.occupancy
    memory = min(n.memory for n in platform.nodes)
    tasks = [Task("fork", 30e9, memory=memory)]
    tasks += [Task(f"b{k}", 30e9, memory=memory, parents=("fork",)) for k in range(4)]
    plan = get_scheduler("heft").plan(  # type: ignore[attr-defined]
        Workflow("fj", tuple(tasks), ()), platform, holds
    )
    for task, node in plan.placement.items():
        start, end = plan.start[task], plan.finish[task]
        near = [h for h in holds.holds if h.node == node and h.start < end and start < h.until]
        for instant in [start, *(h.start for h in near if h.start > start)]:
            used = sum(h.memory for h in near if h.start <= instant < h.until)
            assert used + memory <= platform.node_by_name[node].memory, (task, node, instant)
    assert min(plan.start.values()) > 0  # the cluster is full: nothing starts now
