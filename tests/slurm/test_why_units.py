"""The live-job explainer's pure parts: Slurm's formats, the reason table, the renderings.

The explainer itself is tested against the real cluster in test_why_scenarios.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sim.errors import InputError
from wass_chat.answers.job_why import render_job_why
from wass_chat.answers.markdown import plain
from wass_chat.slurm.advice import JobRequest
from wass_chat.slurm.commands import unreachable_cause
from wass_chat.slurm.explain.limit_records import (
    count_value,
    own_record,
    parse_assoc_mgr,
    tres_value,
)
from wass_chat.slurm.explain.pending import node_range, where_cpus
from wass_chat.slurm.formats import clock, memory_mb, slurm_duration, tres
from wass_chat.slurm.hostlist import expand
from wass_chat.slurm.job_files import option
from wass_chat.slurm.reasons import REASONS, classify

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("00:05:00", 300),
        ("5", 300),
        ("10:30", 630),
        ("1-02:00:00", 93600),
        ("UNLIMITED", None),
        ("Partition_Limit", None),
        ("N/A", None),
    ],
)
def test_slurm_durations(text: str, seconds: float | None) -> None:
    assert slurm_duration(text) == seconds


def test_memory_tres_and_hostlists() -> None:
    assert (
        memory_mb("2000M") == 2000
        and memory_mb("4G") == 4096
        and memory_mb("384612K") == (pytest.approx(375.6, abs=0.1))
    )
    assert memory_mb("100Mc") == 100 and memory_mb("0") == 0 and memory_mb("") is None
    assert tres("cpu=4,mem=2000M,node=1,gres/gpu=2") == {
        "cpu": "4",
        "mem": "2000M",
        "node": "1",
        "gres/gpu": "2",
    }
    assert expand("n[01-03,07],gpu1") == ["n01", "n02", "n03", "n07", "gpu1"]
    assert expand("(null)") == [] and expand("n[3-4]") == ["n3", "n4"]


def test_clock_says_today_weekday_or_date() -> None:
    now = datetime(2026, 11, 23, 22, 0)
    assert clock(datetime(2026, 11, 23, 23, 4), now) == "23:04"
    assert clock(datetime(2026, 11, 25, 9, 0), now) == "Wed 09:00"
    assert clock(datetime(2027, 1, 2, 9, 0), now) == "2027-01-02 09:00"
    assert clock(None, now) == "an unknown time"


@pytest.mark.parametrize(
    ("code", "klass"),
    [
        ("Resources", "resources"),
        ("Priority", "priority"),
        ("JobHeldAdmin", "held_admin"),
        ("ReqNodeNotAvail, UnavailableNodes:n1", "node_unavailable"),
        ("AssocGrpCpuLimit", "assoc_limit"),
        ("AssocMaxWallDurationPerJobLimit", "assoc_limit"),
        ("QOSMaxJobsPerUserLimit", "qos_limit"),
        ("QOSGrpNodeLimit", "qos_limit"),
        ("OUT_OF_MEMORY", "out_of_memory"),
        ("TIMEOUT", "timeout"),
        ("RUNNING", "running"),
        ("PartitionDown", "partition_state"),
        ("JobArrayTaskLimit", "array_limit"),
        ("Reservation_maint_was_deleted", "reservation_deleted"),
        ("(QOSNotAllowed)", "not_allowed"),
        ("QOSMaxFooPerJobLimit", "qos_limit"),
        ("SomethingSlurm26Invented", "unknown"),
    ],
)
def test_classify(code: str, klass: str) -> None:
    assert classify(code).klass == klass


def test_every_entry_says_what_it_means() -> None:
    """(docs/slurm.md's summary of the catalogue: tests/slurm/test_reason_catalogue.py)"""
    assert all(r.meaning for r in REASONS)


@pytest.mark.parametrize(
    ("line", "nodes"),
    [
        ("sbatch -N2 -n12 --wrap 'sleep 60'", "2"),
        ("sbatch --nodes=1-2 x.sh", "1-2"),
        ("sbatch -N1 x.sh", "1"),
        ("sbatch --nodes 3 x.sh", "3"),
        ("sbatch -n4 x.sh", ""),
    ],
)
def test_node_count_from_the_submit_line(line: str, nodes: str) -> None:
    assert option(line, "-N", "--nodes") == nodes


def test_a_request_becomes_test_only_arguments() -> None:
    argv = JobRequest(
        "debug",
        ntasks=4,
        cpus_per_task=2,
        nodes="1",
        time_min=5,
        mem="100M",
        nodelist="n1",
        licenses="matlab:1",
    ).argv()
    assert argv[:3] == ["sbatch", "--test-only", "--ntasks=4"]
    wanted = {
        "--cpus-per-task=2",
        "--partition=debug",
        "--nodes=1",
        "--mem=100M",
        "--nodelist=n1",
        "--licenses=matlab:1",
        "--time=5",
        "--wrap=true",
    }
    assert wanted <= set(argv)


def test_unreachable_slurm_is_said_in_a_few_words() -> None:
    dns = (
        "scontrol: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host "
        "scontrol: error: fetch_config: DNS SRV lookup failed"
    )
    assert unreachable_cause(dns).startswith("no slurm.conf here")
    sacct = "sacct: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host"
    assert unreachable_cause(sacct).startswith("no slurm.conf here")  # sacct's own wording
    assert unreachable_cause("Unable to contact slurm controller (connect failure)").startswith(
        "slurmctld"
    )


def test_the_answer_leads_with_the_verdict_and_escapes_markdown() -> None:
    facts = {
        "kind": "job_why",
        "job_id": "8",
        "state": "PENDING",
        "reason": "Resources",
        "reason_class": "resources",
        "meaning": "the CPUs ... are in use",
        "verdict": "Job 8 waits for CPUs on n[3-4]: *now*",
        "evidence": [
            {"command": "scontrol show job 8", "field": "JobName", "value": "[click](http://evil)"}
        ],
        "advice": [
            {
                "text": "ask for 1 CPU",
                "outcome": "Slurm would start it now on n2",
                "helps": True,
                "checked_with": "sbatch --test-only --ntasks=1",
            }
        ],
        "expected_start_note": "about 23:04",
        "comment": "",
        "run_id": None,
    }
    text = render_job_why(facts)
    assert text.startswith("**Job 8 waits for CPUs on n\\[3-4\\]: \\*now\\***")
    assert "`[click](http://evil)`" in text  # outside text only ever as a literal
    # the one start time comes right after the verdict, before the evidence and the advice
    assert text.index("Expected start") < text.index("Evidence") < text.index("start sooner")
    assert plain("a_b|c") == "a\\_b\\|c"


def test_array_tasks_are_found_by_array_and_task_id() -> None:
    from wass_chat.slurm.live import _is_job

    task = {"JobId": "107", "ArrayJobId": "105", "ArrayTaskId": "2"}
    assert _is_job(task, "105_2") and not _is_job(task, "105_1") and not _is_job(task, "105")
    assert _is_job({"JobId": "42"}, "42")


def test_node_states_become_words_and_the_verdict_says_why() -> None:
    from datetime import datetime

    from wass_chat.slurm.explain.nodes import node_facts, node_verdict
    from wass_chat.slurm.live import RunningJob

    now = datetime(2026, 11, 24, 2, 0)
    job = RunningJob("77", "sim", "alice", "debug", "n[2-3]", 4, datetime(2026, 11, 24, 2, 30))

    def node(state: str, reason: str = "", alloc: str = "0") -> str:
        record = {
            "NodeName": "n3",
            "State": state,
            "CPUTot": "4",
            "CPUAlloc": alloc,
            "RealMemory": "4000",
            "Partitions": "debug",
            "Reason": reason,
        }
        return node_verdict(node_facts(record, [job], now))

    assert node("IDLE+DRAIN", "bad dimm [root@2026-11-24T01:59:53]").startswith(
        'n3 is drained: "bad dimm" (set by root at 01:59). It takes no new jobs'
    )
    draining = node("MIXED+DRAIN", "reboot [admin@2026-11-24T01:00:00]", alloc="4")
    assert draining.startswith('n3 is draining: "reboot" (set by admin at 01:00)')
    assert "job 77 (alice, 4 CPUs, until about 02:30)" in draining
    assert node("DOWN*", "Not responding [slurm@2026-11-24T01:30:00]").startswith(
        "n3 is not responding (slurmd is stopped or unreachable)"
    )
    assert node("IDLE") == "n3 is idle: all 4 of its CPUs are free."
    assert node("ALLOCATED", alloc="4").startswith("n3 is fully allocated: job 77 (alice")


def test_the_cluster_verdict_says_who_holds_the_cpus_and_what_waits() -> None:
    """'Is the cluster busy?': CPUs in use, by whom (most first, the rest counted), and how many
    jobs wait, from the running jobs and the pending count."""
    from datetime import datetime

    from wass_chat.slurm.explain.nodes import (
        ClusterFacts,
        NodeFacts,
        cluster_verdict,
        node_facts,
        user_loads,
    )
    from wass_chat.slurm.live import RunningJob

    def job(i: int, user: str, cpus: int) -> RunningJob:
        return RunningJob(str(i), "x", user, "debug", "n1", cpus, None)

    running = [
        job(1, "bob", 2),
        job(2, "alice", 4),
        job(3, "bob", 4),
        job(4, "carol", 1),
        job(5, "dave", 1),
    ]
    users = user_loads(running)
    assert [(u["user"], u["jobs"], u["cpus"]) for u in users] == [
        ("bob", 2, 6),
        ("alice", 1, 4),
        ("carol", 1, 1),
        ("dave", 1, 1),
    ]
    record = {"NodeName": "n1", "State": "MIXED", "CPUTot": "16", "CPUAlloc": "12"}
    nodes = [node_facts(record, running, datetime(2026, 11, 24))]
    busy = ClusterFacts(
        nodes=nodes, cores=16, allocated_cores=12, running_jobs=5, users=users, pending_jobs=3
    )
    assert cluster_verdict(busy) == (
        "The node takes jobs; 12 of 16 CPUs are allocated (5 running jobs: bob 6 CPUs in 2 jobs, "
        "alice 4 in 1, carol 1 in 1 and 1 more user); 3 pending jobs (/queue says why). "
        "Free CPUs on nodes that take jobs: n1 4."
    )
    drained = NodeFacts(**{**nodes[0], "name": "n2", "takes_jobs": False})
    full = NodeFacts(**{**nodes[0], "name": "n3", "allocated_cores": 16})
    assert cluster_verdict({**busy, "nodes": [drained, full]}).endswith(
        "No node that takes jobs has a free CPU."
    )
    idle = ClusterFacts(nodes=nodes * 2, cores=32, allocated_cores=0, running_jobs=0, users=[])
    assert (
        cluster_verdict(idle)
        == "All 2 nodes take jobs; 0 of 32 CPUs are allocated (0 running jobs)."
    )


@pytest.mark.parametrize(
    ("asked", "part", "words"),
    [
        (
            "3-3",
            {"TotalNodes": "2", "Nodes": "n[1-2]", "MaxNodes": "UNLIMITED"},
            "it asks for 3 nodes and the partition has 2 (n[1-2]).",
        ),
        (
            "2",
            {"TotalNodes": "2", "Nodes": "n[1-2]", "MaxNodes": "1"},
            "it asks for 2 nodes and the partition allows at most 1 per job (MaxNodes).",
        ),
        (
            "1",
            {"TotalNodes": "4", "Nodes": "n[1-4]", "MinNodes": "2"},
            "it asks for 1 node and the partition needs at least 2 per job (MinNodes).",
        ),
    ],
)
def test_a_node_count_limit_names_the_bound_it_breaks(
    asked: str, part: dict[str, str], words: str
) -> None:
    """PartitionNodeLimit on a partition without MaxNodes: the job asks for more nodes than
    the partition has (seen live: "allows 0 to UNLIMITED" was said instead)."""
    from wass_chat.slurm.explain.pending import _node_limit

    assert _node_limit(asked, part) == words


def test_a_start_a_year_away_is_no_estimate() -> None:
    """sbatch --test-only behind jobs without a time limit answers centuries ahead (2538 was
    seen live): that is an unknown start, not a late one."""
    from wass_chat.slurm.advice import Check, judge

    now = datetime(2026, 11, 24, 4, 0)
    far = Check(("sbatch",), datetime(2538, 4, 12, 16, 24), "n[1-2]", "")
    never = judge("submit to debug", far, None, now)
    assert never.helps is True and "gives no start time it can foresee" in never.outcome
    assert "more than 300 days away" in never.outcome
    assert "time limit" not in never.outcome  # which job has none is not known here
    assert "2538" not in never.outcome
    queued = judge("submit to debug", far, datetime(2026, 11, 24, 5, 0), now)
    assert queued.helps is None  # not comparable with the job's own estimate
    soon = judge("submit to debug", Check(("sbatch",), now, "n1", ""), None, now)
    assert soon.helps is True and soon.outcome == (
        "Slurm would accept it; sbatch --test-only says it would start now on n1 (its check of "
        "this one request, not a replay of the queue)"
    )


def test_an_ended_job_says_how_much_of_what_it_held_it_used() -> None:
    """'Was job 162 efficient?': CPU time over elapsed x CPUs, and on one node the memory peak
    against the request (as sacct printed them for a 2-CPU job on the live cluster)."""
    from wass_chat.slurm.explain.ended import usage
    from wass_chat.slurm.live import Snapshot

    acct = {"TotalCPU": "00:02.529", "NCPUS": "2", "NNodes": "1", "ReqMem": "500M"}
    snap = Snapshot("162", datetime(2026, 11, 24, 4, 30), accounting=acct)
    assert usage(snap, 8.0) == (
        "It kept its 2 CPUs 16% busy (3 s of CPU time in 8 s x 2 CPUs = 16 s)."
    )
    snap.steps = [{"JobID": "162.batch", "MaxRSS": "102400K"}]
    assert usage(snap, 8.0).endswith("; its memory peaked at 100 MB of the 500 MB it asked for.")
    assert usage(snap, 0.0) == "" and usage(Snapshot("1", snap.now), 8.0) == ""


@pytest.mark.parametrize("version", ["24.11", "26.05"])
def test_a_qos_user_record_is_found_however_the_release_keys_it(version: str) -> None:
    """Real assoc_mgr output: 24.11 and 26.05 key a QOS's User Limits ``wassalice(1001)``, 22.05
    ``1001``; newer TRES lists add gres/gpumem and gres/gpuutil and the per-user and per-account
    records MaxTRESRunMins (fixtures/README.md)."""
    records = parse_assoc_mgr((FIXTURES / f"assoc_mgr_{version}.txt").read_text())
    qos = next(r for r in records if r.get("QOS") == "wasslimited(2)")
    alice = own_record(qos["users"], "wassalice", "1001")
    assert count_value(alice["MaxJobsPU"]) == (1.0, 1.0)  # the cap, and her one running job
    assert own_record(qos["users"], "wassbob", "1002")["MaxJobsPU"] == "1(0)"
    assert own_record(qos["users"], "wasscarol", "1003") == {}
    assert tres_value(qos["GrpTRES"], "mem") == ("mem", 120.0, 100.0)
    assert tres_value(qos["GrpTRES"], "gres") is None  # gres/gpu, gpumem, gpuutil: no cap
    assert tres_value("cpu=N(0),gres/gpumem=N(0),gres/gpuutil=40(3)", "gres") == (
        "gres/gpuutil",
        40.0,
        3.0,
    )
    assert tres_value(alice["MaxTRESRunMinsPU"], "mem") is None  # read, no cap set
    account = own_record(qos["accounts"], "wassacct", "")
    assert count_value(account["MaxJobsPA"]) == (None, 1.0) and "MaxTRESRunMinsPA" in account
    user = next(r for r in records if r.get("UserName") == "wassalice(1001)")
    assert count_value(user["MaxJobs"]) == (1.0, 1.0) and user["ParentAccount"] == ""
    parent = next(r for r in records if r.get("Account") == "wassacct" and not r["UserName"])
    assert parent["ParentAccount"] == "wassdept(3)" and parent["MaxTRESPJ"] == "node=1"


def test_a_22_05_qos_user_record_is_keyed_by_uid() -> None:
    records = parse_assoc_mgr((FIXTURES / "assoc_mgr_22.05.txt").read_text())
    qos = next(r for r in records if r.get("QOS") == "wassq(2)")
    mine = own_record(qos["users"], "wassalice", "1001")
    assert tres_value(mine["MaxTRESPU"], "mem") == ("mem", 300.0, 100.0)
    assert own_record(qos["users"], "wassbob", "1002") == {}


@pytest.mark.parametrize(
    ("num_nodes", "cpus", "words"),
    [
        ("1", 8, " on one node"),
        ("1-1", 8, " on one node"),
        ("2", 8, " on 2 nodes"),
        ("1-8", 8, " on 1 to 8 nodes"),
        ("1-8", 1, ""),
        ("", 4, " on one node"),
    ],
)
def test_a_job_that_may_spread_is_not_said_to_need_one_node(
    num_nodes: str, cpus: int, words: str
) -> None:
    # 26.05 shows a pending `sbatch -n8` (no -N) as NumNodes=1-8: it may take CPUs on any nodes
    fewest, most = node_range(num_nodes)
    assert where_cpus(cpus, fewest, most) == words


def test_who_waited_longest_names_no_one_on_a_ranking_of_zeros_or_ties() -> None:
    """Issue #41: "wassalice waited longest: a median of 0 s" on a site where no job waited."""
    import polars as pl

    from wass_chat.slurm.explain.queue import top_waiters

    def frame(waits: dict[str, list[int]]) -> pl.DataFrame:
        t0 = datetime(2026, 12, 3, 8, 0)
        rows = [
            (user, f"{user}{k}", t0, t0 + timedelta(seconds=w))
            for user, ws in waits.items()
            for k, w in enumerate(ws)
        ]
        return pl.DataFrame(
            {
                "user": [r[0] for r in rows],
                "job_id": [r[1] for r in rows],
                "eligible": [r[2] for r in rows],
                "start": [r[3] for r in rows],
                "is_step": [False] * len(rows),
            }
        )

    zeros = top_waiters(frame({"wassalice": [0], "root": [0, 0, 0]}), "the last 7 days", 5)
    assert zeros["verdict"].startswith("Over the last 7 days, no job waited: all 4 that started")
    tie = top_waiters(frame({"bob": [30, 60], "alice": [30, 60], "carol": [5]}), "May", 5)
    assert tie["verdict"].startswith("Over May, alice and bob waited longest alike: a median of")
    assert [u["user"] for u in tie["users"]] == ["alice", "bob", "carol"]
    one = top_waiters(frame({"bob": [30, 90], "alice": [30, 60]}), "May", 5)
    assert one["verdict"].startswith("Over May, bob waited longest: a median of 1 min")


RESERVATIONS = (
    # scontrol --oneliner show reservations, Slurm 26.05 (the scenario's, verbatim)
    "ReservationName=wass-maint StartTime=2026-12-03T15:56:30 EndTime=2026-12-03T16:26:30 "
    "Duration=00:30:00 Nodes=n3 NodeCnt=1 CoreCnt=4 Features=(null) PartitionName=(null) "
    "Flags=SPEC_NODES TRES=cpu=4 AllowedPartitions=(null) QOS=(null) Users=root Groups=(null) "
    "Accounts=(null) Licenses=(null) State=INACTIVE BurstBuffer=(null) MaxStartDelay=(null)\n"
    "ReservationName=upgrade StartTime=2026-12-03T14:00:00 EndTime=2026-12-04T14:00:00 "
    "Duration=1-00:00:00 Nodes=n[1-2] NodeCnt=2 CoreCnt=4 Features=(null) PartitionName=debug "
    "Flags=MAINT,IGNORE_JOBS,SPEC_NODES TRES=cpu=4 Users=(null) Groups=(null) "
    "Accounts=physics Licenses=(null) State=ACTIVE BurstBuffer=(null)\n"
    "ReservationName=over StartTime=2026-12-03T13:00:00 EndTime=2026-12-03T14:30:00 "
    "Duration=01:30:00 Nodes=n4 NodeCnt=1 Users=bob Accounts=(null) State=ACTIVE\n"
)


def test_reservations_not_over_are_said_with_their_nodes_span_and_whom() -> None:
    """'is there a reservation?' and a node's answer: what ``scontrol show reservations`` lists
    (active ones "now until", later ones "from to"), the one already over left out."""
    from wass_chat.slurm.explain.nodes import (
        ClusterFacts,
        cluster_verdict,
        node_facts,
        node_verdict,
        reservation_facts,
    )

    class Commands:
        def __init__(self, text: str) -> None:
            self.text = text

        def run(self, argv: list[str]) -> str:
            assert argv == ["scontrol", "--oneliner", "show", "reservations"]
            return self.text

    now = datetime(2026, 12, 3, 15, 0)
    found = reservation_facts(Commands(RESERVATIONS), now)  # type: ignore[arg-type]
    assert [(r["name"], r["nodes"], r["active"]) for r in found] == [
        ("wass-maint", ["n3"], False),
        ("upgrade", ["n1", "n2"], True),
    ]
    assert reservation_facts(Commands("No reservations in the system\n"), now) == []  # type: ignore[arg-type]
    record = {"NodeName": "n3", "State": "ALLOCATED", "CPUTot": "4", "CPUAlloc": "0"}
    n3 = node_facts(record, [], now)
    assert node_verdict(n3, found).endswith(
        "Reserved: wass-maint on n3, 15:56 to 16:26, for users root."
    )
    assert "Reserved" not in node_verdict({**n3, "name": "n4"}, found)  # "over" ended at 14:30
    facts = ClusterFacts(nodes=[n3], cores=4, allocated_cores=0, running_jobs=0, users=[])
    assert cluster_verdict({**facts, "reservations": found}).endswith(
        "2 reservations: wass-maint on n3, 15:56 to 16:26, for users root; "
        "upgrade on n[1-2], now until Fri 14:00, for accounts physics."
    )
    assert "reservation" not in cluster_verdict({**facts, "reservations": []})


PARTITIONS = (
    # scontrol --oneliner show partitions, Slurm 26.05 (the scenario's, verbatim but TRES)
    "PartitionName=small AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL "
    "Default=NO QoS=N/A DefaultTime=NONE DisableRootJobs=NO Exclusive=NO GraceTime=0 Hidden=NO "
    "MaxNodes=1 MaxTime=00:10:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED "
    "MaxCPUsPerSocket=UNLIMITED Nodes=n[1-2] PriorityJobFactor=1 PriorityTier=1 RootOnly=NO "
    "ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP TotalCPUs=4 "
    "TotalNodes=2 SelectTypeParameters=NONE JobDefaults=(null) DefMemPerNode=UNLIMITED "
    "MaxMemPerNode=UNLIMITED\n"
    "PartitionName=wassqos AllowGroups=ALL AllowAccounts=ALL AllowQos=normal AllocNodes=ALL "
    "Default=NO QoS=N/A DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=1 "
    "Nodes=n[1-2] State=UP TotalCPUs=4 TotalNodes=2\n"
    "PartitionName=wassdown AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=YES "
    "MaxNodes=UNLIMITED MaxTime=2-00:00:00 MinNodes=2 Nodes=n2 State=DOWN TotalCPUs=2\n"
)


def test_a_partitions_limits_are_said_as_a_person_asks_for_them() -> None:
    """'what is the max time limit in the small partition?' (a what-if's clarification before):
    MaxTime, MaxNodes, MinNodes and AllowQos in words, its CPUs in use and its nodes out."""
    from wass_chat.slurm.commands import scontrol_records
    from wass_chat.slurm.explain.nodes import node_facts
    from wass_chat.slurm.explain.partitions import partition_facts, partition_verdict

    now = datetime(2026, 12, 3, 15, 0)
    nodes = [
        node_facts({"NodeName": "n1", "State": "IDLE+DRAIN", "CPUTot": "2"}, [], now),
        node_facts({"NodeName": "n2", "State": "MIXED", "CPUTot": "2", "CPUAlloc": "1"}, [], now),
    ]
    small, qos, down = (partition_facts(r, nodes) for r in scontrol_records(PARTITIONS))
    assert partition_verdict(small) == (
        "Partition small is up: n[1-2], 1 of 4 CPUs in use (n1 is drained). A job there runs "
        "at most 10 min (MaxTime) on at most 1 node (MaxNodes)."
    )
    assert partition_verdict(qos).endswith(
        "runs with no time limit (MaxTime=UNLIMITED); it admits only QOS normal."
    )
    assert partition_verdict(down) == (
        "Partition wassdown is down (it takes jobs but starts none) and the default: n2, 1 of 2 "
        "CPUs in use. A job there runs at most 48 h (MaxTime) on at least 2 nodes (MinNodes)."
    )


def test_which_partition_takes_a_job_of_a_given_length() -> None:
    """'which partition should I use for a 2 hour job?' (the pending queue's overview, before):
    by MaxTime and state; a length in any form a person or sbatch writes it."""
    from wass_chat.slurm.commands import scontrol_records
    from wass_chat.slurm.explain.partitions import (
        admitting_verdict,
        partition_facts,
        time_limit_seconds,
    )

    assert [time_limit_seconds(t) for t in ("2h", "90min", "1.5d", "30s", "2:00:00", "90")] == [
        7200,
        5400,
        129600,
        30,
        7200,
        5400,
    ]
    for bad in ("banana", "0", "-1h"):
        with pytest.raises(InputError):
            time_limit_seconds(bad)
    partitions = [partition_facts(r, []) for r in scontrol_records(PARTITIONS)]
    assert admitting_verdict(partitions, 7200) == (
        "For a job of 2 h: wassqos (only QOS normal) takes it; small (at most 10 min) does not; "
        "wassdown (down) starts no new job now (MaxTime and state, from scontrol show partitions)."
    )
    assert admitting_verdict(partitions, 300).startswith(
        "For a job of 5 min: small and wassqos (only QOS normal) take it;"
    )


def test_the_cluster_answer_lists_partitions_and_reservations_for_what_was_asked() -> None:
    """The whole cluster: every partition and every reservation (one on no node too); one
    partition: its nodes, its line and the reservations on its nodes only."""
    from wass_chat.answers.cluster import render_cluster
    from wass_chat.slurm.commands import scontrol_records
    from wass_chat.slurm.explain.nodes import ClusterFacts, ReservationFacts, node_facts
    from wass_chat.slurm.explain.partitions import partition_facts

    now = datetime(2026, 12, 3, 15, 0)
    nodes = [
        node_facts({"NodeName": n, "State": "IDLE", "CPUTot": "2"}, [], now)
        for n in ("n1", "n2", "n3")
    ]
    partitions = [partition_facts(r, nodes) for r in scontrol_records(PARTITIONS)]
    on_n3 = ReservationFacts(
        name="maint",
        nodes=["n3"],
        start="16:00",
        end="17:00",
        active=False,
        users="root",
        accounts="",
    )
    licences = ReservationFacts(
        name="lic", nodes=[], start="", end="18:00", active=True, users="", accounts="physics"
    )
    facts = ClusterFacts(
        kind="cluster",
        source="slurm",
        verdict="v",
        node=None,
        partition=None,
        nodes=nodes,
        partitions=partitions,
        reservations=[on_n3, licences],
    )
    whole = render_cluster(facts)  # type: ignore[arg-type]
    assert "**Partitions** (`scontrol show partitions`):" in whole
    assert all(f"- `{p['name']}`" in whole for p in partitions)
    assert "- `maint` on n3, 16:00 to 17:00, for users `root`" in whole
    assert "- `lic` on no node, now until 18:00, for accounts `physics`" in whole
    small = render_cluster({**facts, "partition": "small"})  # type: ignore[arg-type]
    assert "- `small`: UP; `n[1-2]`" in small and "- `wassqos`" not in small
    assert "- `n1`" in small and "- `n3`" not in small
    assert "**Reservations** (`scontrol show reservations`):\n- none" in small
