"""The queue model seeded from each Slurm release's own output, judged by what Slurm did.

Each ``tests/slurm/data/slurm-V/queue-model/`` folder is one moment of a real queue on the local
cluster (``wass-chat whatif validate-start`` running: 20 changed copies and a few other jobs
pending behind jobs that fill the cluster), every source the model reads captured together,
and ``sacct-starts.txt``: when Slurm really started each of those jobs, read after they ran.
No Slurm is needed here; the judge is Slurm's own output, not ours.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sim.batch.config import SchedulerConfig
from sim.batch.model import BatchCluster, Partition
from wass_chat.slurm.commands import parse_parsable, scontrol_records
from wass_chat.slurm.formats import slurm_time
from wass_chat.slurm.queue_model import (
    LiveQueue,
    fresh_copy,
    parse_jobs,
    predict,
    queue_from_text,
    tolerance,
)

DATA = Path(__file__).parent / "data"
VERSIONS = ("22.05", "24.11", "26.05")


def _moment(version: str) -> tuple[Path, LiveQueue, BatchCluster, SchedulerConfig]:
    folder = DATA / f"slurm-{version}" / "queue-model"
    if not folder.is_dir():
        pytest.skip(f"no queue-model capture for {version}")

    def read(name: str) -> str:
        return (folder / name).read_text()

    now = datetime.fromisoformat(read("now.txt").strip())
    queue, cluster, scheduler = queue_from_text(
        read("scontrol-d-oneliner-show-job.txt"),
        read("scontrol-oneliner-show-nodes.txt"),
        read("scontrol-oneliner-show-partitions.txt"),
        read("scontrol-show-config.txt"),
        now,
        read("scontrol-oneliner-show-reservations.txt"),
        read("sprio.txt"),
    )
    return folder, queue, cluster, scheduler


@pytest.mark.parametrize("version", VERSIONS)
def test_running_jobs_hold_what_slurm_counts_allocated_on_each_node(version: str) -> None:
    folder, queue, _cluster, _scheduler = _moment(version)
    held: dict[str, int] = {}
    for piece in queue.held:
        held[piece.node] = held.get(piece.node, 0) + piece.cpus
    nodes = scontrol_records((folder / "scontrol-oneliner-show-nodes.txt").read_text())
    alloc = {n["NodeName"]: int(n["CPUAlloc"]) for n in nodes if int(n["CPUAlloc"])}
    assert held == alloc
    assert all(p.end is not None and p.end > queue.now for p in queue.held)


@pytest.mark.parametrize("version", VERSIONS)
def test_pending_jobs_queue_in_slurms_priority_order(version: str) -> None:
    folder, queue, _cluster, _scheduler = _moment(version)
    pending = parse_parsable((folder / "squeue-start.txt").read_text(), ("id", "start", "nodes"))
    assert {w.job_id for w in queue.waiting} | {j for j, _ in queue.left_out} == {
        p["id"] for p in pending
    }
    keys = [(-w.priority, int(w.job_id)) for w in queue.waiting]
    assert keys == sorted(keys) and len(set(w.priority for w in queue.waiting)) > 3
    assert all(w.size_factor > 0 for w in queue.waiting)  # sprio's job-size factor, read


@pytest.mark.parametrize("version", VERSIONS)
def test_a_fresh_copys_priority_is_what_slurm_gives_a_new_job_of_that_size(version: str) -> None:
    """Jobs of one --nice and another CPU count are in the same queue: a copy of one, resized,
    must get the priority Slurm gave the other (age is nil for jobs minutes old)."""
    _folder, queue, cluster, _scheduler = _moment(version)
    jobs = list(queue.waiting)
    checked = 0
    for job in jobs:
        for other in jobs:
            same_rest = job.priority - job.size_factor == other.priority - other.size_factor
            if same_rest and (job.nodes, job.cpus) != (other.nodes, other.cpus):
                copy = fresh_copy(job, cluster, cpus=other.cpus, nodes=other.nodes)
                assert copy.priority == other.priority - other.age_factor, (job, other)
                checked += 1
    assert checked >= 2


def test_a_resized_copys_size_factor_is_truncated_as_slurm_truncates_the_sum() -> None:
    """Captured on 22.05 (validate-start, 2026-12-02; PriorityWeightJobSize 1000, 4 nodes, 16
    CPUs): job 9 (4 CPUs, priority 11150, sprio size 250) and job 12 (2 CPUs, 11087, sprio
    188 for 187.5), same --nice. Job 9's copy halved to 2 CPUs got 11087 from Slurm, job
    12's priority; scaling sprio's rounded figures gave 11088, one above every 2-CPU job of
    that --nice, and the tie Slurm breaks by job id then went the other way (copies 51 and
    55 started in the other order, 5 s apart, and the passes after them differed)."""
    from wass_chat.slurm.queue_model import Waiting

    folder = DATA / "slurm-22.05" / "queue-model"
    cluster = queue_from_text(
        "",
        (folder / "scontrol-oneliner-show-nodes.txt").read_text(),
        (folder / "scontrol-oneliner-show-partitions.txt").read_text(),
        (folder / "scontrol-show-config.txt").read_text(),
        NOW,
    )[1]
    assert (len(cluster.nodes), cluster.total_cpus) == (4, 16)
    job9 = Waiting("9", "debug", 11150, 1, 4, 100, 60, size_factor=250, size_weight=1000)
    job12 = Waiting("12", "debug", 11087, 1, 2, 100, 120, size_factor=188, size_weight=1000)
    job10 = Waiting("10", "debug", 11175, 2, 4, 100, 180, size_factor=375, size_weight=1000)
    assert fresh_copy(job9, cluster, cpus=2).priority == 11087 == job12.priority
    assert fresh_copy(job12, cluster, cpus=1).priority == 11056  # Slurm's, copy 58
    assert fresh_copy(job10, cluster, cpus=2).priority == 11112  # Slurm's, copy 56
    unknown = replace(job9, size_weight=0)  # the weight not read: sprio's figure scaled
    assert fresh_copy(unknown, cluster, cpus=2).priority == 11088


CAPTURED_SHORT_S = 3
"""The captured jobs slept 3 s less than their limits (validate-start's jobs did until
2026-12-02): the replay runs them so, as they really ran, to judge the model's rules rather
than an input it cannot know."""
CAPTURED_COMPLETING_S = 1
"""Ending so, early and on their own, the captured jobs' nodes took the next job a second
later (e.g. 01:12:31 on 22.05 where the end was 01:12:30); jobs that run to their limit, as
validate-start's do now, hand over within the second (``queue_model.COMPLETING_S``)."""


@pytest.mark.parametrize("version", VERSIONS)
def test_predicted_starts_are_where_slurm_really_started_the_jobs(version: str) -> None:
    """Slurm's own outcome is the judge: 80% of the jobs within the stated bound (measured:
    22.05 18 of 20, 24.11 23 of 26, 26.05 23 of 26; 16, 18 and 19 within 10 s). Replayed as
    if every job ran to its limit and handed over as the release does, 18, 17 and 18 (16, 8
    and 6 within 10 s): a generation of jobs that ends 3-4 s before the model's reorders
    ends that were seconds apart."""
    folder, queue, cluster, scheduler = _moment(version)
    real = {
        r["id"]: slurm_time(r["start"])
        for r in parse_parsable((folder / "sacct-starts.txt").read_text(), ("id", "start"))
    }
    found = predict(
        queue, cluster, scheduler, short_s=CAPTURED_SHORT_S, completing_s=CAPTURED_COMPLETING_S
    )
    bound = timedelta(seconds=tolerance(scheduler))
    compared = [(found.starts[w.job_id], real.get(w.job_id)) for w in queue.waiting]
    within = sum(p is not None and r is not None and abs(p - r) <= bound for p, r in compared)
    assert within >= 0.8 * len(compared), compared


def test_jobs_that_cannot_start_in_their_turn_are_left_out_and_said_so() -> None:
    now = datetime(2026, 12, 2, 1, 0, 0)
    common = (
        "JobState=PENDING NumNodes=1 NumCPUs=2 TimeLimit=00:02:00 Partition=debug "
        "Dependency=(null) ReqNodeList=(null) ExcNodeList=(null) Features=(null)"
    )
    text = "\n".join(
        [
            f"JobId=1 Priority=100 Reason=Priority {common}",
            f"JobId=2 Priority=900 Reason=JobHeldUser {common}",
            f"JobId=3 Priority=900 Reason=Dependency {common}".replace(
                "Dependency=(null)", "Dependency=afterok:1(unfulfilled)"
            ),
            f"JobId=4 Priority=500 Reason=Resources {common}".replace(
                "ReqNodeList=(null)", "ReqNodeList=n3"
            ),
            f"JobId=5 Priority=500 Reason=Resources {common}",
        ]
    )
    _held, waiting, left_out = parse_jobs(text, now)
    assert [w.job_id for w in waiting] == ["5", "1"]
    assert dict(left_out) == {
        "2": "it waits for JobHeldUser, not for its turn",
        "3": "it waits for JobHeldUser, not for its turn".replace("JobHeldUser", "Dependency"),
        "4": "it asks for a node list (n3), which the model does not place",
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_a_resubmission_as_is_never_starts_before_the_job_it_replaces(version: str) -> None:
    """A fresh copy loses the original's age and its place among jobs of equal priority: the
    model must never call resubmitting unchanged a way to start sooner."""
    from wass_chat.slurm.advice import JobRequest
    from wass_chat.slurm.queue_advice import QueueView, copy_of, copy_start

    _folder, queue, cluster, scheduler = _moment(version)
    own = predict(queue, cluster, scheduler)
    compared = 0
    for job in queue.waiting:
        view = QueueView(queue, cluster, scheduler, job, own)
        same = JobRequest(
            partition=job.partition,
            ntasks=job.cpus,
            nodes=str(job.nodes),
            time_min=(job.limit_s or 60) // 60,
        )
        copy = copy_of(view, same)
        assert copy.priority == job.priority - job.age_factor
        start, _ = copy_start(view, copy)
        base = view.start
        assert start is not None and base is not None and start >= base, (job, start, base)
        compared += 1
    assert compared == len(queue.waiting) > 10


# --- Slurm's backfill rules the model follows (a synthetic queue on the captured cluster) ----

NOW = datetime(2026, 12, 2, 1, 0, 0)
"""On a bf_resolution boundary, so that the plan's slots begin where the jobs' ends fall."""


def _running(job_id: int, node: str, cpu_ids: str, cpus: int, ends_in_s: int) -> str:
    end = NOW + timedelta(seconds=ends_in_s)
    return (
        f"JobId={job_id} Priority=1 JobState=RUNNING Reason=None TimeLimit=01:00:00 "
        f"EndTime={end:%Y-%m-%dT%H:%M:%S} Partition=debug NodeList={node} NumNodes=1 "
        f"NumCPUs={cpus} MinMemoryNode=100M   Nodes={node} CPU_IDs={cpu_ids} Mem=100 "
    )


def _pending(job_id: int, cpus: int, minutes: int, priority: int) -> str:
    return (
        f"JobId={job_id} Priority={priority} JobState=PENDING Reason=Priority "
        f"Dependency=(null) TimeLimit=00:{minutes:02d}:00 Partition=debug NumNodes=1-1 "
        f"NumCPUs={cpus} MinMemoryNode=100M ReqNodeList=(null) ExcNodeList=(null) "
        "Features=(null) Licenses=(null)"
    )


def _synthetic(version: str, *pending: str) -> tuple[LiveQueue, BatchCluster, SchedulerConfig]:
    """n1-n3 full for an hour; on n4 (8 CPUs) a job holds 6 CPUs for two more minutes."""
    folder = DATA / f"slurm-{version}" / "queue-model"
    jobs = [
        _running(1, "n1", "0-1", 2, 3600),
        _running(2, "n2", "0-1", 2, 3600),
        _running(3, "n3", "0-3", 4, 3600),
        _running(4, "n4", "0-5", 6, 120),
        *pending,
    ]
    return queue_from_text(
        "\n".join(jobs),
        (folder / "scontrol-oneliner-show-nodes.txt").read_text(),
        (folder / "scontrol-oneliner-show-partitions.txt").read_text(),
        (folder / "scontrol-show-config.txt").read_text(),
        NOW,
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_a_node_planned_for_a_higher_priority_job_is_not_backfilled(version: str) -> None:
    """Slurm's backfill plan holds whole nodes: job 10 (4 CPUs) is planned on n4 when job 4
    ends; job 11 (1 CPU, 5 minutes) would fit n4's 2 free CPUs beside both, but its run would
    overlap job 10's plan, so Slurm leaves n4 to job 10 and job 11 starts when the main
    scheduler reaches it, right after job 10 (a CPU-count plan would start it now)."""
    queue, cluster, scheduler = _synthetic(
        version, _pending(10, 4, 10, 1000), _pending(11, 1, 5, 500)
    )
    assert scheduler.bf_whole_nodes
    starts = predict(queue, cluster, scheduler).starts
    assert starts["10"] is not None and starts["10"] >= NOW + timedelta(seconds=120)
    assert starts["11"] == starts["10"]
    by_cpus = predict(queue, cluster, replace(scheduler, bf_whole_nodes=False)).starts
    assert by_cpus["11"] is not None and by_cpus["11"] < NOW + timedelta(seconds=10)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_job_ending_when_the_plan_takes_its_node_does_not_start_on_it(version: str) -> None:
    """Slurm keeps a node for a job tested later only if it is free in every slot that begins
    no later than that job's end (``begin_time <= end_time``): with job 10 planned on n4 from
    now + 2 minutes, a 2-minute job waits for it and a 1-minute job starts now."""
    queue, cluster, scheduler = _synthetic(
        version, _pending(10, 4, 10, 1000), _pending(11, 1, 2, 500), _pending(12, 1, 1, 400)
    )
    starts = predict(queue, cluster, scheduler).starts
    assert starts["11"] == starts["10"] and starts["11"] is not None and starts["11"] > NOW
    assert starts["12"] is not None and starts["12"] < NOW + timedelta(seconds=10)


def test_the_plans_slots_are_rounded_as_each_release_rounds_them() -> None:
    """22.05 rounds a planned job's end down to bf_resolution; later releases round it up
    (``_set_slot_time``), so a plan never ends before the job's limit does."""
    from sim.batch.backfill import plan_slot
    from wass_chat.slurm.queue_model import slurm_backfill, slurm_release

    assert plan_slot(130, 120, 60) == (120, 240)
    assert plan_slot(130, 120, 60, round_up=True) == (120, 300)
    assert plan_slot(120, 120, 60, round_up=True) == (120, 240)
    assert plan_slot(130, 10, 60) == (120, 180)  # at least one slot
    assert plan_slot(130, 120, 1) == (130, 250)
    rounds_up = {}
    for version in VERSIONS:
        config = (
            DATA / f"slurm-{version}" / "queue-model" / "scontrol-show-config.txt"
        ).read_text()
        assert slurm_release(config) == tuple(int(x) for x in version.split("."))
        rounds_up[version] = slurm_backfill(SchedulerConfig(), config).bf_end_round_up
    assert rounds_up == {"22.05": False, "24.11": True, "26.05": True}
    assert slurm_backfill(SchedulerConfig(), "").bf_end_round_up  # unknown: the newer rule


def test_a_node_takes_its_next_job_as_each_release_hands_it_over() -> None:
    """22.05.8 starts the next job on a node in the second its last one ended (slurmctld:
    done at 18:13:04.832, the next allocated at 18:13:04.906), so its model gives a node no
    time to finish; later releases keep the second measured there."""
    from wass_chat.slurm.queue_model import COMPLETING_S, slurm_backfill

    handover, by_cpus = {}, {}
    for version in VERSIONS:
        config = (
            DATA / f"slurm-{version}" / "queue-model" / "scontrol-show-config.txt"
        ).read_text()
        handover[version] = slurm_backfill(SchedulerConfig(), config).completing_s
        by_cpus[version] = slurm_backfill(SchedulerConfig(), config).node_runs_by_cpus
    assert handover == {"22.05": 0, "24.11": COMPLETING_S, "26.05": COMPLETING_S}
    assert by_cpus == {"22.05": True, "24.11": False, "26.05": False}
    assert COMPLETING_S == 1


def test_nodes_are_chosen_as_slurms_consecutive_sets_choose_them() -> None:
    """cons_tres picks nodes from runs of consecutive usable nodes, the shortest run that has
    enough first: on 26.05 a two-node job with n1, n3 and n4 usable went on n[3-4] (the
    fewest-free-CPUs best fit would take n1 and n3), and a one-node job with every node usable
    went on n1, the first of the run."""
    from sim.batch.nodes import consecutive

    n1, n2, n3, n4 = range(4)
    assert consecutive([n1, n3, n4], 2) == [n3, n4]
    assert consecutive([n1, n2, n3, n4], 1) == [n1]
    assert consecutive([n1, n2, n4], 1) == [n4]  # the shortest run that suffices
    assert consecutive([n1, n3], 2) == [n1, n3]  # no run long enough: the longest, then on
    assert consecutive([n1, n2, n4], 3) == [n1, n2, n4]
    assert consecutive([n2], 2) == [n2]  # not enough: what there is (the caller checks)


def test_a_run_of_free_nodes_that_suffices_loses_to_a_larger_one_that_does_not() -> None:
    """cons_tres weighs runs by their free CPUs, and a run too small for the job still
    becomes the best if it has more CPUs than the best so far, even a best that suffices.
    22.05.8's ``sbatch --test-only -N2 --ntasks-per-node=1 -c1`` on the local cluster (n1,
    n2 with 2 CPUs, n3 with 4, n4 with 8): n3 busy, n[1,4] (n4's 8 CPUs outbid n[1-2]'s 4);
    all idle or n4 busy, n[1-2]; n1 busy, n[2-3]. The main scheduler placed a 2-node job of
    validate-start's on n[1,4] the same way (slurmctld log: "sched: Allocate JobId=98
    NodeList=n[1,4]") where the rule by run length gave n[1-2]."""
    from sim.batch.nodes import consecutive

    n1, n2, n3, n4 = range(4)
    free = [2, 2, 4, 8]
    assert consecutive([n1, n2, n4], 2, free, 1) == [n1, n4]
    assert consecutive([n1, n2, n3, n4], 2, free, 1) == [n1, n2]
    assert consecutive([n1, n2, n3], 2, free, 1) == [n1, n2]
    assert consecutive([n2, n3, n4], 2, free, 1) == [n2, n3]
    assert consecutive([n1, n2, n4], 1, free, 1) == [n1]  # the rule: the tighter run, its n1


def test_a_blocked_jobs_start_counts_nodes_freed_in_the_same_batch_of_ends() -> None:
    """22.05's and 24.11's will-run test takes running jobs off a batch at a time (those
    ending up to 30 s past a barrier, the first end rounded up to a multiple of 30 s): a
    two-node job whose nodes free at 60 s (n3, n4) and at 63 s (n1, n2) is planned at 63 s
    with all four to choose from, the shortest run of consecutive nodes (n1, n2) rather than
    the first freed; a job ending 100 s later does not join the batch. End by end (26.05) it
    is planned at 60 s on n3 and n4."""
    from sim.batch.backfill import Plan
    from sim.batch.energy import PowerModel
    from sim.batch.model import BatchNode
    from sim.batch.nodes import NodePool

    cluster = BatchCluster(
        tuple(BatchNode(f"n{k}", 2, 2**30) for k in range(1, 5)),
        (Partition("debug", ("n1", "n2", "n3", "n4")),),
    )
    pool = NodePool(cluster, [[0, 1, 2, 3]], PowerModel().node_profiles(cluster), 0)
    ends = [63, 63, 60, 60]
    for job, node in enumerate(range(4)):
        pool.allocate(job, [node], 2, 0, 0, 0, 0)
    held = ([2] * 4, [0] * 4, [0] * 4)
    plan = Plan(pool, ends, held, whole_nodes=True, slots=(60, True), will_run_barrier=True)
    assert plan.earliest([0, 1, 2, 3], 0, 86400, 120, 2, 2, 0, 0) == (63, [0, 1, 2, 3])
    assert pool.pick([0, 1, 2, 3], 2, "consecutive") == [0, 1]
    one_by_one = Plan(pool, ends, held, whole_nodes=True, slots=(60, True))
    assert one_by_one.earliest([0, 1, 2, 3], 0, 86400, 120, 2, 2, 0, 0) == (60, [2, 3])
    ends[0] = ends[1] = 160
    assert plan.earliest([0, 1, 2, 3], 0, 86400, 120, 2, 2, 0, 0) == (60, [2, 3])


@pytest.mark.parametrize(
    ("case", "ends", "cpus", "start"),
    [
        # 22.05.8 and 24.11.5 alike: n1 and n2 free at 09 s past a whole minute (a multiple
        # of 30 s, so the barrier moves 30 s on), n3 at 14 s, n4 at 59 s: every request was
        # told 59 s, a 1-CPU one too, although n1 frees 50 s sooner.
        ("22.05 exp 3", (1796234760, 1796234760, 1796234765, 1796234810), 1, 1796234810),
        ("22.05 exp 3", (1796234760, 1796234760, 1796234765, 1796234810), 4, 1796234810),
        # 24.11.5: only the 2-CPU nodes' end (at a multiple of 30 s) sets the barrier for a
        # 4-CPU request, so n3's end at +35 s is in the first batch and n4's at +64 s is not.
        ("24.11 exp 5", (1796235000, 1796235000, 1796235035, 1796235064), 4, 1796235035),
        # 22.05.8: after a first batch that was not enough, the window doubles until it
        # reaches the next end (240 s past the barrier), taking in n4's end 30 s later too.
        ("22.05 exp 4", (1796234851, 1796234851, 1796235081, 1796235111), 4, 1796235111),
        # 26.05.5, the same moments: end by end, the first end that frees a node that fits.
        ("26.05 exp 3", (1796236020, 1796236020, 1796236026, 1796236070), 1, 1796236020),
        ("26.05 exp 3", (1796236020, 1796236020, 1796236026, 1796236070), 4, 1796236026),
        ("26.05 exp 5", (1796236080, 1796236080, 1796236115, 1796236144), 4, 1796236115),
    ],
)
def test_a_blocked_jobs_start_is_found_among_the_running_jobs_ends_as_each_release_does(
    case: str, ends: tuple[int, ...], cpus: int, start: int
) -> None:
    """Slurm's will-run test (cons_tres ``_will_run_test``) on 22.05 and 24.11 cuts its
    batches of running jobs' ends at a barrier: the first end on any usable node (one too
    small for the request included) rounded up to a multiple of 30 s in epoch time, plus a
    window of 30 s, doubled until it reaches the next end; 26.05 goes end by end. Each case is
    a real ``sbatch --test-only -N1 -n CPUS`` answer on the local cluster (n1-n4 with 2, 2, 4,
    8 CPUs, each filled by one job pinned with ``-w``; ``ends``: their EndTime in epoch
    seconds), and the release's configuration picks the rule."""
    from sim.batch.backfill import Plan
    from sim.batch.energy import PowerModel
    from sim.batch.model import BatchNode
    from sim.batch.nodes import NodePool
    from wass_chat.slurm.queue_model import slurm_backfill

    version = case.split()[0]
    config = (DATA / f"slurm-{version}" / "queue-model" / "scontrol-show-config.txt").read_text()
    barrier = slurm_backfill(SchedulerConfig(), config).bf_will_run_barrier
    assert barrier == (version != "26.05")
    sizes = (2, 2, 4, 8)
    cluster = BatchCluster(
        tuple(BatchNode(f"n{k + 1}", c, 2**30) for k, c in enumerate(sizes)),
        (Partition("debug", ("n1", "n2", "n3", "n4")),),
    )
    pool = NodePool(cluster, [[0, 1, 2, 3]], PowerModel().node_profiles(cluster), 0)
    for job, size in enumerate(sizes):
        pool.allocate(job, [job], size, 0, 0, 0, 0)
    held = (list(sizes), [0] * 4, [0] * 4)
    plan = Plan(pool, list(ends), held, True, (60, False), will_run_barrier=barrier)
    found = plan.earliest([0, 1, 2, 3], min(ends) - 9, min(ends) + 86400, 60, 1, cpus, 0, 0)
    assert found is not None and found[0] == start, case


def test_a_changed_request_of_a_job_that_never_starts_is_a_newcomer_to_the_queue() -> None:
    """A pending job's copy keeps its priority less its age factor; a finished job's (its
    priority not kept) queues behind every pending job; a copy with no node count goes on the
    fewest nodes that hold its CPUs; a node list or licences are not placed by the model."""
    from sim.batch.model import BatchNode
    from wass_chat.slurm.advice import JobRequest
    from wass_chat.slurm.live import Snapshot
    from wass_chat.slurm.queue_advice import newcomer

    cluster = BatchCluster(
        tuple(BatchNode(n, c, c * 2**30) for n, c in (("n1", 2), ("n2", 2), ("n3", 4), ("n4", 8))),
        (Partition("debug", ("n1", "n2", "n3", "n4")), Partition("small", ("n1", "n2"))),
    )
    now = datetime(2026, 12, 3, 8, 0)
    pending = Snapshot(
        "22",
        now,
        job={
            "JobState": "PENDING",
            "Priority": "2439",
            "Partition": "small",
            "TimeLimit": "00:05:00",
        },
        priority={"age": "2", "priority": "2439"},
    )
    request = JobRequest(partition="debug", ntasks=10, mem="50M")
    made = newcomer(cluster, pending, request)
    assert made is not None
    copy, unknown = made
    assert (copy.priority, unknown, copy.partition) == (2437, False, "debug")
    assert (copy.nodes, copy.cpus, copy.limit_s, copy.mem_mb_per_node) == (2, 10, 300, 50)
    ended = Snapshot("5", now, accounting={"State": "FAILED", "Timelimit": "00:01:00"})
    made = newcomer(cluster, ended, JobRequest(partition="small", time_min=2, mem="619M"))
    assert made is not None and made[1] is True and made[0].priority == 0
    assert (made[0].nodes, made[0].limit_s, made[0].mem_mb_per_node) == (1, 120, 619)
    assert newcomer(cluster, pending, JobRequest(partition="debug", nodelist="n1")) is None
    assert newcomer(cluster, ended, JobRequest(licenses="matlab:1")) is None


def test_a_drained_node_starts_no_job_in_the_model() -> None:
    """What the local 24.11 site printed (queue_texts) with n1 drained and idle: the model
    started a 2-CPU probe of partition small (n1, n2) on n1 "now", where Slurm starts
    nothing; n1's CPUs are now held for ever, so the probe goes to n2."""
    from wass_chat.slurm.queue_model import Waiting, predict, queue_from_texts

    texts = json.loads((DATA / "slurm-24.11" / "queue-texts-drained-n1.json").read_text())
    assert "State=IDLE+DRAIN" in next(
        r for r in texts["nodes_text"].splitlines() if r.startswith("NodeName=n1 ")
    )
    queue, cluster, scheduler = queue_from_texts(texts)
    closed = [h for h in queue.held if h.kind == "closed node"]
    assert [(h.node, h.cpus, h.end) for h in closed] == [("n1", 2, None)]
    probe = Waiting("probe", "small", 10**6, 1, 2, 10, 300)
    found = predict(queue, cluster, scheduler, extra=(probe,))
    assert found.nodes["probe"] == ("n2",)
    wide = Waiting("wide", "small", 10**6, 2, 2, 10, 300)  # both nodes of small: never
    assert predict(queue, cluster, scheduler, extra=(wide,)).starts["wide"] is None


def test_a_saved_validate_start_run_replays_within_the_window_the_rules_in_doubt_span() -> None:
    """A real 26.05 validate-start run (seed 0, 2026-12-03: 20 changed copies really run) is
    the judge. Its release's rules alone put 15 of the 20 real starts within the bound; Slurm
    found a blocked job's start in 30 s batches of ends on some passes, as 24.11 does, not end
    by end (:func:`rules_in_doubt`). The window the rules in doubt span holds 18 or more, and
    stays narrow: a window wide enough to hold anything would fail here."""
    from wass_chat.slurm.start_validation import replay_validation

    saved = json.loads((DATA / "slurm-26.05" / "validate-start-seed0.json").read_text())
    report = replay_validation(saved)
    assert report["jobs"] == 20
    assert report["within"] >= 18 > report["within_point"]
    width, bound = report["window_width_s"], report["bound_s"]
    assert width["median"] <= bound and width["max"] <= 4 * bound  # 60 s and 235 s measured
    recorded = {row["copy"]: row["real_start"] for row in saved["per_job"]}
    for row in report["per_job"]:
        assert row["earliest_start"] <= row["predicted_start"] <= row["latest_start"]
        assert row["real_start"] == recorded[row["copy"]]
        assert row["predicted_priority"] == row["real_priority"]  # the copy queued as Slurm did


def test_rules_in_doubt_are_only_those_of_a_scheduler_read_from_slurm() -> None:
    from wass_chat.slurm.queue_model import rules_in_doubt, slurm_backfill

    assert rules_in_doubt(SchedulerConfig()) == (SchedulerConfig(),)
    config = (DATA / "slurm-26.05" / "queue-model" / "scontrol-show-config.txt").read_text()
    own = slurm_backfill(SchedulerConfig(), config)
    rules = rules_in_doubt(own)
    assert rules[0] == own and len(set(rules)) == 4
    assert {(r.completing_s, r.bf_will_run_barrier) for r in rules} == {
        (a, b) for a in (0, 1) for b in (False, True)
    }
    assert {r.node_runs_by_cpus for r in rules} == {own.node_runs_by_cpus}


@pytest.mark.parametrize("text", ["{not json", '["a list"]', '{"inputs": {}}'])
def test_validate_start_replay_of_a_file_that_is_not_a_saved_run_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    from wass_chat.cli import main

    saved = tmp_path / "run.json"
    saved.write_text(text)
    assert main(["whatif", "validate-start", "--replay", str(saved)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "validate-start --replay" in err and "\n" not in err


def test_a_start_the_rules_in_doubt_disagree_on_is_said_as_a_window() -> None:
    from wass_chat.slurm.queue_advice import start_words
    from wass_chat.slurm.queue_model import Prediction

    now = datetime(2026, 12, 3, 10, 0, 0)
    at = {k: now + timedelta(seconds=s) for k, s in (("a", 120), ("b", 150), ("c", 240))}
    found = Prediction(
        {"one": at["a"], "two": at["a"], "three": now, "gone": None},
        (),
        65,
        earliest={"one": at["a"], "two": at["a"], "three": now},
        latest={"one": at["b"], "two": at["c"], "three": at["c"]},
    )
    assert start_words(found, "one", now) == "about 10:02"  # 30 s apart: the point
    assert start_words(found, "two", now) == "between about 10:02 and 10:04"
    assert start_words(found, "three", now) == "between now and about 10:04"
    assert start_words(found, "gone", now) == ""
    assert found.within("two", at["c"] + timedelta(seconds=65))
    assert not found.within("two", at["a"] - timedelta(seconds=66))


@pytest.mark.parametrize("version", VERSIONS)
def test_the_replay_is_closer_to_slurms_real_starts_than_slurms_own_estimate(version: str) -> None:
    """Why a why-pending answer's expected start is the replay's, with ``squeue --start``'s
    beside it (``explain._expected_start``): on each captured queue Slurm's estimate (its
    backfill plan) is within the bound for few jobs, most of them minutes late."""
    folder, queue, cluster, scheduler = _moment(version)
    fields = ("id", "start")
    real = {
        r["id"]: slurm_time(r["start"])
        for r in parse_parsable((folder / "sacct-starts.txt").read_text(), fields)
    }
    estimate = {
        r["id"]: slurm_time(r["start"])
        for r in parse_parsable((folder / "squeue-start.txt").read_text(), (*fields, "nodes"))
    }
    found = predict(
        queue, cluster, scheduler, short_s=CAPTURED_SHORT_S, completing_s=CAPTURED_COMPLETING_S
    )
    bound = timedelta(seconds=tolerance(scheduler))

    def within(starts: dict) -> int:
        return sum(
            1
            for job, start in real.items()
            if start and starts.get(job) and abs(starts[job] - start) <= bound
        )

    assert within(estimate) <= 0.3 * len(real) < 0.8 * len(real) <= within(found.starts)
