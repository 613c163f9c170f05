"""The batch simulator on traces small enough to schedule by hand."""

from __future__ import annotations

import numpy as np
import pytest

from sim.batch.config import PowerSaving, PriorityWeights, SchedulerConfig, scheduler_preset
from sim.batch.engine import simulate_batch, unfit_jobs
from sim.batch.model import (
    BatchCluster,
    BatchNode,
    Partition,
    Workload,
    WorkloadError,
    make_workload,
)
from sim.errors import InputError, PlatformError


def cluster(*cpus: int, gpus: int = 0) -> BatchCluster:
    nodes = tuple(BatchNode(f"n{i + 1}", c, 1000, gpus) for i, c in enumerate(cpus))
    return BatchCluster(nodes, (Partition("p", tuple(n.name for n in nodes)),))


def test_fifo_runs_jobs_in_submission_order_and_the_head_blocks():
    # Two 4-CPU nodes. Job a takes both; b needs both; c needs one CPU but stays behind b.
    c = cluster(4, 4)
    w = make_workload(
        [
            dict(id="a", submit=0, runtime=100, limit=100, nodes=2, cpus=4),
            dict(id="b", submit=1, runtime=50, limit=50, nodes=2, cpus=4),
            dict(id="c", submit=2, runtime=10, limit=10, nodes=1, cpus=1),
        ],
        ["p"],
    )
    r = simulate_batch(c, w, scheduler_preset("fifo"))
    assert r.start_s.tolist() == [0, 100, 150]
    assert r.end_s.tolist() == [100, 150, 160]
    assert not r.backfilled.any()


def test_sjf_starts_the_shortest_request_first():
    c = cluster(4)
    w = make_workload(
        [
            dict(id="a", submit=0, runtime=100, limit=100, cpus=4),
            dict(id="long", submit=1, runtime=90, limit=500, cpus=4),
            dict(id="short", submit=2, runtime=10, limit=20, cpus=4),
        ],
        ["p"],
    )
    r = simulate_batch(c, w, scheduler_preset("sjf"))
    assert r.start_s.tolist() == [0, 110, 100]


def behind_a_whole_cluster_job(*waiting: dict) -> Workload:
    """a holds n1 and n2 of three 4-CPU nodes until 100 (limit 100); b needs all three nodes,
    so its reservation starts at 100; ``waiting`` come after them."""
    return make_workload(
        [
            dict(id="a", submit=0, runtime=100, limit=100, nodes=2, cpus=4),
            dict(id="b", submit=1, runtime=50, limit=60, nodes=3, cpus=4),
            *waiting,
        ],
        ["p"],
    )


def test_a_backfilled_job_does_not_delay_the_reservation():
    # Three 4-CPU nodes; a holds n1 and n2 until 100 (limit 100). b needs all three nodes:
    # reserved at 100 by the pass a second after the first change (1). c (1 node, limit 20)
    # fits on n3 and ends before 100: backfilled by the next pass, bf_interval (30) after that
    # one (31). d (1 node, limit 300) would still hold n3 at 100: it waits.
    c = cluster(4, 4, 4)
    w = behind_a_whole_cluster_job(
        dict(id="c", submit=2, runtime=10, limit=20, nodes=1, cpus=2),
        dict(id="d", submit=3, runtime=10, limit=300, nodes=1, cpus=1),
    )
    r = simulate_batch(c, w, scheduler_preset("easy"))
    start = dict(zip(w.job_ids, r.start_s.tolist(), strict=True))
    assert start["c"] == 31 and r.backfilled[2]
    assert start["b"] == 100  # the reservation held
    assert start["d"] == 150  # after b, not ahead of it
    no_bf = simulate_batch(c, w, scheduler_preset("priority"))
    assert no_bf.start_s[1] == 100 and no_bf.start_s[2] == 150


def test_backfill_runs_when_slurms_agent_would():
    # Slurm's backfill agent polls every second once bf_interval (30 here) has passed since
    # its last pass, and a pass that leaves jobs pending keeps that cadence. a (3 CPUs of
    # both nodes, until 300) starts at 0; the pass at 1 finds nothing pending. b (both whole
    # nodes) and c (1 CPU, limit 50) arrive at 200, long after: c is backfilled at the next
    # poll, 201 (not on a grid of multiples of 30). b stays pending, so the next passes are at
    # 231, 261...: d, arriving at 215, is backfilled at 231.
    c = cluster(4, 4)
    w = make_workload(
        [
            dict(id="a", submit=0, runtime=300, limit=300, nodes=2, cpus=3),
            dict(id="b", submit=200, runtime=10, limit=10, nodes=2, cpus=4),
            dict(id="c", submit=200, runtime=10, limit=50, nodes=1, cpus=1),
            dict(id="d", submit=215, runtime=10, limit=50, nodes=1, cpus=1),
        ],
        ["p"],
    )
    r = simulate_batch(c, w, scheduler_preset("easy"))
    assert r.start_s.tolist() == [0, 300, 201, 231]
    assert r.backfilled.tolist() == [False, False, True, True]


def test_reservations_are_kept_in_bf_resolution_slots():
    # As test_a_backfilled_job_does_not_delay_the_reservation: b is reserved all three nodes
    # at 100. At Slurm's bf_resolution of 60 the reservation is held from 60 (100 rounded
    # down), so c (limit 40, would end at 71) is no longer backfilled at 31 and waits for b;
    # c2 (limit 25, ends at 56) still is. With exact times (resolution 1) both are.
    c = cluster(4, 4, 4)
    w = behind_a_whole_cluster_job(
        dict(id="c", submit=2, runtime=10, limit=40, nodes=1, cpus=2),
        dict(id="c2", submit=2, runtime=10, limit=25, nodes=1, cpus=2),
    )
    slots = simulate_batch(c, w, scheduler_preset("easy", reservation_depth=10, bf_resolution_s=60))
    assert slots.start_s.tolist() == [0, 100, 150, 31]
    exact = simulate_batch(c, w, scheduler_preset("easy", reservation_depth=10))
    assert exact.start_s.tolist() == [0, 100, 31, 31]


def test_a_backfilled_job_may_use_nodes_the_reservation_does_not_need():
    # a holds n1, n2 until 100; b needs two nodes: reserved at 100 on n1 and n2. x runs past
    # 100 but on n3, which b does not need: backfilled by the next pass (31).
    c = cluster(4, 4, 4)
    w = make_workload(
        [
            dict(id="a", submit=0, runtime=100, limit=100, nodes=2, cpus=4),
            dict(id="b", submit=1, runtime=50, limit=60, nodes=2, cpus=4),
            dict(id="x", submit=2, runtime=100, limit=100, nodes=1, cpus=4),
        ],
        ["p"],
    )
    r = simulate_batch(c, w, scheduler_preset("easy"))
    assert r.start_s.tolist() == [0, 100, 31]
    assert r.nodes_of(1) == (0, 1) and r.nodes_of(2) == (2,)


def test_a_job_is_killed_at_its_limit_and_the_partition_cap_applies():
    nodes = (BatchNode("n1", 2, 100),)
    c = BatchCluster(
        nodes, (Partition("short", ("n1",), max_time_s=50), Partition("long", ("n1",)))
    )
    w = make_workload(
        [
            dict(id="over", submit=0, runtime=500, limit=100, partition="long"),
            dict(id="capped", submit=0, runtime=80, limit=100, partition="short"),
            dict(id="fine", submit=0, runtime=30, limit=100, partition="short"),
        ],
        ["short", "long"],
    )
    r = simulate_batch(c, w, scheduler_preset("fifo"))
    assert r.end_s.tolist() == [100, 50, 80]
    assert r.killed.tolist() == [True, True, False]


def test_a_dependency_is_respected_even_when_resources_are_free():
    c = cluster(8)
    w = make_workload(
        [
            dict(id="parent", submit=0, runtime=100, limit=200, cpus=1),
            dict(id="child", submit=5, runtime=10, limit=20, cpus=1, after=["parent"]),
            dict(id="late", submit=0, earliest=40, runtime=10, limit=20, cpus=1),
        ],
        ["p"],
    )
    r = simulate_batch(c, w, scheduler_preset("easy"))
    assert r.start_s.tolist() == [0, 100, 40]


def test_priority_weights_reorder_the_queue():
    nodes = (BatchNode("n1", 4, 100),)
    c = BatchCluster(
        nodes, (Partition("low", ("n1",)), Partition("high", ("n1",), priority_job_factor=10))
    )
    w = make_workload(
        [
            dict(id="a", submit=0, runtime=100, limit=100, cpus=4, partition="low"),
            dict(id="b", submit=1, runtime=10, limit=10, cpus=4, partition="low"),
            dict(id="c", submit=2, runtime=10, limit=10, cpus=4, partition="high"),
        ],
        ["low", "high"],
    )
    plain = simulate_batch(c, w, SchedulerConfig(backfill=False))
    assert plain.start_s.tolist() == [0, 100, 110]
    weighted = SchedulerConfig(backfill=False, weights=PriorityWeights(partition=1000))
    assert simulate_batch(c, w, weighted).start_s.tolist() == [0, 110, 100]


def test_fairshare_favours_the_user_who_used_less():
    c = cluster(4)
    jobs = [dict(id="heavy0", user="heavy", submit=0, runtime=1000, limit=1000, cpus=4)]
    jobs += [dict(id="heavy1", user="heavy", submit=10, runtime=10, limit=10, cpus=4)]
    jobs += [dict(id="light", user="light", submit=20, runtime=10, limit=10, cpus=4)]
    w = make_workload(jobs, ["p"])
    cfg = SchedulerConfig(backfill=False, calc_period_s=60, weights=PriorityWeights(fairshare=1000))
    r = simulate_batch(c, w, cfg)
    assert r.start_s.tolist() == [0, 1010, 1000]


def test_power_saving_boots_nodes_and_saves_idle_energy():
    c = cluster(4, 4)
    w = make_workload(
        [
            dict(id="a", submit=0, runtime=100, limit=100, cpus=4),
            dict(id="b", submit=10_000, runtime=100, limit=100, nodes=2, cpus=4),
        ],
        ["p"],
    )
    on = simulate_batch(c, w, scheduler_preset("easy"))
    saving = simulate_batch(c, w, scheduler_preset("easy"), power_saving=PowerSaving(600, 120))
    assert on.start_s.tolist() == [0, 10_000]
    assert saving.start_s.tolist() == [0, 10_120]  # both nodes were off: boot first
    assert saving.node_energy_j.sum() < on.node_energy_j.sum()
    assert saving.node_off_s.sum() > 0


def test_unfit_jobs_are_named_before_any_simulation():
    c = cluster(4, 4)
    w = make_workload(
        [dict(id="ok", cpus=4), dict(id="wide", nodes=3, cpus=1), dict(id="fat", cpus=5)], ["p"]
    )
    assert unfit_jobs(c, w).tolist() == [1, 2]
    with pytest.raises(WorkloadError, match="job wide fits no 3 nodes"):
        simulate_batch(c, w)
    kept = w.take(np.array([0]))
    assert simulate_batch(c, kept).start_s.tolist() == [0]


def test_bad_inputs_raise_one_error_naming_every_problem():
    with pytest.raises(PlatformError, match="2 problems"):
        BatchCluster((BatchNode("n1", 0, 1),), (Partition("p", ("n1", "ghost")),))
    with pytest.raises(InputError, match="queue order"):
        SchedulerConfig(order="random")  # type: ignore[arg-type]
    with pytest.raises(WorkloadError, match="unknown job"):
        make_workload([dict(id="a", after=["zz"])], ["p"])


def test_same_inputs_same_schedule():
    rng = np.random.default_rng(3)
    c = cluster(8, 8, 4, 4)
    jobs = [
        dict(
            id=str(k),
            submit=int(k * 7),
            runtime=int(rng.integers(1, 300)),
            limit=int(rng.choice([60, 300, 600])),
            nodes=int(rng.choice([1, 1, 2])),
            cpus=int(rng.choice([1, 2, 4])),
        )
        for k in range(200)
    ]
    w = make_workload(jobs, ["p"])
    a = simulate_batch(c, w, scheduler_preset("slurm"))
    b = simulate_batch(c, w, scheduler_preset("slurm"))
    assert a.start_s.tolist() == b.start_s.tolist()
    assert (a.start_s >= w.earliest_s).all()
    assert (a.end_s - a.start_s <= np.maximum(w.limit_s, 0)).all()


def test_completing_time_and_kill_grace():
    c = cluster(4)
    w = make_workload(
        [
            dict(id="a", submit=0, runtime=10, limit=100, cpus=4),
            dict(id="b", submit=1, runtime=500, limit=100, cpus=4),
            dict(id="c", submit=2, runtime=5, limit=100, cpus=4),
        ],
        ["p"],
    )
    r = simulate_batch(c, w, SchedulerConfig(backfill=False, completing_s=1, kill_grace_s=15))
    # a ends at 10, its node is busy until 11; b is killed 15 s past its limit.
    assert r.start_s.tolist() == [0, 11, 127]
    assert r.end_s.tolist() == [10, 126, 132]
    assert r.killed.tolist() == [False, True, False]
