"""A submission Slurm refused: it never started, so it has no exit status to explain.

sbatch refuses a request no node of the partition can hold (``--mem=64G`` where the largest
node has 8000 MB: "Requested node configuration is not available"). Slurm 22.05 still
records it: sacct shows ``State=FAILED``, ``ExitCode=1:0``, ``Elapsed=00:00:00``,
``NodeList=None assigned``, and scontrol (while it holds the record) ``Reason=BadConstraints``
with ``ExitCode=0:1``. Read as a failed job, that is "its script exited with status 1" or
"killed by signal 1", both wrong: no script ran. :func:`refused_at_submit` tells such a
record apart, and :func:`refusal` says so and why, naming the partition's largest node.
"""

from __future__ import annotations

from wass_chat.slurm.advice import Advice, JobRequest, free_cpus
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.explain.model import Explanation
from wass_chat.slurm.explain.pending import out_of_service
from wass_chat.slurm.formats import memory_mb, slurm_duration
from wass_chat.slurm.hostlist import expand
from wass_chat.slurm.live import Quoted, Snapshot
from wass_chat.slurm.queue_advice import judge_newcomer, queue_or_none

REFUSED_CLASS = "refused"
"""The reason class of a job :func:`refused_at_submit` (in place of ``failed``)."""
REFUSED_MEANING = (
    "here, a submission Slurm refused: the job never started and no script ran "
    "(accounting records such a refusal as FAILED)"
)


def never_started(snap: Snapshot) -> bool:
    """Whether an ended job ended before it ever ran (cancelled while pending or held): Slurm
    stamps its StartTime with its end, but it had no node (scontrol ``NodeList=(null)``, sacct
    ``None assigned``) and sacct's Start is ``None``."""
    nodes = snap.get("NodeList")
    return not nodes or nodes == "None assigned" or snap.accounting.get("Start") == "None"


def refused_at_submit(snap: Snapshot) -> bool:
    """A FAILED job that never had a node, ran 0 s and has no step: refused at submission."""
    elapsed = slurm_duration(snap.get("RunTime")) or slurm_duration(snap.accounting.get("Elapsed"))
    return snap.state == "FAILED" and never_started(snap) and not elapsed and not snap.steps


def _members(snap: Snapshot) -> list[dict[str, str]]:
    """The node records of the job's partition (every node for ``Nodes=ALL`` or none known)."""
    listed = snap.partition_record().get("Nodes", "")
    if not listed or listed == "ALL":
        return list(snap.nodes)
    return [snap.node(n) for n in expand(listed) if snap.node(n)]


def _memory_asked(snap: Snapshot) -> tuple[str, float]:
    """The per-node memory asked for, in words and in MB ('' and 0 if none): scontrol's
    MinMemoryNode, else sacct's ReqMem, which is the whole job's since 21.08 (``10000M`` for
    ``-N5`` at 2000M a node, seen on 24.11), so divided by its node count."""
    text = snap.job.get("MinMemoryNode", "")
    if (mb := memory_mb(text) or 0.0) > 0:
        return text, mb
    text = snap.accounting.get("ReqMem", "")
    mb = memory_mb(text) or 0.0
    if mb <= 0 or text.lower().endswith("c"):  # 21.08 and older: 4000Mc is per CPU
        return "", 0.0
    nodes = max(_low(snap.num_nodes), 1)
    return (text if nodes == 1 else f"{mb / nodes:.0f} MB (ReqMem {text} over {nodes} nodes)"), (
        mb / nodes
    )


def _low(count: str) -> int:
    """``5`` of ``5`` or ``5-5``; 0 when not a count."""
    head = count.split("-")[0]
    return int(head) if head.isdigit() else 0


def refusal(snap: Snapshot) -> Explanation:
    """Why Slurm refused the job: the request beside what the partition's nodes have."""
    jid, part = snap.job_id, snap.partition or "its partition"
    members = _members(snap)
    out = Explanation("")
    out.quote(snap.quote("JobState"), snap.quote("NodeList"), snap.quote("ExitCode"))
    out.quote(Quoted(f"sacct -j {jid}", "Elapsed", snap.accounting.get("Elapsed", "")))
    asked, asked_mb = _memory_asked(snap)
    biggest = max(
        members, key=lambda n: memory_mb(n.get("RealMemory", "") + "M") or 0.0, default={}
    )
    largest_mb = memory_mb(biggest.get("RealMemory", "") + "M") or 0.0
    cpus_total = sum(int(n.get("CPUTot") or 0) for n in members)
    fits_nowhere, down = True, ""
    if asked_mb and largest_mb and asked_mb > largest_mb:
        name = biggest.get("NodeName", "?")
        why = (
            f"it asked for {asked} of memory per node (--mem) and the largest node of "
            f"partition {part}, {name}, has {largest_mb:.0f} MB (RealMemory)"
        )
        out.quote(
            Quoted(f"sacct -j {jid}", "ReqMem", snap.accounting.get("ReqMem", "")),
            Quoted("scontrol show nodes", f"{name} RealMemory", biggest.get("RealMemory", "")),
        )
        out.figures.update(asked_memory_mb=asked_mb, largest_node_memory_mb=largest_mb)
    elif members and _low(snap.num_nodes) > len(members):
        why = f"it asked for {snap.num_nodes} nodes and partition {part} has {len(members)}"
        out.quote(snap.quote("NumNodes"))
        out.figures.update(partition_nodes=len(members))
        down = out_of_service(snap, snap.partition_record(), out)
    elif cpus_total and snap.cpus > cpus_total:
        why = f"it asked for {snap.cpus} CPUs and partition {part} has {cpus_total} in all"
        out.quote(snap.quote("NumCPUs"))
        out.figures.update(partition_cpus=cpus_total)
    else:
        fits_nowhere = False
        reason = snap.job.get("Reason", "")
        if reason and reason != "None":
            why = f"scontrol gives the reason {reason}"
            out.quote(snap.quote("Reason"))
        else:
            why = "of something neither scontrol nor sacct still records"
    sbatch = (
        ' (sbatch says "Requested node configuration is not available")' if fits_nowhere else ""
    )
    out.verdict = (
        f"Job {jid} never started: Slurm refused it at submission{sbatch}, because {why}."
        f"{down} Accounting records the refusal as FAILED, but no script ran, so its exit "
        "code says nothing about a script. Change the request and submit it again."
    )
    return out


def refusal_advice(commands: SlurmCommands, snap: Snapshot) -> list[Advice]:
    """The request that fits, checked with ``sbatch --test-only``: as many nodes as the
    partition has taking jobs now, or the largest node's memory."""
    usable = len(free_cpus(snap, snap.partition))
    asked_nodes = _low(snap.num_nodes)
    base = JobRequest(partition=snap.partition, ntasks=max(snap.cpus, 1))
    if 0 < usable < asked_nodes:
        request = JobRequest(
            partition=snap.partition, ntasks=max(snap.cpus, usable), nodes=str(usable)
        )
        text = f"ask for --nodes={usable} (the partition's nodes that take jobs now)"
        return [judge_newcomer(commands, snap, text, request, queue_or_none(commands, snap.now))]
    _asked, asked_mb = _memory_asked(snap)
    members = _members(snap)
    largest = max((memory_mb(n.get("RealMemory", "") + "M") or 0.0 for n in members), default=0.0)
    if asked_mb > largest > 0:
        mem = f"{largest:.0f}M"
        text = f"ask for at most --mem={mem} (the largest node's memory), if the job fits in it"
        request = JobRequest(partition=snap.partition, ntasks=base.ntasks, mem=mem)
        return [judge_newcomer(commands, snap, text, request, queue_or_none(commands, snap.now))]
    return []
