"""Jobs blocked by a setting rather than by load: a partition that is DOWN or INACTIVE, a QOS or
account the partition does not allow, a deleted reservation, an array's throttle.

Each explainer quotes the setting as Slurm prints it (``scontrol show partition``'s State,
AllowQos, DenyAccounts...; the job's ArrayTaskThrottle) and names what would let the job run.
"""

from __future__ import annotations

import re

from wass_chat.slurm.advice import Advice
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands
from wass_chat.slurm.explain.model import Explanation
from wass_chat.slurm.explain.phrases import names
from wass_chat.slurm.formats import is_set
from wass_chat.slurm.live import Quoted, Snapshot
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
