"""Where replays get their jobs and cluster: SWF traces, sacct text, scontrol text."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from sim.batch.config import scheduler_preset
from sim.batch.engine import simulate_batch
from sim.batch.model import UNLIMITED, WorkloadError
from sim.batch.swf import parse_swf, read_swf
from wass_chat.batch.cluster_source import add_nodes, cluster_from_jobs, remove_nodes
from wass_chat.batch.predict import accuracy, predicted_runtimes
from wass_chat.batch.sacct_workload import workload_from_jobs
from wass_chat.sacct.parse import parse_sacct_text
from wass_chat.slurm.scontrol_cluster import cluster_from_records, records, scheduler_from_config

DATA = Path(__file__).parent / "data"
SACCT = (DATA / "sacct.txt").read_text()  # hand-made, in Slurm 22.05's sacct -P layout
NODES = (DATA / "scontrol-nodes.txt").read_text()  # the local cluster's, trimmed
PARTITIONS = (DATA / "scontrol-partitions.txt").read_text()

SWF = """\
; Version: 2.2
; Computer: a hand-made 8-processor machine
; MaxProcs: 8
; UnixStartTime: 1000000000
1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1
2 10 90 50 4 -1 -1 4 100 -1 1 2 1 -1 1 -1 -1 -1
3 20 80 30 4 -1 -1 4 40 -1 1 1 1 -1 1 -1 -1 -1
4 30 -1 -1 -1 -1 -1 4 100 -1 5 3 1 -1 1 -1 -1 -1
5 40 90 500 2 -1 -1 2 100 -1 0 3 1 -1 1 -1 3 -1
"""


def test_swf_jobs_replay_on_the_processor_pool(tmp_path: Path):
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(SWF.encode()))
    trace = read_swf(path)
    w = trace.workload
    assert trace.skipped_no_run == 1  # job 4 never ran
    assert w.job_ids == ("1", "2", "3", "5")
    assert trace.cluster.nodes[0].cpus == 8
    assert w.recorded_start_s.tolist() == [0, 100, 100, 130]
    assert w.limit_s.tolist() == [200, 100, 40, 100]
    assert w.parents(3).tolist() == [2]  # job 5 follows job 3 (field 17)
    r = simulate_batch(trace.cluster, w, scheduler_preset("fifo"))
    # 1 holds all 8 until 100; 2 and 3 then share the pool; 5 waits for 3, is killed at 100 s.
    assert r.start_s.tolist() == [0, 100, 100, 130]
    assert r.killed.tolist() == [False, False, False, True]


def test_swf_errors_name_every_bad_line():
    with pytest.raises(WorkloadError, match=r"2 problems: line 1: 3 fields.*line 2: a field"):
        parse_swf("1 2 3\n" + " ".join(["x"] * 18) + "\n")


def test_sacct_jobs_become_a_workload_and_a_cluster():
    jobs = parse_sacct_text(SACCT).jobs
    loaded = workload_from_jobs(jobs)
    w = loaded.workload
    assert loaded.never_started == 1
    assert w.job_ids == ("10", "11")
    assert w.cpus_per_node.tolist() == [4, 4]
    assert w.mem_per_node.tolist() == [1000 * 2**20, 2**30]
    assert w.gpus_per_node.tolist() == [0, 2]
    assert [w.partitions[p] for p in w.partition] == ["debug", "gpu"]
    assert w.limit_s.tolist() == [120, UNLIMITED]
    assert (w.earliest_s - w.submit_s).tolist() == [0, 20]  # Eligible kept
    assert (w.recorded_start_s - w.submit_s).tolist() == [5, 30]
    cluster = cluster_from_jobs(jobs)
    assert [(n.name, n.cpus, n.gpus) for n in cluster.nodes] == [
        ("g1", 4, 2),
        ("n1", 4, 0),
        ("n2", 4, 0),
    ]
    assert {p.name: p.nodes for p in cluster.partitions} == {"debug": ("n1", "n2"), "gpu": ("g1",)}


CONFIG = """\
PriorityType            = priority/multifactor
PriorityWeightAge       = 1000
PriorityWeightFairShare = 10000
PriorityWeightJobSize   = 1000
PriorityMaxAge          = 1-00:00:00
PriorityCalcPeriod      = 00:05:00
SchedulerType           = sched/backfill
SchedulerParameters     = batch_sched_delay=0,bf_interval=5,bf_window=60,bf_max_job_test=50
"""


def test_scontrol_text_gives_the_cluster_and_its_scheduler():
    cluster = cluster_from_records(records(NODES), records(PARTITIONS))
    assert [(n.name, n.cpus, n.memory // 2**20, n.gpus, n.node_type) for n in cluster.nodes] == [
        ("n1", 2, 2000, 0, "small"),
        ("n4", 8, 8000, 2, "large"),
    ]
    short = cluster.partitions[1]
    assert (short.max_time_s, short.priority_job_factor, short.priority_tier) == (1800, 5, 2)
    cfg = scheduler_from_config(CONFIG)
    assert (cfg.order, cfg.backfill, cfg.bf_interval_s, cfg.bf_window_s, cfg.bf_max_job_test) == (
        "priority",
        True,
        5,
        3600,
        50,
    )
    assert (
        cfg.weights.age,
        cfg.weights.fairshare,
        cfg.weights.job_size,
        cfg.weights.max_age_s,
    ) == (1000, 10000, 1000, 86400)
    assert cfg.calc_period_s == 300
    assert cfg.bf_resolution_s == 60  # Slurm's default when SchedulerParameters has none
    assert (
        scheduler_from_config(CONFIG.replace("bf_interval=5", "bf_resolution=300")).bf_resolution_s
        == 300
    )
    bigger = add_nodes(cluster, "debug", 2)
    assert len(bigger.nodes) == 4 and bigger.partitions[0].nodes[-1] == "debug-added2"
    smaller = remove_nodes(cluster, "debug", 1)
    assert [n.name for n in smaller.nodes] == ["n1"]


def test_predictions_use_only_jobs_ended_before_submission():
    jobs = parse_sacct_text(SACCT).jobs
    w = workload_from_jobs(jobs).workload
    w = w.replace_columns(user=np.zeros(len(w), np.int64))
    prediction = predicted_runtimes(w)
    # Job 10 ends at 65 s, after job 11's submission (10 s): no history yet, so the limit.
    assert prediction.tolist() == [120, UNLIMITED]
    shift = np.array([0, 100])
    later = w.replace_columns(
        submit_s=w.submit_s + shift, recorded_start_s=w.recorded_start_s + shift
    )
    assert predicted_runtimes(later).tolist() == [120, 60]
    report = accuracy(later, predicted_runtimes(later))
    assert report["predicted"] == 1
