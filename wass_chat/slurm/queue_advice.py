"""Advice for a job waiting its turn, judged by a model of the whole queue, not --test-only alone.

A resubmitted job queues where a fresh job's priority puts it, behind the pending jobs that
outrank it; ``sbatch --test-only`` checks the one request, not the queue as it will unfold,
so its start can be far off (issue #41: "would start at 00:22", placed at 01:23). Here each
change is a fresh copy (:func:`~wass_chat.slurm.queue_model.fresh_copy`) replacing the job in
the live queue, and the batch simulator replays that queue
(:func:`~wass_chat.slurm.queue_model.predict`). The change helps only when the copy starts
more than the stated bound before the job as it stands, in the same model. ``--test-only`` is
still asked, for what it knows: whether Slurm would accept the request, and on which nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime

from sim.batch.config import SchedulerConfig
from sim.batch.model import BatchCluster
from wass_chat.slurm.advice import (
    Advice,
    Check,
    JobRequest,
    candidates,
    check,
    judge,
    test_only_said,
)
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands
from wass_chat.slurm.formats import clock, memory_mb, slurm_duration
from wass_chat.slurm.live import Snapshot
from wass_chat.slurm.queue_model import (
    LiveQueue,
    Prediction,
    Waiting,
    fresh_copy,
    live_queue,
    predict,
)

SOURCE = "queue model"
"""``Advice.start_source`` and the expected start's source for times from this model."""


@dataclass(frozen=True)
class QueueView:
    """The live queue with the job in it, and the model's start for the job as it stands."""

    queue: LiveQueue
    cluster: BatchCluster
    scheduler: SchedulerConfig
    job: Waiting
    own: Prediction

    @property
    def start(self) -> datetime | None:
        return self.own.starts.get(self.job.job_id)

    def source_words(self) -> str:
        """Where the times come from, as an answer names it."""
        s = self.scheduler
        return (
            f"our replay of the whole queue: {self.figures()['queue_running_jobs']} running "
            f"and {len(self.queue.waiting)} waiting jobs in Slurm's priority order (scontrol -d "
            f"show job), backfill every {s.bf_interval_s} s in {s.bf_resolution_s} s slots "
            "(scontrol show config)"
        )

    def figures(self) -> dict[str, float]:
        """The numbers :meth:`source_words` and :meth:`bound` state (facts an answer gives)."""
        return {
            "queue_running_jobs": len({h.job_id for h in self.queue.held if h.kind == "job"}),
            "queue_waiting_jobs": len(self.queue.waiting),
            "bf_interval_s": self.scheduler.bf_interval_s,
            "bf_resolution_s": self.scheduler.bf_resolution_s,
            "start_bound_s": self.own.tolerance_s,
        }

    def bound(self) -> str:
        """The stated bound, as an answer says it."""
        return (
            f"within about {self.own.tolerance_s} s of Slurm's own start if every job runs to "
            "its time limit; jobs that end sooner usually make it sooner, not always"
        )

    def hedge(self) -> str:
        """' at the earliest' when a job the model leaves out may jump ahead, else ''."""
        unknown = self.queue.left_out or self.queue.future_reservations
        return " at the earliest" if unknown else ""

    def why_hedged(self) -> str:
        """Why the start is only 'at the earliest' ('' when it is not)."""
        parts = []
        if self.queue.left_out:
            job, why = self.queue.left_out[0]
            more = len(self.queue.left_out) - 1
            others = f" and {more} more" if more else ""
            parts.append(
                f"the replay leaves out job {job} ({why}){others}, which would start first if it "
                "became eligible with a higher priority"
            )
        if self.queue.future_reservations:
            parts.append(
                "reservations that begin later are not replayed ("
                + ", ".join(self.queue.future_reservations[:3])
                + ")"
            )
        return "; ".join(parts)


WINDOW_SAID_S = 60
"""A window of the rules in doubt this wide or wider is said as one ("between about 10:02
and 10:04"); a narrower one as its point."""


def start_words(found: Prediction, job_id: str, now: datetime) -> str:
    """When ``found`` starts ``job_id``, as an answer says it: "now", "about 10:02", or
    "between about 10:02 and 10:04" where the rules in doubt disagree by a minute or more
    (:func:`~wass_chat.slurm.queue_model.rules_in_doubt`). '' when it is not started."""
    start = found.starts.get(job_id)
    if start is None:
        return ""
    low, high = found.window(job_id) or (start, start)
    if (high - low).total_seconds() >= WINDOW_SAID_S:
        if low <= now:
            return f"between now and about {clock(high, now)}"
        return f"between about {clock(low, now)} and {clock(high, now)}"
    return "now" if start <= now else f"about {clock(start, now)}"


def queue_view(
    commands: SlurmCommands, job_id: str, now: datetime | None = None
) -> QueueView | None:
    """The live queue around ``job_id``; None when Slurm cannot be read or the model leaves
    the job out (its reason, node list or dependency keep it from starting in its turn)."""
    try:
        queue, cluster, scheduler = live_queue(commands, now)
    except SlurmCommandError:
        return None
    job = queue.job(job_id)
    if job is None:
        return None
    return QueueView(queue, cluster, scheduler, job, predict(queue, cluster, scheduler))


def copy_of(view: QueueView, request: JobRequest) -> Waiting:
    """The changed request as a fresh job (its nodes: the request's, else the job's)."""
    low = request.nodes.split("-")[0]
    nodes = int(low) if low.isdigit() and int(low) > 0 else view.job.nodes
    limit = request.time_min * 60 if request.time_min is not None else view.job.limit_s
    return fresh_copy(
        view.job,
        view.cluster,
        job_id=f"{view.job.job_id}-changed",
        cpus=request.cpus,
        nodes=min(nodes, max(1, request.cpus)),
        limit_s=limit,
        partition=request.partition or view.job.partition,
    )


def copy_start(view: QueueView, copy: Waiting) -> tuple[datetime | None, Prediction]:
    """When ``copy`` would start if it replaced the job now."""
    others = tuple(w for w in view.queue.waiting if w.job_id != view.job.job_id)
    queue = replace(view.queue, waiting=others)
    found = predict(queue, view.cluster, view.scheduler, extra=(copy,))
    return found.starts.get(copy.job_id), found


def judge_in_queue(
    commands: SlurmCommands, view: QueueView, text: str, request: JobRequest, now: datetime
) -> Advice:
    """One change: Slurm's acceptance (``--test-only``) and the queue model's start."""
    result = check(commands, request)
    if result.start is None:
        return Advice(text, result, False, f"Slurm would refuse it: {result.refusal}")
    copy = copy_of(view, request)
    start, found = copy_start(view, copy)
    alone = _alone(result, now)
    base = view.start
    hedge = view.hedge()
    if start is None:
        outcome = f"our replay of the whole queue cannot place it on its partition{alone}"
        return Advice(text, result, None, outcome, None, SOURCE)
    bound = view.own.tolerance_s
    when = _at(start_words(found, copy.job_id, now), hedge)
    if base is None:
        outcome = f"it would start {when} (our replay of the whole queue, {view.bound()}){alone}"
        return Advice(text, result, True, outcome, start, SOURCE)
    gain = (base - start).total_seconds()
    helps: bool | None = gain > bound
    compare = "instead of"
    if 0 < gain <= bound:
        helps, compare = None, f"only {gain:.0f} s sooner, within the model's {bound} s, than"
    elif gain <= 0:
        compare = "not before"
    outcome = (
        f"it would start {when}, {compare} {start_words(view.own, view.job.job_id, now)}{hedge} "
        "for the job as it "
        f"stands (both by our replay of the whole queue, {view.bound()}; the copy queued at "
        f"priority {copy.priority}, as a fresh job's){alone}"
    )
    return Advice(text, result, helps, outcome, start, SOURCE)


def _at(words: str, hedge: str) -> str:
    """'now', or 'at about 10:02' / 'between ...' with ``hedge`` (' at the earliest') after."""
    if words == "now":
        return words
    return f"{'at ' if words.startswith('about') else ''}{words}{hedge}"


def _alone(result: Check, now: datetime) -> str:
    """What ``--test-only`` said, named as what it is: a check of one request."""
    if result.start is None:
        return ""
    said = test_only_said(result.start, now)
    return (
        f"; sbatch --test-only accepts it on {result.nodes} and says {said} (Slurm's check of "
        "this one request, not a replay of the queue)"
    )


QUEUE_CLASSES = frozenset({"resources", "priority"})
"""Reason classes of jobs waiting their turn: their advice is judged by the queue model."""
NEWCOMER_CLASSES = frozenset({"partition_limit", "node_unavailable"})
"""Pending reason classes whose advice is a request Slurm would accept where the job as it
stands never starts (a partition's limit, a node it cannot have): the changed copy is a
newcomer to the queue (:func:`judge_newcomer`). Limits of an association or QOS are not:
the copy would still be under them, and the replay does not model them."""
UNPLACED_OPTIONS = ("nodelist", "exclude", "constraint", "licenses", "gres", "reservation")
"""Request options the queue model does not place: a copy with any is judged by
``--test-only`` alone."""


def newcomer(
    cluster: BatchCluster, snap: Snapshot, request: JobRequest
) -> tuple[Waiting, bool] | None:
    """The changed request as a job submitted now, and whether its priority is unknown (then
    it queues behind every pending job: a finished or refused job's priority was not kept).
    A pending job's copy keeps its priority less its age factor (sprio). None when the model
    cannot place the request (:data:`UNPLACED_OPTIONS`)."""
    if any(getattr(request, option) for option in UNPLACED_OPTIONS):
        return None
    low = request.nodes.split("-")[0]
    partition = request.partition or snap.partition
    index = cluster.node_index()
    members = next((p.nodes for p in cluster.partitions if p.name == partition), ())
    largest = max((cluster.nodes[index[n]].cpus for n in members if n in index), default=0)
    nodes = int(low) if low.isdigit() and int(low) > 0 else 1
    while not low.isdigit() and largest and -(-request.cpus // nodes) > largest:
        nodes += 1  # no node count asked: the fewest nodes that hold its CPUs, as Slurm does
    limit = request.time_min * 60 if request.time_min is not None else None
    if limit is None and (own := slurm_duration(snap.get("TimeLimit"))) is not None:
        limit = int(own)
    per_cpu = memory_mb(request.mem_per_cpu) or 0.0
    per_node = memory_mb(request.mem) or per_cpu * -(-request.cpus // nodes)
    priority, unknown = 0, True
    if snap.state == "PENDING" and snap.get("Priority").isdigit() and int(snap.get("Priority")):
        age = snap.priority.get("age", "")
        priority = int(snap.get("Priority")) - (
            int(float(age)) if age.replace(".", "", 1).isdigit() else 0
        )
        unknown = False
    copy = Waiting(
        job_id=f"{snap.job_id}-changed",
        partition=partition,
        priority=max(0, priority),
        nodes=nodes,
        cpus=request.cpus,
        mem_mb_per_node=math.ceil(per_node),
        limit_s=limit,
    )
    return copy, unknown


def judge_newcomer(
    commands: SlurmCommands,
    snap: Snapshot,
    text: str,
    request: JobRequest,
    live: tuple[LiveQueue, BatchCluster, SchedulerConfig] | None,
) -> Advice:
    """A change to a job that never starts as it stands (or has ended): Slurm's acceptance
    from ``--test-only``, the start from our replay of the whole queue with the copy in it
    (``--test-only``'s own start ignores the pending jobs ahead: on a 24.11 site it said a
    1-CPU job would start in 15 minutes on a node with a CPU free, and a real copy started
    at once). Without the live queue, or a copy the model cannot place: :func:`judge`."""
    result = check(commands, request)
    made = newcomer(live[1], snap, request) if live and result.start else None
    if live is None or made is None:
        return judge(text, result, None, snap.now)
    queue, cluster, scheduler = live
    copy, unknown = made
    others = replace(queue, waiting=tuple(w for w in queue.waiting if w.job_id != snap.job_id))
    found = predict(others, cluster, scheduler, extra=(copy,))
    start = found.starts.get(copy.job_id)
    if start is None:
        return judge(text, result, None, snap.now)
    now = snap.now
    ahead = [job for job, _ in queue.left_out if job != snap.job_id]  # may jump the line
    unknown_jobs = ahead or queue.future_reservations
    when = _at(start_words(found, copy.job_id, now), " at the earliest" if unknown_jobs else "")
    line = (
        f"behind all {len(others.waiting)} pending jobs it replays (its priority is not known)"
        if unknown
        else f"at priority {copy.priority}, the job's less its age factor"
    )
    outcome = (
        f"Slurm would accept it; our replay of the whole queue starts it {when} (queued {line}; "
        f"within about {found.tolerance_s} s of Slurm's own start if every job runs to its time "
        f"limit){_alone(result, now)}"
    )
    return Advice(text, result, True, outcome, start, SOURCE)


def queue_or_none(
    commands: SlurmCommands, now: datetime
) -> tuple[LiveQueue, BatchCluster, SchedulerConfig] | None:
    """The live queue for :func:`judge_newcomer`; None when Slurm cannot give all of it."""
    try:
        return live_queue(commands, now)
    except SlurmCommandError:
        return None


def advise(
    commands: SlurmCommands,
    snap: Snapshot,
    request: JobRequest,
    klass: str,
    view: QueueView | None = None,
) -> list[Advice]:
    """Every candidate change for ``klass``; those that help first, then the rest (so an
    answer can say what does not help, too).

    A job waiting its turn (:data:`QUEUE_CLASSES`) has each change judged by our replay of
    the whole queue (:mod:`wass_chat.slurm.queue_advice`): ``--test-only`` checks one request,
    not the queue as it will unfold. Where that model cannot place the job, its
    advice is not judged (helps None). Other classes (a limit, a node, a reservation) are
    about whether Slurm would accept the job at all, which ``--test-only`` answers. ``view``
    is the queue model when the caller has it already."""
    found = candidates(snap, request, klass)
    if klass in QUEUE_CLASSES and found:
        view = view or queue_view(commands, snap.job_id, snap.now)
        if view is not None:
            advice = [judge_in_queue(commands, view, t, c, snap.now) for t, c in found]
        else:
            advice = [_unjudged(t, check(commands, c), snap.now) for t, c in found]
    elif klass in NEWCOMER_CLASSES and found:
        live = queue_or_none(commands, snap.now)
        advice = [judge_newcomer(commands, snap, t, c, live) for t, c in found]
    else:
        baseline = snap.start_estimate
        advice = [judge(t, check(commands, c), baseline, snap.now) for t, c in found]
    return sorted(advice, key=lambda a: (not a.helps, a.start or _test_only(a) or datetime.max))


def _test_only(advice: Advice) -> datetime | None:
    return advice.check.start if advice.check else None


def _unjudged(text: str, result: Check, now: datetime) -> Advice:
    """A change for a job the queue model cannot place: what ``--test-only`` says, not judged
    (a check of one request, not a replay of the queue: it cannot say whether the change
    helps)."""
    if result.start is None:
        return Advice(text, result, False, f"Slurm would refuse it: {result.refusal}")
    said = test_only_said(result.start, now)
    return Advice(
        text,
        result,
        None,
        f"Slurm would accept it (on {result.nodes}); sbatch --test-only says {said}, but that "
        "is Slurm's check of this one request, not a replay of the queue, and our queue model "
        "cannot place this job",
    )
