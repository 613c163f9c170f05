"""The queue as a whole: what blocks the most pending jobs, which partition is congested, who
waits longest right now, what runs and whose jobs these are (live), and who waited longest over
a period (accounting).

"How many jobs are running?", "what is alice running?", "which user has the most jobs in the
queue?" are squeue's questions: answered from it now, never from a week of accounting.

A partition, user or account the cluster does not know is refused with the nearest names
(:func:`~wass_chat.slurm.names.check_name`): ``squeue -p debgu`` answers an empty queue, which
would read as "nothing blocks the queue" while jobs pend.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any, TypedDict

import polars as pl

from wass_chat.slurm.commands import SlurmCommands, parse_parsable, scontrol_records
from wass_chat.slurm.explain.ended import duration
from wass_chat.slurm.explain.phrases import names
from wass_chat.slurm.explain.queue_headline import attention, queue_verdict, scope_words
from wass_chat.slurm.formats import slurm_duration, slurm_time
from wass_chat.slurm.hostlist import expand
from wass_chat.slurm.names import check_name
from wass_chat.slurm.reasons import classify

JOB_IDS_SHOWN = 8
"""How many job ids each reason's row names, in squeue's order ("which jobs are held?")."""
RUNNING_SHOWN = 8
"""How many running jobs the answer lists, the longest-running first."""


class QueueFacts(TypedDict):
    """What ``queue_overview`` returns (kind ``queue``)."""

    kind: str
    verdict: str
    partition: str | None
    user: str | None
    account: str | None
    pending: int
    running: int
    reasons: list[dict[str, Any]]
    attention: dict[str, int]
    """Pending jobs that need a person (never, release, admin, and their sum) and that start by
    themselves."""
    partitions: list[dict[str, Any]]
    longest: list[dict[str, Any]]
    running_jobs: list[dict[str, Any]]
    """The longest-running jobs first (at most :data:`RUNNING_SHOWN`; ``running`` counts all)."""
    users: list[dict[str, Any]]
    """Per user: running and pending jobs (squeue's lines: an array's pending tasks are one)."""
    source: str


def queue_overview(
    commands: SlurmCommands,
    partition: str | None = None,
    user: str | None = None,
    now: datetime | None = None,
    account: str | None = None,
) -> QueueFacts:
    """The pending queue grouped by reason and partition, with its longest waiters; only of
    ``partition``, ``user`` and ``account`` when given (each may be a comma-separated list).

    Raises :class:`~sim.errors.NoSuchName` for a name the cluster lacks."""
    now = now or datetime.now()
    for kind, name in (("partition", partition), ("user", user), ("account", account)):
        check_name(commands, kind, name)
    fields = (
        "id",
        "partition",
        "state",
        "reason",
        "submit",
        "cpus",
        "user",
        "elapsed",
        "nodes",
        "name",
    )
    argv = ["squeue", "-h", "-t", "PD,R", "-o", "%i|%P|%T|%r|%V|%C|%u|%M|%N|%j"]
    if partition:
        argv += ["-p", partition]
    if user:
        argv += ["-u", user]
    if account:
        argv += ["-A", account]
    jobs = parse_parsable(commands.run(argv), fields)
    pending = [j for j in jobs if j["state"] == "PENDING"]
    running = [j for j in jobs if j["state"] == "RUNNING"]
    counts = Counter(j["reason"] for j in pending)
    reasons = [
        {
            "reason": code,
            "jobs": n,
            "class": classify(code).klass,
            "outcome": classify(code).outcome,
            "meaning": classify(code).meaning,
            "cpus": sum(int(j["cpus"] or 0) for j in pending if j["reason"] == code),
            "job_ids": [j["id"] for j in pending if j["reason"] == code][:JOB_IDS_SHOWN],
        }
        for code, n in counts.most_common()
    ]
    parts = _partitions(commands, pending)
    if partition:
        parts = [p for p in parts if p["partition"] in partition.split(",")]
    elif user or account:  # their partitions: the rest holds none of their pending jobs
        parts = [p for p in parts if p["pending_jobs"]] or parts

    def age(job: dict[str, str]) -> float:
        submitted = slurm_time(job["submit"])
        return (now - submitted).total_seconds() if submitted else 0.0

    longest = [
        {
            "job_id": j["id"],
            "user": j["user"],
            "partition": j["partition"],
            "reason": j["reason"],
            "age_s": age(j),
            "cpus": int(j["cpus"] or 0),
        }
        for j in sorted(pending, key=age, reverse=True)[:5]
    ]
    running_jobs: list[dict[str, Any]] = [
        {
            "job_id": j["id"],
            "user": j["user"],
            "partition": j["partition"],
            "nodes": j["nodes"],
            "cpus": int(j["cpus"] or 0),
            "elapsed_s": slurm_duration(j["elapsed"]) or 0.0,
        }
        for j in running
    ]
    running_jobs.sort(key=lambda j: -j["elapsed_s"])  # stable: squeue's order among equals
    users = _users(running, pending)
    return QueueFacts(
        kind="queue",
        verdict=queue_verdict(
            pending,
            reasons,
            parts,
            longest,
            scope_words(partition, user, account),
            running_jobs,
            users,
        ),
        attention=attention(pending),
        partition=partition,
        user=user,
        account=account,
        pending=len(pending),
        running=len(running),
        reasons=reasons,
        partitions=parts,
        longest=longest,
        running_jobs=running_jobs[:RUNNING_SHOWN],
        users=users,
        source="squeue, scontrol",
    )


def _users(running: list[dict[str, str]], pending: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Each user's running and pending jobs, the most jobs first (ties by name)."""
    runs, waits = Counter(j["user"] for j in running), Counter(j["user"] for j in pending)
    rows = [
        {"user": u, "jobs": runs[u] + waits[u], "running": runs[u], "pending": waits[u]}
        for u in set(runs) | set(waits)
    ]
    return sorted(rows, key=lambda r: (-r["jobs"], r["user"]))


def _partitions(commands: SlurmCommands, pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per partition: its state (UP, DOWN, DRAIN, INACTIVE), CPUs in use against its usable
    total, drained nodes, pending demand."""
    nodes = {r.get("NodeName", ""): r for r in _records(commands, "nodes")}
    out = []
    for record in _records(commands, "partitions"):
        name = record.get("PartitionName", "")
        listed = record.get("Nodes", "")  # "ALL" when slurm.conf says Nodes=ALL
        members = (
            list(nodes.values())
            if listed == "ALL"
            else [nodes[n] for n in expand(listed) if n in nodes]
        )
        bad = [
            n.get("NodeName", "")
            for n in members
            if any(s in n.get("State", "") for s in ("DRAIN", "DOWN", "FAIL"))
        ]
        waiting = [j for j in pending if name in j["partition"].split(",")]
        out.append(
            {
                "partition": name,
                "state": record.get("State", "UP"),
                "cpus_total": sum(int(n.get("CPUTot") or 0) for n in members),
                "cpus_allocated": sum(int(n.get("CPUAlloc") or 0) for n in members),
                "unavailable_nodes": bad,
                "pending_jobs": len(waiting),
                "pending_cpus": sum(int(j["cpus"] or 0) for j in waiting),
            }
        )
    return sorted(out, key=lambda p: (-p["pending_cpus"], p["partition"]))


def _records(commands: SlurmCommands, what: str) -> list[dict[str, str]]:
    return scontrol_records(commands.run(["scontrol", "--oneliner", "show", what]))


class WaitersFacts(TypedDict):
    """What ``top_waiters`` returns (kind ``waiters``)."""

    kind: str
    verdict: str
    period: str
    users: list[dict[str, Any]]
    jobs: int
    note: str


def top_waiters(jobs: pl.DataFrame, period: str, count: int, note: str = "") -> WaitersFacts:
    """Users ranked by median wait (eligible to start) over allocations that started."""
    frame = jobs.filter(
        ~pl.col("is_step") & pl.col("start").is_not_null() & pl.col("eligible").is_not_null()
    )
    frame = frame.with_columns(
        ((pl.col("start") - pl.col("eligible")).dt.total_seconds().clip(lower_bound=0)).alias(
            "wait_s"
        )
    )
    ranked = (
        frame.group_by("user")
        .agg(
            pl.len().alias("jobs"),
            pl.col("wait_s").median().alias("median_wait_s"),
            pl.col("wait_s").max().alias("max_wait_s"),
            pl.col("job_id").sort_by("wait_s").last().alias("longest_job"),
        )
        .sort(["median_wait_s", "max_wait_s", "user"], descending=[True, True, False])
        .head(count)
    )
    users = ranked.to_dicts()
    if not users:
        verdict = f"No job started in {period}, so nobody waited."
    elif users[0]["max_wait_s"] <= 0:  # a ranking of zeros names no one (issue #41)
        verdict = (
            f"Over {period}, no job waited: all {frame.height} that started did so as soon as "
            "they were eligible (sacct's Eligible and Start are the same second)."
        )
    else:
        top = users[0]
        tied = [u["user"] for u in users if _wait_key(u) == _wait_key(top)]
        jobs = f"{top['jobs']} job" + ("" if top["jobs"] == 1 else "s")
        who = (
            f"{top['user']} waited longest"
            if len(tied) == 1
            else f"{names(tied)} waited longest alike"
        )
        verdict = (
            f"Over {period}, {who}: a median of {duration(top['median_wait_s'])} over {jobs} "
            f"(longest: job {top['longest_job']}, {duration(top['max_wait_s'])})."
            if len(tied) == 1
            else f"Over {period}, {who}: a median of {duration(top['median_wait_s'])} each, "
            f"and {duration(top['max_wait_s'])} at the longest."
        )
    return WaitersFacts(
        kind="waiters", verdict=verdict, period=period, users=users, jobs=frame.height, note=note
    )


def _wait_key(user: dict[str, Any]) -> tuple[float, float]:
    return (user["median_wait_s"], user["max_wait_s"])
