"""Why a node takes jobs or not: its state in words, the reason an admin gave, the jobs on it.

"why is n2 drained?" and "are any nodes down?" get a verdict first, from ``scontrol show nodes``
(state, ``Reason=... [user@time]``, CPUs and memory in use) and ``squeue -t R`` (which jobs hold
the node, until when). Slurm's state flags become words a person uses: ``IDLE+DRAIN`` is
"drained", ``MIXED+DRAIN`` "draining" (its running jobs finish, nothing new starts), a trailing
``*`` "not responding". The facts are a :class:`ClusterFacts` dict, rendered by
:func:`wass_chat.answers.cluster.render_cluster`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TypedDict

from sim.errors import NoSuchName
from wass_chat.slurm.advice import cpus
from wass_chat.slurm.availability import ensure_slurm
from wass_chat.slurm.backend import choose_backend
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands, scontrol_records
from wass_chat.slurm.explain.partitions import (
    PartitionFacts,
    admitting_verdict,
    partition_facts,
    partition_verdict,
    time_limit_seconds,
)
from wass_chat.slurm.explain.phrases import jobs
from wass_chat.slurm.formats import clock, is_set, memory_mb, slurm_time
from wass_chat.slurm.hostlist import collect, expand
from wass_chat.slurm.live import LICENCES_ARGV, RUNNING_ARGV, RunningJob, parse_running
from wass_chat.slurm.nodes import state_flags
from wass_chat.slurm.occupancy import running_jobs
from wass_chat.slurm.reservations import RESERVATIONS_ARGV, parse_reservations

PENDING_ARGV = ["squeue", "-h", "-t", "PD", "-o", "%i"]

_REASON = re.compile(r"^(?P<text>.*?)\s*\[(?P<who>[^@\]]+)@(?P<when>[^\]]+)\]\s*$")
UNAVAILABLE = frozenset(
    {
        "DRAIN",
        "DOWN",
        "FAIL",
        "NOT_RESPONDING",
        "POWERED_DOWN",
        "MAINT",
        "INVALID_REG",
        "POWERING_UP",
        "REBOOT_ISSUED",
    }
)
"""Flags that keep new jobs off a node."""


class NodeJob(TypedDict):
    job_id: str
    user: str
    cpus: int
    ends: str
    """When its time limit runs out (``02:10``), or '' when it has none."""


class NodeFacts(TypedDict):
    name: str
    state: str
    """As Slurm prints it (``IDLE+DRAIN``)."""
    condition: str
    """In words: idle, partly allocated, allocated, drained, draining, down, not responding."""
    takes_jobs: bool
    cores: int
    allocated_cores: int
    memory_mb: float
    allocated_memory_mb: float
    partitions: list[str]
    reason: str
    reason_by: str
    reason_since: str
    jobs: list[NodeJob]


class UserLoad(TypedDict):
    """One user's running jobs and the CPUs they hold."""

    user: str
    jobs: int
    cpus: int


class ReservationFacts(TypedDict):
    """A reservation not yet over (``scontrol show reservations``)."""

    name: str
    nodes: list[str]
    start: str
    """In a person's clock (``15:56``, ``Tue 09:00``)."""
    end: str
    active: bool
    users: str
    """``Users=`` as Slurm prints it (``root,alice``), '' when unset; ``accounts`` likewise."""
    accounts: str


class LicenceFacts(TypedDict):
    """A cluster licence (``scontrol show licenses``): how many there are and are in use."""

    name: str
    total: int
    used: int
    free: int


class ClusterFacts(TypedDict, total=False):
    """What ``cluster_status`` returns (kind ``cluster``)."""

    kind: str
    source: str
    verdict: str
    node: str | None
    partition: str | None
    """The partition asked about ("what is the time limit of small?"), or None."""
    nodes: list[NodeFacts]
    partitions: list[PartitionFacts]
    cores: int
    allocated_cores: int
    running_jobs: int
    users: list[UserLoad]
    """Who holds the running jobs' CPUs, the most first ("is the cluster busy?", "who is using
    it?")."""
    pending_jobs: int
    reservations: list[ReservationFacts]
    licences: list[LicenceFacts]
    backend: str
    """The Slurm release and how wass-chat talks to it, with why not pyslurm
    (:func:`wass_chat.slurm.backend.choose_backend`)."""


def condition(flags: set[str]) -> str:
    """A node's state in a person's words, the most serious first."""
    busy = bool(flags & {"ALLOCATED", "MIXED", "COMPLETING"})
    if "NOT_RESPONDING" in flags:
        return "not responding"
    if flags & {"DOWN", "FAIL"}:
        return "down"
    if "DRAIN" in flags:
        return "draining" if busy else "drained"
    if "MAINT" in flags or "RESERVED" in flags:
        return "reserved"
    if "POWERED_DOWN" in flags:
        return "powered down"
    if flags & {"POWERING_UP", "REBOOT_ISSUED"}:
        return "rebooting"
    if "INVALID_REG" in flags:
        return "down"  # registered with other hardware than slurm.conf says
    if "ALLOCATED" in flags:
        return "allocated"
    if busy:
        return "partly allocated"
    return "idle"


def node_facts(
    record: Mapping[str, str],
    running: Sequence[RunningJob],
    now: datetime,
    cpus_on: Mapping[tuple[str, str], int] | None = None,
) -> NodeFacts:
    """One node's facts from its ``scontrol`` record and the running jobs placed on it.

    ``cpus_on`` (job id, node) -> CPUs: what each job holds on each node, as Slurm allocated it
    (:func:`wass_chat.slurm.occupancy.running_jobs`); without it a job's total is shown."""
    name = record.get("NodeName", "?")
    flags = state_flags(record.get("State", ""))
    reason, who, since = record.get("Reason", ""), "", ""
    if match := _REASON.match(reason):
        reason, who = match["text"], match["who"]
        since = clock(slurm_time(match["when"]), now)
    on = cpus_on or {}
    held = [
        NodeJob(
            job_id=j.job_id,
            user=j.user,
            cpus=on.get((j.job_id, name), j.cpus),
            ends=clock(j.end, now) if j.end else "",
        )
        for j in running
        if name in expand(j.nodes)
    ]
    return NodeFacts(
        name=name,
        state=record.get("State", "?"),
        condition=condition(flags),
        takes_jobs=not flags & UNAVAILABLE,
        cores=int(record.get("CPUTot", "0") or 0),
        allocated_cores=int(record.get("CPUAlloc", "0") or 0),
        memory_mb=memory_mb(record.get("RealMemory", "0") + "M") or 0.0,
        allocated_memory_mb=memory_mb(record.get("AllocMem", "0") + "M") or 0.0,
        partitions=[p for p in record.get("Partitions", "").split(",") if is_set(p) and p],
        reason=reason if is_set(reason) else "",
        reason_by=who,
        reason_since=since,
        jobs=held,
    )


def cluster_status(
    commands: SlurmCommands,
    node: str | None = None,
    now: datetime | None = None,
    partition: str | None = None,
    time_limit: str | None = None,
) -> ClusterFacts:
    """Every node's and partition's facts and a verdict (about ``node`` or ``partition`` when
    one is named; which partitions take a job of ``time_limit``, e.g. ``2h``, when given).

    Raises :class:`~sim.errors.NoSuchName` for a node or partition the cluster does not have
    (with the nearest names), and
    :class:`~sim.errors.ServiceUnavailable` when Slurm does not answer.
    """
    now = now or datetime.now()
    running = parse_running(commands.run(RUNNING_ARGV))
    pending = len(commands.run(PENDING_ARGV).split())
    allocated, _ = running_jobs(commands)
    cpus_on = {(job.job_id, node): cpus for job in allocated for node, cpus in job.cpus_by_node}
    nodes = [node_facts(r, running, now, cpus_on) for r in commands.show_nodes()]
    by_name = {n["name"]: n for n in nodes}
    if node is not None and node not in by_name:
        raise NoSuchName("node", node, by_name, "on this cluster")
    partitions = [partition_facts(r, nodes) for r in commands.show_partitions()]
    if partition is not None and partition not in {p["name"] for p in partitions}:
        raise NoSuchName("partition", partition, [p["name"] for p in partitions], "on this cluster")
    facts = ClusterFacts(
        kind="cluster",
        source="slurm",
        node=node,
        partition=partition,
        nodes=nodes,
        partitions=partitions,
        cores=sum(n["cores"] for n in nodes),
        allocated_cores=sum(n["allocated_cores"] for n in nodes),
        running_jobs=len(running),
        users=user_loads(running),
        pending_jobs=pending,
        reservations=reservation_facts(commands, now),
        licences=licence_facts(commands),
        backend=choose_backend(ensure_slurm("scontrol").version).line(),
    )
    if node:
        facts["verdict"] = node_verdict(by_name[node], facts["reservations"])
    elif partition:
        facts["verdict"] = partition_verdict(next(p for p in partitions if p["name"] == partition))
    elif time_limit:
        facts["verdict"] = admitting_verdict(partitions, time_limit_seconds(time_limit))
    else:
        facts["verdict"] = cluster_verdict(facts)
    return facts


def reservation_facts(commands: SlurmCommands, now: datetime) -> list[ReservationFacts]:
    """The reservations not yet over; none when ``scontrol`` refuses to list them."""
    try:
        text = commands.run(RESERVATIONS_ARGV)
    except SlurmCommandError:
        return []
    return [
        ReservationFacts(
            name=r.name,
            nodes=list(r.nodes),
            start=clock(r.start, now) if r.start else "",
            end=clock(r.end, now) if r.end else "",
            active=r.active(now),
            users=r.users,
            accounts=r.accounts,
        )
        for r in parse_reservations(text, now)
    ]


def licence_facts(commands: SlurmCommands) -> list[LicenceFacts]:
    """The cluster's licences (slurm.conf ``Licenses=``); none when there are none or
    ``scontrol`` refuses ("No licenses configured" is no record)."""
    try:
        text = commands.run(list(LICENCES_ARGV))
    except SlurmCommandError:
        return []
    out = []
    for record in scontrol_records(text):
        if not record.get("LicenseName"):
            continue
        total, used = _count_of(record.get("Total")), _count_of(record.get("Used"))
        free = _count_of(record.get("Free"), total - used)
        out.append(LicenceFacts(name=record["LicenseName"], total=total, used=used, free=free))
    return out


def _count_of(value: str | None, default: int = 0) -> int:
    return int(value) if value and value.isdigit() else default


def licence_words(licences: Sequence[LicenceFacts], name: Callable[[str], str] = str) -> str:
    """``matlab 0 of 2 free, ansys 3 of 4 free``."""
    return ", ".join(f"{name(x['name'])} {x['free']} of {x['total']} free" for x in licences)


def reservation_words(r: ReservationFacts, name: Callable[[str], str] = str) -> str:
    """``wass-maint on n3, 15:56 to 16:26, for users root`` (``now until 16:26`` when active);
    ``name`` writes the names Slurm was given (Markdown escapes them)."""
    span = f"now until {r['end']}" if r["active"] else f"{r['start']} to {r['end']}"
    whom = " and ".join(f"{k} {name(r[k])}" for k in ("users", "accounts") if r[k])
    whom = f", for {whom}" if whom else ""
    return f"{name(r['name'])} on {collect(r['nodes']) or 'no node'}, {span}{whom}"


def user_loads(running: Sequence[RunningJob]) -> list[UserLoad]:
    """Running jobs and CPUs per user, the most CPUs first (ties by name)."""
    loads: dict[str, UserLoad] = {}
    for job in running:
        load = loads.setdefault(job.user, UserLoad(user=job.user, jobs=0, cpus=0))
        load["jobs"] += 1
        load["cpus"] += job.cpus
    return sorted(loads.values(), key=lambda u: (-u["cpus"], u["user"]))


def reason_words(n: NodeFacts) -> str:
    """``: "disk swap" (set by root at 01:59)``, or nothing when no reason was given."""
    if not n["reason"]:
        return ""
    by = f" (set by {n['reason_by']} at {n['reason_since']})" if n["reason_by"] else ""
    return f': "{n["reason"]}"{by}'


def _holders(n: NodeFacts) -> str:
    """``job 129 (root, 8 CPUs, until about 02:10)``, the jobs joined."""
    return ", ".join(
        f"job {j['job_id']} ({j['user']}, {cpus(j['cpus'])}, "
        + (f"until about {j['ends']})" if j["ends"] else "no time limit)")
        for j in n["jobs"]
    )


def node_verdict(n: NodeFacts, reservations: Sequence[ReservationFacts] = ()) -> str:
    """One or two sentences on why ``n`` takes jobs or not, then the reservations on it."""
    held = [r for r in reservations if n["name"] in r["nodes"]]
    if not held:
        return _state_verdict(n)
    return f"{_state_verdict(n)} Reserved: " + "; ".join(map(reservation_words, held)) + "."


def _state_verdict(n: NodeFacts) -> str:
    name, cores, used = n["name"], n["cores"], n["allocated_cores"]
    state = n["condition"]
    if state == "drained":
        return (
            f"{name} is drained{reason_words(n)}. It takes no new jobs until an admin "
            f"resumes it (scontrol update nodename={name} state=resume); none of its {cores} "
            "CPUs is in use."
        )
    if state == "draining":
        return (
            f"{name} is draining{reason_words(n)}. Its running jobs finish ({_holders(n)}), "
            "but no new job starts there until an admin resumes it."
        )
    if state in {"down", "not responding"}:
        cause = " (slurmd is stopped or unreachable)" if state == "not responding" else ""
        return (
            f"{name} is {state}{cause}{reason_words(n)}. It takes no jobs until it is back "
            f"and resumed (scontrol update nodename={name} state=resume)."
        )
    if state in {"reserved", "powered down", "rebooting"}:
        return f"{name} is {state}{reason_words(n)}; jobs outside that state's rules wait."
    if state == "idle":
        return f"{name} is idle: all {cores} of its CPUs are free."
    holders = _holders(n) or "jobs"
    verb = "holds" if len(n["jobs"]) == 1 else "hold"
    if state == "allocated":
        return f"{name} is fully allocated: {holders} {verb} all {cores} of its CPUs."
    return f"{name} is partly allocated: {holders} {verb} {used} of its {cores} CPUs."


def _by_user(users: Sequence[UserLoad], shown: int = 3) -> str:
    """``: root 7 CPUs in 2 jobs, alice 4 in 1`` (the first ``shown`` users, then how many more)."""
    if not users:
        return ""
    first, *rest = users[:shown]
    words = [f"{first['user']} {first['cpus']} CPUs in {jobs(first['jobs'])}"]
    words += [f"{u['user']} {u['cpus']} in {u['jobs']}" for u in rest]
    if (more := len(users) - shown) > 0:
        words[-1] += f" and {more} more user{'s' * (more > 1)}"
    return ": " + ", ".join(words)


def cluster_verdict(f: ClusterFacts) -> str:
    """How many nodes take jobs, which do not and why, and how much of the cluster is in use."""
    nodes = f["nodes"]
    out = [n for n in nodes if not n["takes_jobs"]]
    usage = (
        f"{f['allocated_cores']} of {f['cores']} CPUs are allocated "
        f"({jobs(f['running_jobs'], 'running')}{_by_user(f.get('users', []))})"
    )
    if pending := f.get("pending_jobs", 0):
        usage += f"; {jobs(pending, 'pending')} (/queue says why)"
    usage += "."
    if f["allocated_cores"]:
        usage += f" {_free(nodes)}"
    if reserved := f.get("reservations", []):
        named = "; ".join(map(reservation_words, reserved[:3]))
        more = f" and {len(reserved) - 3} more" if len(reserved) > 3 else ""
        usage += f" {_count(len(reserved), 'reservation')}: {named}{more}."
    if licences := f.get("licences", []):
        usage += f" Licences: {licence_words(licences)}."
    if not out:
        every = f"All {len(nodes)} nodes take" if len(nodes) > 1 else "The node takes"
        return f"{every} jobs; {usage}"
    which = "; ".join(f"{n['name']} is {n['condition']}{reason_words(n)}" for n in out)
    return f"{len(nodes) - len(out)} of {len(nodes)} nodes take jobs: {which}. {usage}"


def _free(nodes: Sequence[NodeFacts], shown: int = 4) -> str:
    """``Free CPUs on nodes that take jobs: n5 4, n2 1.`` (the most first), or that none is:
    "which nodes are idle?" on a busy cluster. Memory is not counted: a free CPU beside all of
    its node's memory allocated starts no job."""
    free = sorted(
        ((n["cores"] - n["allocated_cores"], n["name"]) for n in nodes if n["takes_jobs"]),
        key=lambda x: (-x[0], x[1]),
    )
    free = [(count, name) for count, name in free if count > 0]
    if not free:
        return "No node that takes jobs has a free CPU."
    words = ", ".join(f"{name} {count}" for count, name in free[:shown])
    more = f" and {len(free) - shown} more nodes" if len(free) > shown else ""
    return f"Free CPUs on nodes that take jobs: {words}{more}."


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"
