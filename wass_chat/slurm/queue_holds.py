"""The live queue as the holds a workflow plan starts from: cores and memory, node by node.

A plan that sees only the running jobs' cores is wrong twice on a busy cluster (issue #41: a
fork-join-20 predicted at 1,432 s had its first task placed two hours out): a task asking
``--mem=2048M`` cannot start on a node with 1.6 GB free however many cores are idle, and the
jobs already pending start before the workflow's, on the nodes it was planned on. The queue
model (:mod:`wass_chat.slurm.queue_model`, the one reader of the live queue the start-time
advice uses too) knows both; :func:`queue_holds` turns it into an
:class:`~sim.occupancy.Occupancy` the planners and the simulator read:

* every running job (and active reservation) holds, on each node, the CPUs and the memory
  Slurm allocated it (``scontrol -d show job``'s ``CPU_IDs``/``Mem``) from now until its start
  plus its time limit;
* every pending job that starts in its turn holds, from the start the queue model's replay
  gives it and on the nodes it puts it, its CPUs and memory per node for its whole time limit.

Memory is held only where Slurm counts it (``SelectTypeParameters=CR_*_Memory``); elsewhere
``--mem`` decides nothing and the holds take CPUs alone. The workflow's jobs are taken to queue
behind every pending job (a fresh job's priority is usually below those already waiting).

What the model cannot know makes the predicted start a bound rather than a figure (jobs ending
before their limits bring it forward; pending jobs left out, reservations that begin later and
new arrivals of higher priority push it back): :attr:`QueueHolds.caveats` say which, and
:attr:`QueueHolds.at_the_earliest` whether the start is a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sim.batch.config import SchedulerConfig
from sim.batch.model import BatchCluster
from sim.model import Platform
from sim.occupancy import Hold, Occupancy
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.occupancy import NO_END_HOLD_S
from wass_chat.slurm.queue_model import LiveQueue, live_queue, predict

BEHIND_THE_QUEUE = (
    "the workflow's jobs are taken to start after every pending job the model places; one of "
    "lower priority may in fact start after them"
)


@dataclass(frozen=True)
class QueueHolds:
    """The holds a plan starts from, and what the prediction made on them is worth."""

    occupancy: Occupancy
    caveats: tuple[str, ...]
    """What the queue model could not know, one sentence each (as the approval screen says)."""
    tolerance_s: int
    """How far Slurm's start may fall from the plan's when every job runs to its limit."""
    at_the_earliest: bool
    """Whether the plan's start times are lower bounds (pending jobs left out of the model,
    reservations that begin later)."""
    queued_ahead: int
    """Pending jobs the plan works around."""
    memory_counted: bool

    def start_words(self, first_start_s: float) -> str:
        """``first task starts in about 60 s (Slurm within 65 s of it ...)``, for people."""
        how = "at the earliest" if self.at_the_earliest else "about"
        return (
            f"first task starts {how} {first_start_s:.0f} s from now, predicted from the queue "
            f"({self.queued_ahead} pending job{'s' * (self.queued_ahead != 1)} ahead); Slurm's "
            f"start within {self.tolerance_s} s of it when every job runs to its time limit"
        )


def holds_of_queue(
    queue: LiveQueue, cluster: BatchCluster, scheduler: SchedulerConfig, platform: Platform
) -> QueueHolds:
    """The holds of ``queue`` on ``platform``'s nodes, the pending jobs' from the queue
    model's replay (pure: no Slurm call). No node is held beyond its cores or memory."""
    prediction = predict(queue, cluster, scheduler)
    now = queue.now
    holds: list[Hold] = []
    for piece in queue.held:  # running jobs, active reservations
        until = NO_END_HOLD_S if piece.end is None else _seconds(piece.end, now)
        memory = piece.mem_mb * 2**20 if queue.memory_counted else 0
        holds.append(Hold(piece.node, piece.cpus, until, piece.job_id, memory))
    ahead = 0
    for job in queue.waiting:
        start = prediction.starts.get(job.job_id)
        nodes = prediction.nodes.get(job.job_id, ())
        if start is None or not nodes:
            continue
        ahead += 1
        begin = _seconds(start, now)
        until = begin + (job.limit_s if job.limit_s is not None else NO_END_HOLD_S)
        memory = job.mem_mb_per_node * 2**20 if queue.memory_counted else 0
        holds += [Hold(n, job.cpus_per_node, until, job.job_id, memory, begin) for n in nodes]
    later = bool(queue.left_out or queue.future_reservations)
    return QueueHolds(
        occupancy=Occupancy(_capped(holds, platform)),
        caveats=(*prediction.caveats, BEHIND_THE_QUEUE),
        tolerance_s=prediction.tolerance_s,
        at_the_earliest=later,
        queued_ahead=ahead,
        memory_counted=queue.memory_counted,
    )


def _seconds(when: datetime, now: datetime) -> float:
    return max(0.0, (when - now).total_seconds())


def _capped(holds: list[Hold], platform: Platform) -> tuple[Hold, ...]:
    """``holds`` on ``platform``'s nodes, each cut so that no instant holds more cores or
    memory than its node has (taken in start order, so a queued job never displaces a running
    one); holds of other nodes, or cut to nothing, are left out."""
    nodes = platform.node_by_name
    kept: list[Hold] = []
    for h in sorted(holds, key=lambda h: h.start):
        node = nodes.get(h.node)
        if node is None or h.until <= h.start:
            continue
        overlapping = [k for k in kept if k.node == h.node and k.start <= h.start < k.until]
        cores = min(h.cores, node.cores - sum(k.cores for k in overlapping))
        memory = min(h.memory, node.memory - sum(k.memory for k in overlapping))
        if cores > 0 or memory > 0:
            kept.append(Hold(h.node, max(0, cores), h.until, h.job, max(0, memory), h.start))
    return tuple(kept)


def queue_holds(
    commands: SlurmCommands, platform: Platform, now: datetime | None = None
) -> QueueHolds:
    """Ask Slurm for the queue (:func:`~wass_chat.slurm.queue_model.live_queue`) and return
    the holds of its jobs on ``platform``'s nodes."""
    queue, cluster, scheduler = live_queue(commands, now)
    return holds_of_queue(queue, cluster, scheduler, platform)
