"""The live queue read from real ``scontrol --oneliner show job`` text (Slurm 22.05, the local
cluster: two jobs running, six pending, one array of four tasks, a dependency and a held job),
turned into simulator jobs and replayed."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np

from sim.batch.config import scheduler_preset
from sim.batch.engine import simulate_batch
from sim.batch.model import BatchCluster, BatchNode, Partition
from wass_chat.batch.cluster_source import add_nodes
from wass_chat.batch.live_queue import queue_from_records
from wass_chat.batch.queue_drain import queue_drain
from wass_chat.batch.whatif import Changes
from wass_chat.slurm.commands import scontrol_records

DATA = Path(__file__).parent / "data" / "scontrol-show-job-22.05.txt"
NOW = int(datetime(2026, 12, 2, 1, 2, 55).timestamp())
"""Three seconds after the first job started (the text was saved then)."""
CLUSTER = BatchCluster(
    tuple(
        BatchNode(name, cpus, cpus * 1000 * 2**20)
        for name, cpus in (("n1", 2), ("n2", 2), ("n3", 4), ("n4", 8))
    ),
    (Partition("debug", ("n1", "n2", "n3", "n4"), default=True),),
)
"""The cluster the text came from (scontrol show nodes: 2, 2, 4 and 8 CPUs, 1 GB a CPU)."""


def queue():
    return queue_from_records(scontrol_records(DATA.read_text()), NOW)


def test_states_arrays_dependencies_and_holds_are_read() -> None:
    q = queue()
    assert [j.job_id for j in q.running] == ["1", "5_1"]
    assert [j.job_id for j in q.pending] == ["2", "3", "4", "6", "5_2", "5_3", "5_4"]
    assert q.held == ("7",)
    by_id = {j.job_id: j for j in q.jobs}
    assert by_id["6"].parents == ("1",) and by_id["6"].eligible_s is None
    assert by_id["4"].mem_per_node == 200 * 2**20 and by_id["4"].limit_s == 180
    assert by_id["1"].start_s == int(datetime(2026, 12, 2, 1, 2, 52).timestamp())


def test_replay_keeps_running_jobs_and_starts_pending_ones_after_now() -> None:
    qw = queue().workload(CLUSTER)
    w = qw.workload
    result = simulate_batch(CLUSTER, w, scheduler_preset("easy"))
    starts = result.start_s
    assert (starts[qw.running_rows] == w.recorded_start_s[qw.running_rows]).all()
    assert (starts[qw.pending_rows] >= NOW).all()
    # the 8-CPU jobs need n4, which job 1 holds until its 5-minute limit: one after another
    first_end = w.recorded_start_s[qw.rows["1"]] + 300
    assert starts[qw.rows["2"]] == first_end
    assert starts[qw.rows["3"]] >= first_end + 300
    # the dependent job waits for its parent's end
    assert starts[qw.rows["6"]] >= first_end
    # the running array task took 8 CPUs over nodes of 2, 2 and 4: cut to 2 per node to fit
    assert qw.clipped == 4 and w.cpus_per_node[qw.rows["5_2"]] == 2
    assert np.all(w.dep_parent == [qw.rows["1"]])


def test_the_queue_drain_holds_the_running_jobs_where_they_are() -> None:
    """No change changes nothing, and every running job starts at its real start on both
    clusters; a second node like n4 starts job 2 (8 CPUs, waiting for n4) at once."""
    q = queue()
    easy = scheduler_preset("easy")
    same = queue_drain(q, CLUSTER, easy, Changes(add_nodes=(("debug", 0),)))
    assert (same["running"], same["pending"], same["held"]) == (2, 7, 1)
    assert same["starting_sooner"] == same["starting_later"] == 0
    assert same["running_not_at_their_start"] == 0
    assert same["slurm_estimates"]["jobs"] == 6  # job 6 waits for a dependency: no estimate
    bigger = queue_drain(q, add_nodes(CLUSTER, "debug", 1, like="n4"), easy, Changes())
    assert bigger["running_not_at_their_start"] == 0
    # jobs 2 and 3 (8 CPUs, one node) waited for n4 one after the other: with a second node
    # like it, job 2 starts now, job 3 when job 1 ends
    assert same["before"]["starting_now"] == 0 and bigger["before"]["starting_now"] == 1


SITE = Path(__file__).parent / "data" / "scontrol-show-job-24.11-site.txt"
"""``scontrol --oneliner show job`` on the local 24.11 cluster made to look like a site
(tests/slurm/why_cases.py's make_scenarios, plus job 71: afterok on the licence-bound job
29), saved at 2026-12-03 07:58:05 UTC."""


def test_jobs_waiting_for_what_the_replay_does_not_model_are_left_out() -> None:
    """Replayed, a job pending on a QOS wall limit or licences would start once CPUs are free,
    and "2 more nodes" would start it sooner (issue #41: "19 of 24 sooner" on that site)."""
    q = queue_from_records(scontrol_records(SITE.read_text()), 1796284685)
    assert [j.job_id for j in q.pending] == ["14", "15", "16", "18"]
    assert {j.reason for j in q.pending} == {"Resources", "Priority", "Dependency", "BeginTime"}
    assert sorted(q.held, key=int) == ["17", "19", "20", "30"]
    left = dict(q.not_modelled)
    assert left["29"] == "Licenses" and left["33"] == "QOSMaxWallDurationPerJobLimit"
    assert left["12_2"] == left["12_3"] == "JobArrayTaskLimit"
    assert left["25"] == "ReqNodeNotAvail"
    assert left["40"].startswith("Job's QOS not permitted to use this partition")
    assert left["71"] == "Dependency (on a job not replayed)"  # its parent, 29, is left out
    assert len(q.pending) + len(q.held) + len(left) == 30  # every pending task, once


def test_a_drained_idle_node_is_not_replayed() -> None:
    """The same queue with n3 drained and idle: jobs that would start on it wait instead, and
    the answer says which node was left out."""
    from dataclasses import replace

    from wass_chat.batch.live_queue import closed_idle_nodes

    nodes = [
        {"NodeName": "n1", "State": "MIXED", "CPUAlloc": "1"},
        {"NodeName": "n2", "State": "MIXED+DRAIN", "CPUAlloc": "1"},  # draining: its jobs run
        {"NodeName": "n3", "State": "IDLE+DRAIN", "CPUAlloc": "0"},
        {"NodeName": "n4", "State": "DOWN*", "CPUAlloc": "0"},
    ]
    assert closed_idle_nodes(nodes) == ("n3", "n4")
    easy = scheduler_preset("easy")
    q = queue()
    open_ = queue_drain(q, CLUSTER, easy, Changes())
    closed = queue_drain(replace(q, closed_nodes=("n3",)), CLUSTER, easy, Changes())
    assert closed["closed_nodes"] == ["n3"] and open_["closed_nodes"] == []
    assert closed["before"]["mean_start_from_now_s"] > open_["before"]["mean_start_from_now_s"]


def test_the_queue_sentence_counts_what_it_replays_and_agrees_in_number() -> None:
    """'The 1 jobs pending now would start ...' while 21 pended: the sentence says how many of
    the pending jobs the replay holds, and one job is one."""
    from wass_chat.batch.whatif_verdict import queue_words

    times = {"last_start_from_now_s": 2070.0, "mean_start_from_now_s": 600.0}
    q = {
        "pending": 21,
        "running": 1,
        "replayed_pending": 1,
        "before": times,
        "after": times,
        "starting_sooner": 0,
        "starting_later": 0,
    }
    words = queue_words(q, "2 more nodes")
    assert words.startswith("The 1 of the 21 pending jobs it can replay would start as it will")
    alone = queue_words({**q, "pending": 1}, "2 more nodes")
    assert alone.startswith("The job pending now would start as it will without it (it starts")
    many = queue_words({**q, "pending": 3, "replayed_pending": 3}, "2 more nodes")
    assert many.startswith("The 3 jobs pending now would start as they will without it (the last")
