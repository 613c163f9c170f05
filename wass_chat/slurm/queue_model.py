"""When a pending job (or a changed copy of it) would start, from a model of the whole queue.

``sbatch --test-only`` checks one request, not the queue as it will unfold: the pending jobs
Slurm starts first and the ends that move its plan (issue #41: a copy with ``--time=30``
"would start at 00:22" and was placed at 01:23, later than the job itself; on the local
cluster its start was within the bound for 2-6 of 20 changed copies). This module seeds the
batch simulator (:mod:`sim.batch`) with the live queue and replays it forward from now:

* every running job holds, node by node, the CPUs (and, where memory is consumable, the
  memory) Slurm allocated it (``scontrol -d show job`` detail lines), until its start plus its
  time limit: an upper bound, since a job may end sooner;
* every pending job that can start in its turn (reasons Resources, Priority, None, or a begin
  time that passes) queues in Slurm's order, partition PriorityTier first, then its
  ``Priority``, then its job id (its age), and runs its whole time limit; jobs that cannot
  start in their turn (dependencies, holds, limits, array records) are left out, and said so;
* reservations active now hold their nodes until they end; one that begins later is not
  modelled (the start is then "at the earliest");
* the scheduler runs as ``scontrol show config`` says: backfill every ``bf_interval``, its plan
  in ``bf_resolution`` slots, a reservation for every job it tests; and as Slurm's backfill
  plans, not as the simulator's own model does: a planned job holds its nodes whole (a node
  planned for a higher-priority job is out of reach of a job whose run would overlap that
  plan, whatever CPUs stay free: :func:`slurm_backfill`), and from Slurm 23.02 the plan's end
  is rounded up to ``bf_resolution`` (22.05 rounds it down).

A changed copy is a new job: it queues where a fresh job's priority puts it (the original's
priority less its age factor, its job-size factor scaled to the new size: :func:`fresh_copy`).

Two rules the live clusters have not settled (the second a node takes its next job in, how a
blocked job's start is found among the ends) are replayed both ways (:func:`rules_in_doubt`):
a start is the release's rules' point and the window all the replays span
(:meth:`Prediction.window`), and the stated bound is the tolerance around that window.

Everything here is pure (text in, starts out) so it is tested on each release's real output;
:func:`live_queue` is the one function that asks Slurm.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import numpy as np

from sim.batch.backfill import WILL_RUN_WINDOW_S
from sim.batch.config import SchedulerConfig
from sim.batch.engine import simulate_batch
from sim.batch.model import UNLIMITED, BatchCluster, Partition, Workload, make_workload
from wass_chat.slurm import reservations
from wass_chat.slurm.commands import SlurmCommands, parse_scontrol_record, scontrol_lines
from wass_chat.slurm.formats import memory_mb, slurm_duration, slurm_time
from wass_chat.slurm.hostlist import expand
from wass_chat.slurm.nodes import state_flags
from wass_chat.slurm.occupancy import count_ids
from wass_chat.slurm.reservations import RESERVATIONS_ARGV
from wass_chat.slurm.scontrol_cluster import (
    cluster_from_records,
    config_values,
    records,
    scheduler_from_config,
)

COMPLETING_S = 1
"""Seconds a node stays busy after a job on it ends (Slurm's COMPLETING; the what-if
validation's measure on the local cluster, 24.11 and 26.05)."""
NODE_RUNS_BY_CPUS_UNTIL = (22, 5)
"""The release whose choice of consecutive nodes by free CPUs is measured (22.05.8's
``sbatch --test-only`` and main scheduler: :func:`sim.batch.nodes.consecutive`); later ones
keep the choice by run length, measured on 26.05 (24.11's second run: 15 of 20 replayed by
CPUs, 19 by length)."""
SAME_SECOND_HANDOVER_UNTIL = (22, 5)
"""The last release seen to hand a node to its next job in the second its last one ended:
on 22.05.8 EndTime is start plus limit in whole seconds and the next StartTime that same
second (slurmctld: job 101 done at 18:13:04.832, jobs 68, 70, 99 and 108 allocated on its
nodes at 18:13:04.906), so its model gives a node no time to finish. Replaying four 22.05
validate-start runs from their own inputs: 20, 20, 20 and 10 of 20 so, 10, 10, 10 and 20
with a second; in the odd run a backfill pass (18:40:13.767) fell between that second's
completions (.678 and .824) and placed jobs on the nodes already free."""
FOREVER_S = 10 * 365 * 86400
"""How long the model holds what has no end (a job without a limit, a closed node): a start
that late is no start (:func:`predict` says None)."""
CLOSED_NODE_STATES = frozenset(
    {"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING", "FUTURE", "NOT_RESPONDING"}
)
"""Node state flags under which Slurm starts no new job on the node: its free CPUs are held
for ever in the model (its running jobs still end at their limits)."""
STARTABLE_REASONS = frozenset({"Resources", "Priority", "None", "BeginTime"})
"""Pending reasons of jobs that start in their turn (a begin time passes on its own)."""
HOLDING_STATES = frozenset({"RUNNING", "COMPLETING", "SUSPENDED", "CONFIGURING"})
_DETAIL = re.compile(r"(?:^|\s)Nodes=(?P<nodes>\S+)\s+CPU_IDs=(?P<ids>\S+)(?:\s+Mem=(?P<mem>\d+))?")
JOBS_ARGV = ["scontrol", "-d", "--oneliner", "show", "job"]


@dataclass(frozen=True)
class Held:
    """What one running job (or an active reservation) holds on one node, and until when."""

    job_id: str
    node: str
    cpus: int
    mem_mb: int
    end: datetime | None
    """Start plus time limit (an upper bound); None: no limit."""
    kind: str = "job"
    """``job`` (a running job's share), ``reservation`` (an active one's free CPUs) or
    ``closed node`` (a drained or down node's free CPUs, held for ever)."""


@dataclass(frozen=True)
class Waiting:
    """A pending job as the model queues it."""

    job_id: str
    partition: str
    priority: int
    nodes: int
    """Fewest nodes it may run on (the model places it on exactly that many)."""
    cpus: int
    mem_mb_per_node: int
    limit_s: int | None
    """Its time limit (None: none), the time the model lets it run."""
    eligible: datetime | None = None
    """A begin time still ahead (--begin), else None."""
    age_factor: int = 0
    size_factor: int = 0
    max_nodes: int = 0
    size_weight: int = 0
    """PriorityWeightJobSize (0: not known), so that a resized copy's factor is exact."""

    @property
    def cpus_per_node(self) -> int:
        return -(-self.cpus // max(1, self.nodes))


@dataclass(frozen=True)
class LiveQueue:
    """The live queue at ``now``: what runs, what waits (in Slurm's order), what was left out."""

    now: datetime
    held: tuple[Held, ...]
    waiting: tuple[Waiting, ...]
    left_out: tuple[tuple[str, str], ...]
    """(job id, why the model leaves it out) for pending jobs that cannot start in their turn."""
    future_reservations: tuple[str, ...] = ()
    """Reservations that begin later (not modelled: the prediction is then at the earliest)."""
    memory_counted: bool = False
    """Whether Slurm treats memory as consumable (SelectTypeParameters ``CR_*_Memory``)."""

    def job(self, job_id: str) -> Waiting | None:
        return next((w for w in self.waiting if w.job_id == job_id), None)


def parse_jobs(
    text: str,
    now: datetime,
    partition_tiers: Mapping[str, int] | None = None,
    largest_node: Mapping[str, int] | None = None,
) -> tuple[list[Held], list[Waiting], list[tuple[str, str]]]:
    """Running holdings, startable pending jobs (in Slurm's order) and the left-out pending
    jobs, from ``scontrol -d --oneliner show job`` text (pure)."""
    held: list[Held] = []
    waiting: list[tuple[tuple[int, int, int], Waiting]] = []
    left_out: list[tuple[str, str]] = []
    tiers = partition_tiers or {}
    for line in scontrol_lines(text):
        record = parse_scontrol_record(_DETAIL.sub(" ", line))
        state = (record.get("JobState") or "").split("+")[0]
        job_id = record.get("JobId", "?")
        if state in HOLDING_STATES:
            held += _holdings(record, line, now)
        elif state == "PENDING":
            why = _why_left_out(record, now)
            if why:
                left_out.append((job_id, why))
                continue
            job = _waiting(record, now, (largest_node or {}).get(record.get("Partition", "")))
            if job is None:
                left_out.append((job_id, "its request could not be read"))
                continue
            tier = tiers.get(job.partition, 1)
            waiting.append(((-tier, -job.priority, _numeric_id(job_id)), job))
    waiting.sort(key=lambda pair: pair[0])
    return held, [w for _, w in waiting], left_out


def _numeric_id(job_id: str) -> int:
    head = job_id.split("_")[0]
    return int(head) if head.isdigit() else 0


def _holdings(record: Mapping[str, str], line: str, now: datetime) -> list[Held]:
    end = slurm_time(record.get("EndTime"))
    if (record.get("TimeLimit") or "").upper() in {"UNLIMITED", "INFINITE"}:
        end = None
    if (record.get("JobState") or "").startswith("COMPLETING"):
        end = now
    counts: dict[str, list[int]] = {}
    for found in _DETAIL.finditer(line):
        cpus = count_ids(found["ids"])
        mem = int(found["mem"] or 0)
        for name in expand(found["nodes"]):
            counts.setdefault(name, [0, 0])
            counts[name][0] += cpus
            counts[name][1] += mem
    if not counts:
        nodes = expand(record.get("NodeList", ""))
        total = int(record.get("NumCPUs") or 0) if (record.get("NumCPUs") or "").isdigit() else 0
        share, extra = divmod(total, len(nodes)) if nodes else (0, 0)
        counts = {n: [share + (k < extra), 0] for k, n in enumerate(nodes)}
    total = sum(c for c, _ in counts.values())
    num = record.get("NumCPUs", "")
    factor = int(num) // total if num.isdigit() and total and int(num) % total == 0 else 1
    job_id = record.get("JobId", "?")
    return [Held(job_id, n, c * factor, m, end) for n, (c, m) in counts.items()]


def _why_left_out(record: Mapping[str, str], now: datetime) -> str:
    """Why a pending job cannot be modelled as starting in its turn ('' when it can)."""
    reason = (record.get("Reason") or "None").split(",")[0].strip()
    task = (record.get("ArrayTaskId") or "").strip()
    if task and not task.isdigit():
        return "an array's pending tasks are not modelled"
    if reason not in STARTABLE_REASONS:
        return f"it waits for {reason}, not for its turn"
    dependency = record.get("Dependency") or ""
    if dependency and dependency != "(null)":
        return f"it waits for its dependency {dependency}"
    for key, what in (
        ("ReqNodeList", "a node list"),
        ("ExcNodeList", "excluded nodes"),
        ("Features", "node features"),
        ("Licenses", "licences"),
        ("TresPerNode", "GRES"),
        ("Reservation", "a reservation"),
    ):
        value = record.get(key) or ""
        if value and value != "(null)":
            return f"it asks for {what} ({value}), which the model does not place"
    return ""


def _waiting(record: Mapping[str, str], now: datetime, largest: int | None) -> Waiting | None:
    cpus_text = record.get("NumCPUs") or ""
    if not cpus_text.isdigit():
        return None
    cpus = int(cpus_text)
    low, _, high = (record.get("NumNodes") or "1").partition("-")
    fewest = int(low) if low.isdigit() and int(low) > 0 else 1
    most = int(high) if high.isdigit() else fewest
    nodes = fewest
    if largest:  # a job that may spread goes on the fewest nodes that can hold its CPUs
        while nodes < max(most, fewest) and -(-cpus // nodes) > largest:
            nodes += 1
    mem_node = memory_mb(record.get("MinMemoryNode")) or 0.0
    mem_cpu = memory_mb(record.get("MinMemoryCPU")) or 0.0
    per_node = mem_node or mem_cpu * -(-cpus // nodes)
    limit = slurm_duration(record.get("TimeLimit"))
    eligible = slurm_time(record.get("EligibleTime"))
    prio = record.get("Priority") or "0"
    return Waiting(
        job_id=record.get("JobId", "?"),
        partition=record.get("Partition", ""),
        priority=int(prio) if prio.isdigit() else 0,
        nodes=nodes,
        cpus=cpus,
        mem_mb_per_node=math.ceil(per_node),
        limit_s=None if limit is None else int(limit),
        eligible=eligible if eligible and eligible > now else None,
        max_nodes=most,
    )


def parse_reservations(
    text: str, now: datetime
) -> tuple[list[tuple[str, list[str], datetime | None]], list[str]]:
    """Active reservations (name, nodes, end) and the names of those that begin later."""
    known = reservations.parse_reservations(text, now)
    active = [(r.name, list(r.nodes), r.end) for r in known if r.active(now)]
    return active, [r.name for r in known if not r.active(now)]


def with_priority_factors(waiting: Sequence[Waiting], sprio_text: str) -> list[Waiting]:
    """The jobs with their age and job-size factors from ``sprio -h -o %i|%A|%J`` (pure)."""
    factors: dict[str, tuple[int, int]] = {}
    for line in sprio_text.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[0]:
            age, size = (int(float(p)) if _number(p) else 0 for p in parts[1:])
            factors[parts[0]] = (age, size)
    return [
        replace(w, age_factor=factors[w.job_id][0], size_factor=factors[w.job_id][1])
        if w.job_id in factors
        else w
        for w in waiting
    ]


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def fresh_copy(
    job: Waiting, cluster: BatchCluster, job_id: str = "copy", **changes: object
) -> Waiting:
    """``job`` resubmitted with ``changes`` (cpus, nodes, limit_s, partition, mem_mb_per_node):
    a fresh job's priority, estimated as the original's less its age factor, with its job-size
    factor scaled by Slurm's size fraction (the mean of its node and CPU shares of the cluster,
    as 22.05-26.05 compute it without PriorityFlags=SMALL_RELATIVE_TO_TIME) of the new size
    over the old. Fair-share, partition and QOS factors are the user's and stay. With the
    weight known (``size_weight``) both size factors are exact and truncated, as Slurm casts
    the weighted sum to an integer (priority_multifactor.c): sprio prints the factor rounded
    (188 for 187.5), so scaling its figure put a halved 4-CPU copy one above a job of the
    copy's size, and ties (broken by job id) then went the other way."""
    new = replace(job, job_id=job_id, eligible=None, age_factor=0, **changes)  # type: ignore[arg-type]
    nodes = max(1, len(cluster.nodes))
    cpus = max(1, cluster.total_cpus)

    def share(w: Waiting) -> float:
        return (w.nodes / nodes + w.cpus / cpus) / 2

    if job.size_weight:  # Slurm truncates the weighted sum (the rest taken as whole)
        size = math.floor(job.size_weight * share(new))
        priority = job.priority - job.age_factor - math.floor(job.size_weight * share(job)) + size
    else:
        size = round(job.size_factor * share(new) / share(job)) if share(job) else job.size_factor
        priority = job.priority - job.age_factor - job.size_factor + size
    return replace(new, priority=max(0, priority), size_factor=size)


@dataclass(frozen=True)
class Prediction:
    """Predicted starts from the queue model, and what it could not know."""

    starts: dict[str, datetime | None]
    """Job id -> predicted start (None: not within the model's horizon)."""
    caveats: tuple[str, ...]
    tolerance_s: int
    """How far Slurm's own start may fall from the prediction when every job runs to its
    limit: one backfill interval (when it acts) plus one backfill slot (bf_resolution)."""
    nodes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Job id -> the nodes the model started it on (jobs that start within the horizon)."""
    earliest: dict[str, datetime | None] = field(default_factory=dict)
    latest: dict[str, datetime | None] = field(default_factory=dict)
    """Job id -> the earliest and latest start among the replays under the rules in doubt
    (:func:`rules_in_doubt`); both equal to ``starts`` where the rules agree, which is most
    jobs; a replay that does not start the job within the horizon does not count."""

    def window(self, job_id: str) -> tuple[datetime, datetime] | None:
        """The job's start at the earliest and at the latest (None: no start known)."""
        start = self.starts.get(job_id)
        low, high = self.earliest.get(job_id, start), self.latest.get(job_id, start)
        if start is None or low is None or high is None:
            return None
        return min(low, start), max(high, start)

    def within(self, job_id: str, real: datetime) -> bool:
        """Whether ``real`` is within the stated bound: ``tolerance_s`` of the window."""
        window = self.window(job_id)
        if window is None:
            return False
        slack = timedelta(seconds=self.tolerance_s)
        return window[0] - slack <= real <= window[1] + slack


def model_inputs(
    queue: LiveQueue,
    cluster: BatchCluster,
    extra: Sequence[Waiting] = (),
    extra_after_s: int = 0,
    origin_s: int = 0,
    short_s: int = 0,
) -> tuple[BatchCluster, Workload]:
    """The simulator's cluster and workload for ``queue`` plus ``extra`` jobs submitted
    ``extra_after_s`` seconds after ``now`` (behind the queue, in their priority's place).
    Every job runs to its limit, less ``short_s`` seconds (0, as an answer assumes; a replay
    of jobs known to end sooner says by how much); backfill still expects the limit.

    Each running job's share of a node is a job of its own on a one-node partition ``@N``,
    queued first, so that it takes exactly the node Slurm gave it; the pending jobs follow in
    Slurm's order (the simulator's FIFO order is that order: ``submit`` is the place in line).
    ``now`` is simulated time ``origin_s``."""
    partitions = list(cluster.partitions)
    hold_parts = {}
    for piece in queue.held:
        if piece.node not in hold_parts and piece.node in cluster.node_index():
            hold_parts[piece.node] = f"@{piece.node}"
            partitions.append(Partition(f"@{piece.node}", (piece.node,)))
    model = BatchCluster(cluster.nodes, tuple(partitions))
    names = [p.name for p in partitions]
    now = queue.now
    jobs: list[dict[str, object]] = []
    capacity = {n.name: n.cpus for n in cluster.nodes}
    for k, piece in enumerate(queue.held):
        if piece.node not in hold_parts or piece.cpus <= 0:
            continue
        cpus = min(piece.cpus, capacity[piece.node])
        capacity[piece.node] -= cpus
        if cpus <= 0:
            continue
        left = FOREVER_S if piece.end is None else (piece.end - now).total_seconds()
        jobs.append(
            {
                "id": f"@{piece.job_id}:{piece.node}:{k}",
                "submit": -1,
                "earliest": origin_s,
                "runtime": max(1, math.ceil(left) - short_s),
                "limit": max(1, math.ceil(left)),  # what backfill expects it to hold
                "nodes": 1,
                "cpus": cpus,
                "mem": piece.mem_mb * 2**20 if queue.memory_counted else 0,
                "partition": hold_parts[piece.node],
            }
        )
    ranked = _in_line(queue.waiting, extra, cluster)
    for place, w in enumerate(ranked):
        arrive = origin_s + (extra_after_s if any(w is e for e in extra) else 0)
        if w.eligible is not None:
            arrive = max(arrive, origin_s + math.ceil((w.eligible - now).total_seconds()))
        limit = w.limit_s if w.limit_s is not None else UNLIMITED
        jobs.append(
            {
                "id": w.job_id,
                "submit": place,
                "earliest": arrive,
                "runtime": max(1, limit - short_s) if limit != UNLIMITED else FOREVER_S,
                "limit": limit,
                "nodes": w.nodes,
                "cpus": w.cpus_per_node,
                "mem": w.mem_mb_per_node * 2**20 if queue.memory_counted else 0,
                "partition": w.partition,
            }
        )
    return model, make_workload(jobs, names)


def _in_line(
    waiting: Sequence[Waiting], extra: Sequence[Waiting], cluster: BatchCluster
) -> list[Waiting]:
    """The queue in Slurm's order with ``extra`` placed by priority (behind equal ones: newer)."""
    tiers = {p.name: p.priority_tier for p in cluster.partitions}
    line = list(waiting)
    for job in extra:
        key = (tiers.get(job.partition, 1), job.priority)
        place = next(
            (
                k
                for k, other in enumerate(line)
                if (tiers.get(other.partition, 1), other.priority) < key
            ),
            len(line),
        )
        line.insert(place, job)
    return line


def predict(
    queue: LiveQueue,
    cluster: BatchCluster,
    scheduler: SchedulerConfig,
    extra: Sequence[Waiting] = (),
    extra_after_s: int = 0,
    short_s: int = 0,
    completing_s: int | None = None,
) -> Prediction:
    """Replay ``queue`` (and ``extra``) forward from ``now``; each waiting job's start, every
    job running to its limit (less ``short_s``: :func:`model_inputs`), its nodes free
    ``completing_s`` after it ends (None: as ``scheduler`` says, :func:`slurm_backfill`).
    ``starts`` are the release's rules' replay; ``earliest`` and ``latest`` span the replays
    under every rule in doubt (:func:`rules_in_doubt`).

    Simulated time runs in phase with the epoch modulo ``bf_resolution`` and the will-run
    test's 30 s barrier, because Slurm's backfill slots are multiples of the one and its
    batches of running jobs' ends are cut at multiples of the other, in epoch seconds (a plan
    from a clock out of phase rounds reservations to other minutes)."""
    phase = math.lcm(max(1, scheduler.bf_resolution_s), WILL_RUN_WINDOW_S)
    origin = int(queue.now.timestamp()) % phase
    model, workload = model_inputs(queue, cluster, extra, extra_after_s, origin, short_s)
    handover = scheduler.completing_s if completing_s is None else completing_s
    own = replace(scheduler, order="fifo", completing_s=handover, kill_grace_s=0)
    wanted = {w.job_id for w in (*queue.waiting, *extra)}
    fitting = _drop_unfit(model, workload)
    replays = [_replay(model, fitting, rules, origin) for rules in rules_in_doubt(own)]
    offsets, placed = replays[0]
    nodes = {job: on for job, on in placed.items() if job in wanted}

    def when(offset: int | None) -> datetime | None:
        return None if offset is None else queue.now + timedelta(seconds=offset)

    starts = {job: when(offsets.get(job)) for job in wanted}
    earliest, latest = {}, {}
    for job in wanted:
        known = [o[job] for o, _ in replays if job in o]
        earliest[job] = when(min(known)) if known else None
        latest[job] = when(max(known)) if known else None
    caveats = caveats_of(queue, fitting, workload)
    return Prediction(starts, caveats, tolerance(scheduler), nodes, earliest, latest)


def rules_in_doubt(scheduler: SchedulerConfig) -> tuple[SchedulerConfig, ...]:
    """``scheduler`` (the release's rules, :func:`slurm_backfill`) first, then the same with
    each rule the live clusters have not settled flipped, alone and together: whether a node
    takes its next job in the second its last one ended or the second after, and how the
    backfill plan finds a blocked job's start among the running jobs' ends (in 30 s batches
    or end by end).

    Both split across validate-start runs of one release (2026-12-03, 20 changed copies a
    run, replayed with ``--replay``): on 24.11 one run's starts fit the second after (20 of 20
    with it, 15 with the same second) and another's the same second (20 against 12): jobs
    that end at their limits hand over within a second either way, and a backfill pass can
    fall between that second's completions (:data:`SAME_SECOND_HANDOVER_UNTIL`); on 26.05
    one run fit the 30 s batches (18 with them, 15 end by end) although its ``--test-only``
    goes end by end. The window the four replays span held 18-20 of 20 in each of seven
    runs on the three releases, median width 5-64 s. Flipping how cons_tres weighs runs of
    free nodes as well (:data:`NODE_RUNS_BY_CPUS_UNTIL`) held 20 in all seven, but widened
    the windows to 6 minutes, so it is not. A hand-built ``scheduler`` (not Slurm's
    consecutive node order) has no doubt."""
    if scheduler.node_order != "consecutive":
        return (scheduler,)
    handover = replace(scheduler, completing_s=0 if scheduler.completing_s else COMPLETING_S)
    barrier = not scheduler.bf_will_run_barrier
    return (
        scheduler,
        handover,
        replace(scheduler, bf_will_run_barrier=barrier),
        replace(handover, bf_will_run_barrier=barrier),
    )


def _replay(
    model: BatchCluster, fitting: Workload, rules: SchedulerConfig, origin: int
) -> tuple[dict[str, int], dict[str, tuple[str, ...]]]:
    """Seconds from now to each job's start within the horizon, and the nodes it got."""
    result = simulate_batch(model, fitting, rules)
    offsets: dict[str, int] = {}
    nodes: dict[str, tuple[str, ...]] = {}
    for i, job in enumerate(fitting.job_ids):
        offset = int(result.start_s[i]) - origin
        if 0 <= offset < FOREVER_S // 2:
            offsets[job] = offset
            nodes[job] = tuple(model.nodes[k].name for k in result.nodes_of(i))
    return offsets, nodes


def _drop_unfit(cluster: BatchCluster, workload: Workload) -> Workload:
    from sim.batch.engine import unfit_jobs

    bad = set(unfit_jobs(cluster, workload).tolist())
    if not bad:
        return workload
    return workload.take(np.asarray([i for i in range(len(workload)) if i not in bad]))


def tolerance(scheduler: SchedulerConfig) -> int:
    """The stated bound: one backfill interval plus one backfill slot."""
    return scheduler.bf_interval_s + scheduler.bf_resolution_s


def caveats_of(queue: LiveQueue, fitting: Workload, workload: Workload) -> tuple[str, ...]:
    """What the model could not know, each as the answer says it."""
    notes = [
        "every running and waiting job is taken to run until its time limit; jobs that end "
        "sooner usually bring starts forward, but can reorder who gets a node first and so "
        "delay one"
    ]
    if queue.left_out:
        shown = ", ".join(f"job {j} ({why})" for j, why in queue.left_out[:3])
        more = f" and {len(queue.left_out) - 3} more" if len(queue.left_out) > 3 else ""
        notes.append(
            f"left out, as they cannot start in their turn: {shown}{more}; one that becomes "
            "eligible with a higher priority would start first (the start is then at the earliest)"
        )
    if queue.future_reservations:
        notes.append(
            "reservations that begin later are not modelled ("
            + ", ".join(queue.future_reservations)
            + "): the start is at the earliest"
        )
    if len(fitting) < len(workload):
        gone = sorted(set(workload.job_ids) - set(fitting.job_ids))
        notes.append(f"jobs that fit no nodes of their partition are left out: {', '.join(gone)}")
    if not queue.memory_counted:
        notes.append("memory is not consumable on this cluster, so CPUs alone decide")
    return tuple(notes)


ROUND_UP_FROM = (23, 2)
"""The first Slurm release whose backfill rounds a planned job's end up to ``bf_resolution``
(backfill.c ``_set_slot_time``: ``start + limit + bf_resolution - 1``, then down); 22.05
rounds it down (``end_reserve / backfill_resolution * backfill_resolution``)."""


ONE_END_AT_A_TIME_FROM = (26, 5)
"""The first release seen to find a blocked job's start end by end (26.05.5's ``sbatch
--test-only``); 22.05.8 and 24.11.5 cut the running jobs' ends in batches at a 30 s barrier
(cons_tres ``_will_run_test``). The releases between are not measured and taken as 24.11."""


def slurm_release(config_text: str) -> tuple[int, int] | None:
    """(major, minor) from ``scontrol show config``'s ``SLURM_VERSION`` (None if absent)."""
    found = re.match(r"\s*(\d+)\.(\d+)", config_values(config_text).get("slurm_version", ""))
    return (int(found[1]), int(found[2])) if found else None


def slurm_backfill(scheduler: SchedulerConfig, config_text: str) -> SchedulerConfig:
    """``scheduler`` planning as Slurm's backfill plans (backfill.c ``_attempt_backfill``):
    whole nodes per planned job (the ``node_space`` map is a node bitmap per time slot, and
    SchedMD: "the backfill scheduler reserves whole nodes for jobs, not partial nodes"), the
    planned end rounded as this release rounds it (an unknown release: the newer rule), a
    blocked job's start found among the running jobs' ends as this release's will-run test
    finds it (:data:`ONE_END_AT_A_TIME_FROM`; an unknown release: end by end), nodes
    chosen as cons_tres chooses them (:func:`sim.batch.nodes.consecutive`), and a node handed
    to its next job as this release hands it (:data:`SAME_SECOND_HANDOVER_UNTIL`)."""
    release = slurm_release(config_text)
    return replace(
        scheduler,
        bf_whole_nodes=True,
        bf_end_round_up=release is None or release >= ROUND_UP_FROM,
        bf_will_run_barrier=release is not None and release < ONE_END_AT_A_TIME_FROM,
        node_runs_by_cpus=release is not None and release <= NODE_RUNS_BY_CPUS_UNTIL,
        completing_s=0
        if release is not None and release <= SAME_SECOND_HANDOVER_UNTIL
        else COMPLETING_S,
        node_order="consecutive",
    )


def queue_from_text(
    jobs_text: str,
    nodes_text: str,
    partitions_text: str,
    config_text: str,
    now: datetime,
    reservations_text: str = "",
    sprio_text: str = "",
) -> tuple[LiveQueue, BatchCluster, SchedulerConfig]:
    """The live queue, cluster and scheduler from the commands' text (pure)."""
    cluster = cluster_from_records(records(nodes_text), records(partitions_text))
    scheduler = slurm_backfill(scheduler_from_config(config_text), config_text)
    index = cluster.node_index()
    tiers = {p.name: p.priority_tier for p in cluster.partitions}
    largest = {
        p.name: max((cluster.nodes[index[n]].cpus for n in p.nodes), default=0)
        for p in cluster.partitions
    }
    held, waiting, left_out = parse_jobs(jobs_text, now, tiers, largest)
    if sprio_text:
        waiting = with_priority_factors(waiting, sprio_text)
    weight = config_values(config_text).get("priorityweightjobsize", "")
    if weight.isdigit():
        waiting = [replace(w, size_weight=int(weight)) for w in waiting]
    active, later = parse_reservations(reservations_text, now)
    used: dict[str, int] = {}
    for piece in held:
        used[piece.node] = used.get(piece.node, 0) + piece.cpus
    for record in records(nodes_text):  # a drained or down node starts no new job
        name, flags = record.get("NodeName", ""), state_flags(record.get("State", ""))
        if name in index and flags & CLOSED_NODE_STATES:
            free = cluster.nodes[index[name]].cpus - used.get(name, 0)
            state = "+".join(sorted(flags & CLOSED_NODE_STATES))
            held.append(Held(f"node {name} ({state})", name, max(0, free), 0, None, "closed node"))
            used[name] = cluster.nodes[index[name]].cpus
    for name, nodes, end in active:
        for node in nodes:
            if node in index:
                free = cluster.nodes[index[node]].cpus - used.get(node, 0)
                held.append(Held(f"reservation {name}", node, max(0, free), 0, end, "reservation"))
                used[node] = cluster.nodes[index[node]].cpus
    memory = "memory" in config_values(config_text).get("selecttypeparameters", "").lower()
    queue = LiveQueue(now, tuple(held), tuple(waiting), tuple(left_out), tuple(later), memory)
    return queue, cluster, scheduler


def queue_texts(commands: SlurmCommands) -> dict[str, str]:
    """What :func:`live_queue` reads, as Slurm printed it (keys: :func:`queue_from_text`'s
    argument names, and ``now``), so that a prediction can be replayed without Slurm."""
    from wass_chat.slurm.commands import SlurmCommandError

    texts = {"jobs_text": commands.run(JOBS_ARGV), "now": datetime.now().isoformat()}
    texts["nodes_text"] = commands.run(["scontrol", "--oneliner", "show", "nodes"])
    texts["partitions_text"] = commands.run(["scontrol", "--oneliner", "show", "partitions"])
    texts["config_text"] = commands.run(["scontrol", "show", "config"])
    for key, argv in (
        ("reservations_text", RESERVATIONS_ARGV),
        ("sprio_text", ["sprio", "-h", "-o", "%i|%A|%J"]),
    ):
        try:
            texts[key] = commands.run(argv)
        except SlurmCommandError:  # no reservations; no multifactor plugin
            texts[key] = ""
    return texts


def queue_from_texts(
    texts: Mapping[str, str], now: datetime | None = None
) -> tuple[LiveQueue, BatchCluster, SchedulerConfig]:
    """:func:`queue_from_text` on what :func:`queue_texts` read."""
    args = {k: v for k, v in texts.items() if k != "now"}
    return queue_from_text(now=now or datetime.fromisoformat(texts["now"]), **args)


def live_queue(
    commands: SlurmCommands, now: datetime | None = None
) -> tuple[LiveQueue, BatchCluster, SchedulerConfig]:
    """Ask Slurm for the queue, the cluster, its configuration, reservations and priorities."""
    return queue_from_texts(queue_texts(commands), now)
