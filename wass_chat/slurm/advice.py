"""What would make a job start sooner, each change checked by Slurm itself.

A piece of advice is a change to the job's request (fewer CPUs, a shorter ``--time``, another
partition, no node list...). :func:`check` asks ``sbatch --test-only`` with the changed request:
Slurm answers when such a job would start, on which nodes, or why it would be refused, without
creating a job. Advice counts as helping only when that start is earlier than the job's own
expected start (``squeue --start``), or when the job has none (it cannot start as it stands).
A resubmission queues behind the jobs already waiting, and the comparison includes that.

The request is rebuilt from ``scontrol show job`` (tasks, CPUs per task, time limit, memory,
features, node lists, licences, GRES, reservation) and the submit line's node count, and
passed as argument values only, never through a shell.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.formats import (
    clock,
    is_set,
    memory_mb,
    set_or_empty,
    slurm_duration,
    slurm_time,
)
from wass_chat.slurm.job_files import option
from wass_chat.slurm.live import Snapshot

# 22.05 and 24.11: "to start at T using 1 processors on nodes n1 in partition debug"; Debian's
# 26.05 prints "to start at T a using ..." (its format string is "%s%s%s a using").
_TEST_ONLY = re.compile(
    r"to start at (?P<start>\S+)(?: a)? using (?P<cpus>\d+) processors on"
    r" nodes (?P<nodes>\S+)(?: in partition (?P<partition>\S+))?"
)


UNFORESEEABLE = timedelta(days=300)
"""A ``--test-only`` start further off than this is no estimate: Slurm plans a job without a
time limit to end a year after it starts (``2538-04-12`` was seen), so a start behind one is
unknown rather than late. The answer says only that (which job has no limit is not known
here: the blocking job may well have one, and a pending one ahead of it none)."""


@dataclass(frozen=True)
class JobRequest:
    """The resources a job asks for, as sbatch would be told them."""

    partition: str = ""
    ntasks: int = 1
    cpus_per_task: int = 1
    nodes: str = ""
    time_min: int | None = None
    mem: str = ""
    mem_per_cpu: str = ""
    nodelist: str = ""
    exclude: str = ""
    constraint: str = ""
    licenses: str = ""
    gres: str = ""
    reservation: str = ""

    @property
    def cpus(self) -> int:
        return self.ntasks * self.cpus_per_task

    def argv(self) -> list[str]:
        """``sbatch --test-only`` arguments for this request."""
        args = ["sbatch", "--test-only", f"--ntasks={self.ntasks}"]
        if self.cpus_per_task > 1:
            args.append(f"--cpus-per-task={self.cpus_per_task}")
        options = {
            "partition": self.partition,
            "nodes": self.nodes,
            "mem": self.mem,
            "mem-per-cpu": self.mem_per_cpu,
            "nodelist": self.nodelist,
            "exclude": self.exclude,
            "constraint": self.constraint,
            "licenses": self.licenses,
            "gres": self.gres,
            "reservation": self.reservation,
        }
        args += [f"--{k}={v}" for k, v in options.items() if v]
        if self.time_min is not None:
            args.append(f"--time={self.time_min}")
        return [*args, "--output=/dev/null", "--wrap=true"]


def request_of(snap: Snapshot, submit_line: str = "") -> JobRequest:
    """The request of the job in ``snap`` (its node count from the submit line when given)."""
    job = snap.job
    ntasks = int(job.get("NumTasks") or 0) if (job.get("NumTasks") or "").isdigit() else 0
    per_task = job.get("CPUs/Task", "1")
    cpt = int(per_task) if per_task.isdigit() else 1
    time_s = slurm_duration(job.get("TimeLimit"))
    mem_node, mem_cpu = job.get("MinMemoryNode", ""), job.get("MinMemoryCPU", "")
    gres = (job.get("TresPerNode") or "").removeprefix("gres:").replace("gres/", "")
    return JobRequest(
        partition=snap.partition,
        ntasks=ntasks or max(1, snap.cpus // cpt),
        cpus_per_task=cpt,
        nodes=option(submit_line, "-N", "--nodes"),
        time_min=None if time_s is None else max(1, math.ceil(time_s / 60)),
        mem=mem_node if (memory_mb(mem_node) or 0) > 0 else "",
        mem_per_cpu=mem_cpu if (memory_mb(mem_cpu) or 0) > 0 else "",
        nodelist=set_or_empty(job.get("ReqNodeList")),
        exclude=set_or_empty(job.get("ExcNodeList")),
        constraint=set_or_empty(job.get("Features")),
        licenses=set_or_empty(job.get("Licenses")),
        gres=gres if is_set(gres) else "",
        reservation=set_or_empty(job.get("Reservation")),
    )


@dataclass(frozen=True)
class Check:
    """What ``sbatch --test-only`` said of one request."""

    argv: tuple[str, ...]
    start: datetime | None
    nodes: str
    refusal: str

    @property
    def command(self) -> str:
        return shlex.join(self.argv)


@dataclass(frozen=True)
class Advice:
    """One change to the request, and what Slurm said about it."""

    text: str
    check: Check | None
    helps: bool | None
    """True: Slurm would start it earlier (or at all); False: not sooner; None: not checkable."""
    outcome: str
    start: datetime | None = None
    """When the changed job would start, by ``start_source`` (None: not known)."""
    start_source: str = ""
    """``queue model`` (our replay of the whole queue, :mod:`wass_chat.slurm.queue_advice`),
    or '' (no start: ``--test-only``'s own answer is in ``check``)."""


def check(commands: SlurmCommands, request: JobRequest) -> Check:
    """Ask ``sbatch --test-only`` when ``request`` would start (creates no job)."""
    argv = request.argv()
    done = commands.completed(argv)
    text = " ".join(f"{done.stdout} {done.stderr}".split())
    match = _TEST_ONLY.search(text)
    if done.returncode == 0 and match:
        return Check(tuple(argv), slurm_time(match.group("start")), match.group("nodes"), "")
    refusal = re.sub(r"^(sbatch: error: )+", "", text).removeprefix("allocation failure: ")
    return Check(tuple(argv), None, "", refusal or f"exit {done.returncode}")


def judge(
    text: str, result: Check, baseline: datetime | None, now: datetime, same_start_ok: bool = False
) -> Advice:
    """Advice whose outcome compares the changed request's start with ``baseline``."""
    if result.start is None:
        return Advice(text, result, False, f"Slurm would refuse it too: {result.refusal}")
    if result.start - now > UNFORESEEABLE:
        outcome = (
            f"Slurm would accept it (on {result.nodes}) but gives no start time it can "
            f"foresee: its plan puts the start more than {UNFORESEEABLE.days} days away"
        )
        return Advice(text, result, True if baseline is None else None, outcome)
    starts = "now" if result.start <= now else f"at about {clock(result.start, now)}"
    # --test-only checks this one request against the running jobs; the pending jobs that
    # outrank it are not in its answer (issue #41: "would start at 00:22" was placed at 01:23)
    said = (
        f"Slurm would accept it; sbatch --test-only says it would start {starts} on {result.nodes}"
    )
    alone = "(its check of this one request, not a replay of the queue)"
    if baseline is None:
        return Advice(text, result, True, f"{said} {alone}")
    if result.start < baseline or (same_start_ok and result.start <= baseline):
        return Advice(
            text, result, True, f"{said}, instead of about {clock(baseline, now)} {alone}"
        )
    return Advice(
        text,
        result,
        False,
        f"{said}, not before its current estimate of {clock(baseline, now)} {alone}",
    )


def cpus(count: int) -> str:
    """``1 CPU``, ``8 CPUs``."""
    return f"{count} CPU" + ("" if count == 1 else "s")


def free_cpus(snap: Snapshot, partition: str) -> dict[str, int]:
    """Idle CPUs per usable node of ``partition`` (drained, down and failing nodes excluded)."""
    names = _partition_nodes(snap, partition)
    free = {}
    for node in snap.nodes:
        name = node.get("NodeName", "")
        state = node.get("State", "").upper()
        if name not in names or any(s in state for s in ("DRAIN", "DOWN", "FAIL", "RESERVED")):
            continue
        total, used = node.get("CPUTot", "0"), node.get("CPUAlloc", "0")
        free[name] = max(0, int(total or 0) - int(used or 0))
    return free


def _partition_nodes(snap: Snapshot, partition: str) -> set[str]:
    from wass_chat.slurm.hostlist import expand

    record = snap.partition_record(partition)
    return set(expand(record.get("Nodes", ""))) if record else set()


def candidates(snap: Snapshot, request: JobRequest, klass: str) -> list[tuple[str, JobRequest]]:
    """Changes worth checking for a job held back by reason class ``klass``."""
    found: list[tuple[str, JobRequest]] = []
    part = snap.partition_record()
    if klass in {"resources", "priority"}:
        free = free_cpus(snap, request.partition)
        single = request.nodes in {"1", "1-1"}
        fits = max(free.values(), default=0) if single else sum(free.values())
        fewer = fits // request.cpus_per_task
        if 0 < fewer < request.ntasks:
            found.append(
                (
                    f"ask for {cpus(fewer * request.cpus_per_task)} instead of "
                    f"{request.cpus} (--ntasks={fewer})",
                    replace(request, ntasks=fewer),
                )
            )
        if request.time_min and request.time_min > 1:
            shorter = max(1, request.time_min // 4)
            found.append(
                (
                    f"ask for --time={shorter} (minutes) instead of {request.time_min}",
                    replace(request, time_min=shorter),
                )
            )
    if klass == "partition_limit" and part:
        max_time = slurm_duration(part.get("MaxTime"))
        if max_time is not None and request.time_min and request.time_min * 60 > max_time:
            minutes = max(1, int(max_time // 60))
            found.append(
                (
                    f"ask for --time={minutes} (the partition's MaxTime)",
                    replace(request, time_min=minutes),
                )
            )
        max_nodes = part.get("MaxNodes", "UNLIMITED")
        has = len(_partition_nodes(snap, request.partition))
        usable = len(free_cpus(snap, request.partition))
        within = not max_nodes.isdigit() or usable <= int(max_nodes)
        if 0 < usable < has and within and request.nodes and _low(request.nodes) > usable:
            # --test-only refuses even --nodes=<all it has> while one is drained: offer the
            # nodes that take jobs now, not a count sbatch cannot place
            found.append(
                (
                    f"ask for --nodes={usable} (the partition's nodes that take jobs now)",
                    replace(request, nodes=str(usable)),
                )
            )
        elif max_nodes.isdigit() and request.nodes and _low(request.nodes) > int(max_nodes):
            found.append(
                (
                    f"ask for --nodes={max_nodes} (the partition's MaxNodes)",
                    replace(request, nodes=max_nodes),
                )
            )
        elif has and request.nodes and _low(request.nodes) > has:
            found.append(
                (
                    f"ask for --nodes={has} (all the partition has)",
                    replace(request, nodes=str(has)),
                )
            )
        usable = sum(
            int(snap.node(n).get("CPUTot") or 0) for n in free_cpus(snap, request.partition)
        )
        largest = max(
            (int(snap.node(n).get("CPUTot") or 0) for n in free_cpus(snap, request.partition)),
            default=0,
        )
        one_node = request.nodes in {"1", "1-1"}  # without it, tasks may spread over nodes
        for count, words in (
            (usable, "all the partition's usable ones"),
            *([(largest, "its largest node's")] if one_node else []),
        ):
            fewer = count // request.cpus_per_task
            if fewer > 0 and fewer * request.cpus_per_task < request.cpus:
                found.append(
                    (
                        f"ask for {cpus(fewer * request.cpus_per_task)}, {words}, "
                        f"instead of {request.cpus}",
                        replace(request, ntasks=fewer, nodes=""),
                    )
                )
            if usable == largest:
                break
    if klass == "node_unavailable" and request.nodelist:
        found.append(
            (
                f"drop the node request (--nodelist={request.nodelist})",
                replace(request, nodelist=""),
            )
        )
    if klass == "reservation" and request.reservation:
        found.append(
            (f"run outside reservation {request.reservation}", replace(request, reservation=""))
        )
    if klass in {"resources", "priority", "partition_limit", "node_unavailable"}:
        for other in snap.partitions:
            name = other.get("PartitionName", "")
            if name and name != request.partition and other.get("State", "UP") == "UP":
                found.append(
                    (
                        f"submit to partition {name} instead of {request.partition}",
                        replace(request, partition=name, nodelist=""),
                    )
                )
    return found


def _low(count: str) -> int:
    head = count.split("-")[0]
    return int(head) if head.isdigit() else 0


def test_only_said(start: datetime, now: datetime) -> str:
    """When ``sbatch --test-only`` says a request would start, as an answer words it: its
    start past :data:`UNFORESEEABLE` is Slurm's "not within its plan" (a date centuries away
    when a job without a time limit is ahead), never printed as a date."""
    if start - now > UNFORESEEABLE:
        return f"no start it can foresee (more than {UNFORESEEABLE.days} days away)"
    return "now" if start <= now else f"at about {clock(start, now)}"
