"""The queue model seeded from each Slurm release's own output, judged by what Slurm did.

Each ``tests/slurm/data/slurm-V/queue-model/`` folder is one moment of a real queue on the local
cluster (``wass-chat whatif validate-start`` running: 20 changed copies and a few other jobs
pending behind jobs that fill the cluster), every source the model reads captured together,
and ``sacct-starts.txt``: when Slurm really started each of those jobs, read after they ran.
No Slurm is needed here; the judge is Slurm's own output, not ours.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sim.batch.config import SchedulerConfig
from sim.batch.model import BatchCluster
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
                assert abs(copy.priority - (other.priority - other.age_factor)) <= 1, (job, other)
                checked += 1
    assert checked >= 2


@pytest.mark.parametrize("version", VERSIONS)
def test_predicted_starts_are_where_slurm_really_started_the_jobs(version: str) -> None:
    """Slurm's own outcome is the judge: 80% of the jobs within the stated bound (measured:
    22.05 18 of 20, 24.11 22 of 26, 26.05 22 of 26). The misses, 100-170 s off either way, are
    jobs Slurm's backfill placed otherwise than the simulator's; why is not yet known."""
    folder, queue, cluster, scheduler = _moment(version)
    real = {
        r["id"]: slurm_time(r["start"])
        for r in parse_parsable((folder / "sacct-starts.txt").read_text(), ("id", "start"))
    }
    found = predict(queue, cluster, scheduler)
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
