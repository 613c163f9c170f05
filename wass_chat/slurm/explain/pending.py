"""Why a pending job waits: one explainer per reason class, each quoting Slurm's own fields.

Every explainer returns an :class:`Explanation` whose verdict is one plain sentence computed
from the snapshot (never from a guess); the caller adds checked advice and the expected start.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from wass_chat.slurm.advice import Advice, free_cpus
from wass_chat.slurm.advice import cpus as _cpus
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands, parse_parsable
from wass_chat.slurm.explain.blocked import (
    array_limit,
    node_unavailable,
    not_allowed,
    partition_state,
    reservation_deleted,
)
from wass_chat.slurm.explain.limits import constraints, licenses, limit
from wass_chat.slurm.explain.model import Explanation
from wass_chat.slurm.explain.nodes import node_facts, reason_words
from wass_chat.slurm.explain.phrases import minutes, names, running_line
from wass_chat.slurm.formats import clock, memory_mb, slurm_duration
from wass_chat.slurm.hostlist import expand
from wass_chat.slurm.live import Quoted, Snapshot
from wass_chat.slurm.reasons import Reason, classify


def node_range(num_nodes: str) -> tuple[int, int]:
    """The fewest and most nodes a job may run on, from scontrol's ``NumNodes``: ``1`` or
    ``2-2`` (exactly), ``1-8`` (a job asking ``--ntasks=8`` without ``--nodes`` may spread over
    up to 8: 26.05 prints it so for a pending job)."""
    low, _, high = num_nodes.partition("-")
    fewest = int(low) if low.isdigit() and int(low) > 0 else 1
    return fewest, max(fewest, int(high) if high.isdigit() else fewest)


def where_cpus(cpus: int, fewest: int, most: int) -> str:
    """Where a job's CPUs must be, as the verdict says it: ``" on one node"``, ``" on 2
    nodes"``, ``" on 1 to 8 nodes"``; nothing for one CPU."""
    if cpus <= 1:
        return ""
    if most == 1:
        return " on one node"
    return f" on {fewest} nodes" if fewest == most else f" on {fewest} to {most} nodes"


def resources(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    """Waiting for CPUs (or memory, GPUs, nodes) that running jobs hold."""
    jid = snap.job_id
    planned = set(expand(snap.planned_nodes))
    free = free_cpus(snap, snap.partition)
    fewest, most = node_range(snap.num_nodes)
    per_node = -(-snap.cpus // most)
    able = [n for n in free if int(snap.node(n).get("CPUTot") or 0) >= per_node]
    holders = [j for j in snap.running if set(expand(j.nodes)) & (planned or set(able))]
    holders.sort(key=lambda j: (j.end is None, j.end))
    fits = (
        max((free.get(n, 0) for n in able), default=0)
        if most == 1
        else sum(free.get(n, 0) for n in able)
    )
    what = "CPUs" if fits < snap.cpus else "GPUs" if "gpu" in snap.get("TresPerNode") else "memory"
    need = f"it needs {_cpus(snap.cpus)}{where_cpus(snap.cpus, fewest, most)}"
    if what == "memory":
        asked = memory_mb(snap.get("MinMemoryNode")) or 0
        need = (
            f"it needs {asked:.0f} MB of memory per node"
            if asked
            else "it asked for no --mem, so it needs all of a node's memory"
        )
    if holders:
        first = holders[0]
        busy = sorted({n for j in holders for n in expand(j.nodes)} & (planned or set(able)))
        keys, unit = (
            (("AllocMem", "RealMemory"), " MB of memory")
            if what == "memory"
            else (("CPUAlloc", "CPUTot"), " CPUs")
        )
        alloc = sum(int(snap.node(n).get(keys[0]) or 0) for n in busy)
        total = sum(int(snap.node(n).get(keys[1]) or 0) for n in busy)
        share = f"all {total}{unit}" if alloc >= total else f"{alloc} of the {total}{unit}"
        share += f" of {names(busy)}"
        if len(holders) == 1:  # its whole size, not only its share of the nodes named
            size = f" ({_cpus(first.cpus)} on {first.nodes})" if first.cpus > alloc else ""
            who = f"job {first.job_id} of user {first.user}{size} holds {share}"
        else:
            who = f"{len(holders)} running jobs hold {share}"
        verdict = f"Job {jid} waits for {what}: {who}; {need}."  # its start: one source, below
    else:
        verdict = f"Job {jid} waits for {what} in partition {snap.partition}; {need}."
    out = Explanation(verdict)
    out.quote(
        snap.quote("Reason"), snap.quote("NumCPUs"), snap.quote("NumNodes"), snap.quote("TRES")
    )
    out.quote(*(running_line(j) for j in holders[:5]))
    for name in sorted(planned or set(able))[:6]:
        node = snap.node(name)
        out.quote(
            Quoted(
                "scontrol show nodes",
                f"{name} CPUAlloc/CPUTot",
                f"{node.get('CPUAlloc')}/{node.get('CPUTot')}",
            )
        )
    if snap.backfill_last:
        out.quote(Quoted("sdiag", "backfill Last cycle when", snap.backfill_last))
    return out


def priority(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    """Waiting behind higher-priority jobs of the same partition that compete for nodes."""
    mine = (-int(snap.get("Priority") or 0), int(snap.job_id.split("_")[0]))
    line = [
        p
        for p in snap.pending
        if p["partition"] == snap.partition
        and classify(p["reason"]).klass in {"resources", "priority"}
    ]

    def rank(p: dict[str, str]) -> tuple[int, int]:
        head = p["job_id"].split("_")[0]
        return (-int(p["priority"] or 0), int(head) if head.isdigit() else 0)

    ahead = sorted((p for p in line if rank(p) < mine), key=rank)
    ids = [p["job_id"] for p in ahead]
    shown = names([f"job {i}" for i in ids[:3]]) + (" and others" if len(ids) > 3 else "")
    verdict = (
        f"Job {snap.job_id} waits its turn: {len(ids)} pending job"
        f"{'s' if len(ids) != 1 else ''} in partition {snap.partition} "
        f"{'come' if len(ids) != 1 else 'comes'} first ({shown}, by priority, then age); it is "
        f"number {len(ids) + 1} of {len(line)} in line."
    )
    if not ids:
        verdict = (
            f"Job {snap.job_id} is first in line in partition {snap.partition}; it waits for "
            f"the scheduler's next pass to find it room."
        )
    out = Explanation(verdict)
    out.figures.update(jobs_ahead=len(ids), place_in_line=len(ids) + 1, in_line=len(line))
    out.quote(snap.quote("Reason"), snap.quote("Priority"))
    if snap.priority:
        factors = ", ".join(
            f"{k} {snap.priority[k]}" for k in ("age", "fairshare", "jobsize", "partition", "qos")
        )
        out.quote(Quoted(f"sprio -j {snap.job_id}", "priority factors", factors))
    if snap.fairshare:
        out.quote(Quoted(f"sshare -u {snap.user}", "FairShare", snap.fairshare))
    out.quote(
        *(Quoted("squeue -t PD", f"job {p['job_id']} priority", p["priority"]) for p in ahead[:3])
    )
    return out


_DEP = re.compile(r"(?P<type>after\w*|singleton):?(?P<job>\d+)?(?:[+:]\d+)?\((?P<status>\w+)\)")


def _job_states(commands: SlurmCommands, ids: list[str]) -> dict[str, dict[str, str]]:
    """Name, state and reason of other jobs: the queue first, then accounting."""
    states: dict[str, dict[str, str]] = {}
    if not ids:
        return states
    try:
        text = commands.run(
            ["squeue", "-h", "--states=all", "-j", ",".join(ids), "-o", "%i|%T|%r|%j"]
        )
    except SlurmCommandError:
        text = ""
    for row in parse_parsable(text, ("id", "state", "reason", "name")):
        states[row["id"]] = row
    missing = [i for i in ids if i not in states]
    if missing:
        text = commands.run(
            ["sacct", "-P", "-n", "-X", "-j", ",".join(missing), "-o", "JobID,State,Reason,JobName"]
        )
        for row in parse_parsable(text, ("id", "state", "reason", "name")):
            states[row["id"]] = row
    return states


def dependency(snap: Snapshot, commands: SlurmCommands, never: bool = False) -> Explanation:
    """Waiting for (or never to be freed by) the jobs it depends on."""
    expression = snap.get("Dependency")
    deps = [m.groupdict() for m in _DEP.finditer(expression)]
    states = _job_states(commands, [d["job"] for d in deps if d["job"]])
    words = {
        "afterok": "to finish successfully",
        "afterany": "to end",
        "afternotok": "to fail",
        "after": "to start",
        "aftercorr": "(each task) to succeed",
        "singleton": "(earlier jobs of the same name and user) to end",
    }
    parts = []
    for d in deps:
        other = states.get(d["job"] or "", {})
        state = other.get("state", "").split()[0] if other.get("state") else "unknown"
        parts.append(
            f"job {d['job']} {words.get(d['type'], d['type'])} ({d['type']}); "
            f"job {d['job']} is {state}"
        )
    detail = "; ".join(parts) or f"its dependency {expression}"
    if never:
        verdict = (
            f"Job {snap.job_id} will never start as it stands: it waits for {detail}, "
            f"so the dependency can no longer be satisfied."
        )
    else:
        verdict = f"Job {snap.job_id} waits for {detail}."
    out = Explanation(verdict)
    out.quote(snap.quote("Reason"), snap.quote("Dependency"))
    out.quote(
        *(Quoted(f"squeue/sacct -j {i}", "State", s.get("state", "")) for i, s in states.items())
    )
    return out


def begin_time(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    begin = snap.get("EligibleTime") or snap.get("StartTime")
    from wass_chat.slurm.live import slurm_time

    when = slurm_time(begin)
    out = Explanation(
        f"Job {snap.job_id} may not start before {clock(when, snap.now)}: it was "
        f"submitted with a begin time (--begin)."
    )
    out.quote(snap.quote("Reason"), snap.quote("EligibleTime"))
    return out


def held(snap: Snapshot, commands: SlurmCommands, admin: bool) -> Explanation:
    if admin:
        text = (
            f"Job {snap.job_id} is held by an administrator and will not start until an "
            f"administrator releases it (scontrol release {snap.job_id})."
        )
    else:
        text = (
            f"Job {snap.job_id} is held by its owner and will not start until released "
            f"(scontrol release {snap.job_id})."
        )
    out = Explanation(text)
    out.quote(snap.quote("Reason"), snap.quote("Priority"))
    return out


def _node_limit(asked: str, part: dict[str, str]) -> str:
    """Why a node count does not fit: more nodes than the partition has, or its per-job limits.

    ``asked`` is scontrol's ``NumNodes`` (``3`` or ``3-3``); the partition record gives
    ``TotalNodes``, ``MinNodes`` and ``MaxNodes``."""
    low = int(asked.split("-")[0]) if asked.split("-")[0].isdigit() else 0
    total = int(part.get("TotalNodes") or 0) or len(expand(part.get("Nodes", "")))
    nodes = f"{low} node" + ("" if low == 1 else "s") if low else f"{asked} nodes"
    if total and low > total:
        return f"it asks for {nodes} and the partition has {total} ({part.get('Nodes', '')})."
    most, least = part.get("MaxNodes", "UNLIMITED"), part.get("MinNodes", "0")
    if most.isdigit() and low > int(most):
        return f"it asks for {nodes} and the partition allows at most {most} per job (MaxNodes)."
    if least.isdigit() and low < int(least):
        return f"it asks for {nodes} and the partition needs at least {least} per job (MinNodes)."
    return (
        f"it asks for {nodes}; the partition allows {least} to {most} per job (MinNodes/MaxNodes)."
    )


def out_of_service(snap: Snapshot, part: dict[str, str], out: Explanation) -> str:
    """`` Only 3 of its 4 nodes take jobs now: n3 is drained: "disk swap" (set by root at
    01:01).``: the partition's drained and down nodes with the admin's reason (quoted), or ''."""
    listed = part.get("Nodes", "")
    members = snap.nodes if listed == "ALL" else [snap.node(n) for n in expand(listed)]
    facts = [node_facts(m, [], snap.now) for m in members if m]
    down = [n for n in facts if not n["takes_jobs"]]
    if not down:
        return ""
    for n in down:
        out.quote(Quoted("scontrol show nodes", f"{n['name']} State", n["state"]))
        if raw := snap.node(n["name"]).get("Reason", ""):  # with its [who@when] stamp
            out.quote(Quoted("scontrol show nodes", f"{n['name']} Reason", raw))
    usable = len(facts) - len(down)
    out.figures.update(usable_nodes=usable, partition_nodes=len(facts))
    which = "; ".join(f"{n['name']} is {n['condition']}{reason_words(n)}" for n in down)
    take = "takes" if usable == 1 else "take"
    return f" Only {usable} of its {len(facts)} nodes {take} jobs now: {which}."


def partition_limit(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    """A request the partition can never satisfy: time, node count, CPUs or memory."""
    code, part = snap.reason, snap.partition_record()
    name = snap.partition
    out = Explanation("")
    out.quote(snap.quote("Reason"), snap.quote("Partition"))
    if code == "PartitionTimeLimit":
        asked, allowed = slurm_duration(snap.get("TimeLimit")), slurm_duration(part.get("MaxTime"))
        out.verdict = (
            f"Job {snap.job_id} cannot start in partition {name}: it asks for "
            f"{minutes(asked)} and the partition allows at most {minutes(allowed)} "
            f"(MaxTime)."
        )
        out.quote(
            snap.quote("TimeLimit"),
            Quoted("scontrol show partitions", f"{name} MaxTime", part.get("MaxTime", "")),
        )
    elif code == "PartitionNodeLimit":
        out.verdict = f"Job {snap.job_id} cannot start in partition {name}: " + _node_limit(
            snap.num_nodes, part
        )
        out.quote(
            snap.quote("NumNodes"),
            Quoted("scontrol show partitions", f"{name} MaxNodes", part.get("MaxNodes", "")),
            Quoted("scontrol show partitions", f"{name} TotalNodes", part.get("TotalNodes", "")),
        )
        out.verdict += out_of_service(snap, part, out)
    else:
        total = int(part.get("TotalCPUs") or 0)
        largest = max(
            (int(snap.node(n).get("CPUTot") or 0) for n in expand(part.get("Nodes", ""))), default=0
        )
        if total and snap.cpus > total:
            what = f"it asks for {_cpus(snap.cpus)} and the partition has {total} in all"
        elif largest and snap.num_nodes == "1" and snap.cpus > largest:
            what = f"it asks for {_cpus(snap.cpus)} on one node and the largest has {largest}"
        else:
            what = f"its request ({snap.get('TRES')}) exceeds what the partition offers or allows"
        out.verdict = f"Job {snap.job_id} can never start in partition {name} as submitted: {what}."
        out.quote(
            snap.quote("NumCPUs"),
            snap.quote("TRES"),
            Quoted("scontrol show partitions", f"{name} TotalCPUs", part.get("TotalCPUs", "")),
        )
    return out


def reservation(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    name = snap.get("Reservation")
    record = next((r for r in snap.reservations if r.get("ReservationName") == name), {})
    from wass_chat.slurm.live import slurm_time

    start = slurm_time(record.get("StartTime"))
    when = (
        f", which starts at {clock(start, snap.now)} on {record.get('Nodes', '?')}"
        if start and start > snap.now
        else ""
    )
    out = Explanation(
        f"Job {snap.job_id} runs in reservation {name}{when}; it waits for the reservation."
    )
    out.quote(snap.quote("Reason"), snap.quote("Reservation"))
    if record:
        out.quote(
            Quoted("scontrol show reservations", f"{name} StartTime", record.get("StartTime", ""))
        )
    return out


def generic(snap: Snapshot, commands: SlurmCommands, entry: Reason) -> Explanation:
    """A code without an explainer of its own: the catalogue's meaning and outcome, quoted
    with Slurm's fields; an unknown code is quoted raw, never guessed at."""
    if entry.klass == "unknown":
        text = (
            f"Job {snap.job_id} is {snap.state.lower()} with reason {snap.reason!r}, a code "
            f"wass-chat does not explain yet; the evidence below is what Slurm reports."
        )
    else:
        lead = {
            "never": "can never start as requested",
            "release": "is held",
            "admin": "waits for an administrator",
        }.get(entry.outcome, "waits")
        text = f"Job {snap.job_id} {lead}: {entry.meaning} ({snap.reason})."
    out = Explanation(text)
    out.quote(snap.quote("Reason"), snap.quote("JobState"), snap.quote("TRES"))
    if entry.advice:
        out.advice.append(Advice(entry.advice, None, None, "from Slurm's documentation"))
    return out


EXPLAINERS: dict[str, Callable[[Snapshot, SlurmCommands], Explanation]] = {
    "resources": resources,
    "priority": priority,
    "dependency": dependency,
    "dependency_never": lambda s, c: dependency(s, c, never=True),
    "begin_time": begin_time,
    "held_user": lambda s, c: held(s, c, admin=False),
    "held_admin": lambda s, c: held(s, c, admin=True),
    "launch_failure": lambda s, c: held(s, c, admin=True),
    "partition_limit": partition_limit,
    "node_unavailable": node_unavailable,
    "reservation": reservation,
    "qos_limit": lambda s, c: limit(s, c, classify(s.reason)),
    "assoc_limit": lambda s, c: limit(s, c, classify(s.reason)),
    "partition_state": partition_state,
    "not_allowed": not_allowed,
    "reservation_deleted": reservation_deleted,
    "array_limit": array_limit,
    "licenses": licenses,
    "constraints": constraints,
}
"""Pending reason class -> explainer; classes without one use :func:`generic`."""
