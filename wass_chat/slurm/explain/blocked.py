"""Jobs blocked by a setting rather than by load: a partition that is DOWN or INACTIVE, a QOS or
account the partition does not allow, a deleted reservation, an array's throttle, nodes that take
no jobs (drained, down, reserved).

Each explainer quotes the setting as Slurm prints it (``scontrol show partition``'s State,
AllowQos, DenyAccounts...; the job's ArrayTaskThrottle) and names what would let the job run.
"""

from __future__ import annotations

import re

from wass_chat.slurm.advice import Advice
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands
from wass_chat.slurm.explain.model import Explanation
from wass_chat.slurm.explain.nodes import UNAVAILABLE, condition
from wass_chat.slurm.explain.phrases import names
from wass_chat.slurm.formats import is_set
from wass_chat.slurm.hostlist import expand
from wass_chat.slurm.live import Quoted, Snapshot
from wass_chat.slurm.nodes import state_flags
from wass_chat.slurm.reasons import classify


def _open_partitions(snap: Snapshot, but: str) -> list[str]:
    return [
        p.get("PartitionName", "")
        for p in snap.partitions
        if p.get("State") == "UP" and p.get("PartitionName") != but
    ]


def partition_state(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    """PartitionDown / PartitionInactive: the partition's own State, and where else it could go."""
    part = snap.partition_record()
    state = part.get("State", "?")
    others = _open_partitions(snap, snap.partition)
    word = (
        "DOWN (it holds jobs but starts none)"
        if state == "DOWN"
        else (f"{state} (it neither takes nor starts jobs)")
    )
    verdict = (
        f"Job {snap.job_id} waits for an administrator: its partition {snap.partition} "
        f"is {word} ({snap.reason}); nothing in the job itself is wrong."
    )
    out = Explanation(verdict)
    out.quote(
        snap.quote("Reason"),
        snap.quote("Partition"),
        Quoted("scontrol show partitions", f"{snap.partition} State", state),
    )
    if others:
        out.advice.append(
            Advice(
                f"move it to partition {others[0]}: scontrol update JobId={snap.job_id} "
                f"Partition={others[0]}",
                None,
                None,
                f"UP partitions: {names(others)}",
            )
        )
    return out


def not_allowed(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    """QOSNotAllowed / AccountNotAllowed: the partition's Allow/Deny lists against the job's."""
    part = snap.partition_record()
    qos = classify(snap.reason).code.startswith(("QOS", "Job's QOS"))
    what, mine = ("QOS", snap.get("QOS")) if qos else ("account", snap.get("Account"))
    allow_key, deny_key = ("AllowQos", "DenyQos") if qos else ("AllowAccounts", "DenyAccounts")
    allow, deny = part.get(allow_key, ""), part.get(deny_key, "")
    if is_set(deny) and mine in deny.split(","):
        why = f"partition {snap.partition} denies it ({deny_key}={deny})"
    elif is_set(allow) and allow != "ALL" and mine not in allow.split(","):
        why = f"partition {snap.partition} allows only {allow} ({allow_key})"
    else:
        why = f"its association may not use that {what} (sacctmgr show assoc user={snap.user})"
    verdict = (
        f"Job {snap.job_id} can never start as requested: its {what} {mine} is not "
        f"allowed: {why} ({'QOSNotAllowed' if qos else 'AccountNotAllowed'})."
    )
    out = Explanation(verdict)
    out.quote(
        snap.quote("Reason"), snap.quote("QOS" if qos else "Account"), snap.quote("Partition")
    )
    for key in (allow_key, deny_key):
        if is_set(part.get(key)):
            out.quote(Quoted("scontrol show partitions", f"{snap.partition} {key}", part[key]))
    if is_set(allow) and allow != "ALL":
        option = "QOS" if qos else "Account"
        choice = allow.split(",")[0]
        out.advice.append(
            Advice(
                f"use {what} {choice}: scontrol update JobId={snap.job_id} {option}={choice}",
                None,
                None,
                f"{allow_key}={allow}",
            )
        )
    out.expected_start_note = "none: it cannot start as it stands"
    return out


def reservation_deleted(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    """ReservationDeleted: the reservation it asked for is gone, and Slurm held the job."""
    named = re.search(r"Reservation (\S+) was deleted", snap.reason)
    name = named.group(1) if named else "it asked for"
    verdict = (
        f"Job {snap.job_id} is held: reservation {name} was deleted (or ended), so "
        f"Slurm held it; it starts only once released (ReservationDeleted)."
    )
    out = Explanation(verdict)
    out.quote(snap.quote("Reason"), snap.quote("JobState"), snap.quote("Priority"))
    out.advice.append(
        Advice(
            f"release it without the reservation: scontrol update JobId={snap.job_id} "
            f"Reservation= ; scontrol release {snap.job_id}",
            None,
            None,
            "a held job never starts by itself",
        )
    )
    out.expected_start_note = "none: it is held until released"
    return out


def array_limit(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    """JobArrayTaskLimit: the array's throttle (``%N``) and how many of its tasks run."""
    array = snap.get("ArrayJobId") or snap.job_id.split("_")[0]
    throttle = snap.get("ArrayTaskThrottle")
    try:
        text = commands.run(["squeue", "-h", "-r", "-t", "R", "-j", array, "-o", "%i|%e"])
    except SlurmCommandError:
        text = ""
    running = [line.split("|")[0] for line in text.splitlines() if line.strip()]
    shown = names(running[:4]) + (" and others" if len(running) > 4 else "")
    verdict = (
        f"Job {snap.job_id} waits for its own array: array {array} may run "
        f"{throttle or 'a limited number of'} task{'s' if throttle != '1' else ''} at "
        f"once (ArrayTaskThrottle={throttle or '?'}) and {len(running)} "
        f"{'runs' if len(running) == 1 else 'run'} now ({shown or 'none'}) "
        f"(JobArrayTaskLimit)."
    )
    out = Explanation(verdict)
    out.quote(snap.quote("Reason"), snap.quote("ArrayTaskThrottle"), snap.quote("ArrayJobId"))
    out.quote(*(Quoted(f"squeue -r -t R -j {array}", "running task", t) for t in running[:4]))
    if throttle.isdigit():
        out.advice.append(
            Advice(
                f"let more tasks run at once: scontrol update JobId={array} "
                f"ArrayTaskThrottle={int(throttle) + 1}",
                None,
                None,
                "the next task starts when a running one ends otherwise",
            )
        )
    return out


def node_unavailable(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    """A node it asked for (or needs) is drained, down or reserved.

    Slurm 22.05 names the nodes (``ReqNodeNotAvail, UnavailableNodes:n1``); 24.11 and 26.05 say
    ``ReqNodeNotAvail, May be reserved for other job`` for a requested node that is drained, and
    the long "Nodes required for job are DOWN, DRAINED..." names none. Then the nodes are the
    job's own request (``ReqNodeList``) or, without one, its partition's, and each node's state
    says which of them take no jobs."""
    named = re.search(r"UnavailableNodes:(\S+)", snap.reason)
    requested = expand(snap.get("ReqNodeList"))
    if named:
        candidates = expand(named.group(1))
    else:
        candidates = requested or expand(snap.partition_record().get("Nodes", ""))
    unavailable = [n for n in candidates if _flags(snap, n) & UNAVAILABLE]
    out = Explanation("")
    out.quote(snap.quote("Reason"), snap.quote("ReqNodeList"))
    shown = unavailable or (candidates if requested or named else [])
    parts = []
    for name in shown[:4]:
        node = snap.node(name)
        state, reason = node.get("State", "UNKNOWN"), node.get("Reason", "")
        word = condition(_flags(snap, name)) if node else "unknown to Slurm"
        why = f' ("{reason.split(" [")[0]}")' if is_set(reason) else ""
        parts.append(f"{name}, which is {word}{why}")
        out.quote(Quoted("scontrol show nodes", f"{name} State", state))
        if is_set(reason):
            out.quote(Quoted("scontrol show nodes", f"{name} Reason", reason))
    listed = names(parts) + (f" and {len(shown) - 4} more" if len(shown) > 4 else "")
    node_s = "node" + ("s" if len(shown) > 1 else "")
    jid = snap.job_id
    if requested or named:
        ask = "asks for" if requested else "needs"
        out.verdict = (
            f"Job {jid} {ask} {node_s} {listed}."
            if unavailable
            else (
                f"Job {jid} asks for {node_s} {listed}; none is drained or down, so Slurm keeps "
                f"{'them' if len(shown) > 1 else 'it'} for another job (a higher-priority job or a "
                f"reservation)."
            )
        )
        return out
    low = snap.num_nodes.split("-")[0]
    needed = int(low) if low.isdigit() else 1
    taking, total = len(candidates) - len(unavailable), len(candidates)
    take = "takes" if taking == 1 else "take"
    need = (
        f"Job {jid} needs {needed} node{'s' if needed != 1 else ''} of partition {snap.partition}"
    )
    held = "Slurm holds the free ones for jobs of higher-priority partitions or reservations"
    if unavailable and needed > taking:
        out.verdict = f"{need} and only {taking} of its {total} {take} jobs; unavailable: {listed}."
    elif unavailable:
        out.verdict = f"{need}; {taking} of its {total} {take} jobs (not {listed}), and {held}."
    else:
        out.verdict = f"{need}; none of its {total} is drained or down, and {held}."
    return out


def _flags(snap: Snapshot, name: str) -> set[str]:
    return state_flags(snap.node(name).get("State", ""))
