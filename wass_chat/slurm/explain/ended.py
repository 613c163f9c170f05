"""Running and finished jobs: how long they waited, who started them, how and why they ended."""

from __future__ import annotations

import signal
import statistics
from datetime import timedelta

from wass_chat.slurm.advice import cpus
from wass_chat.slurm.commands import SlurmCommands, parse_parsable
from wass_chat.slurm.explain.model import Explanation
from wass_chat.slurm.explain.refused import REFUSED_CLASS, never_started, refusal
from wass_chat.slurm.formats import clock, memory_mb, slurm_duration, slurm_time
from wass_chat.slurm.live import Quoted, Snapshot

COMPARABLE_DAYS = 7


def duration(seconds: float | None) -> str:
    """``45 s``, ``12 min 5 s``, ``3 h 20 min``, ``2 d 4 h``."""
    if seconds is None:
        return "an unknown time"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min" + (f" {s % 60} s" if s % 60 else "")
    if s < 86400:
        return f"{s // 3600} h" + (f" {s % 3600 // 60} min" if s % 3600 // 60 else "")
    return f"{s // 86400} d" + (f" {s % 86400 // 3600} h" if s % 86400 // 3600 else "")


def waited(snap: Snapshot) -> float | None:
    """Seconds from eligible to start (None while, or if ever, it has not started)."""
    if snap.state not in {"RUNNING", "SUSPENDED"} and never_started(snap):
        return None
    eligible = slurm_time(snap.get("EligibleTime")) or slurm_time(snap.get("SubmitTime"))
    start = slurm_time(snap.get("StartTime"))
    if eligible is None or start is None or start > snap.now:
        return None
    return max(0.0, (start - eligible).total_seconds())


def scheduler_of(snap: Snapshot) -> str:
    """``main`` or ``backfill``: scontrol's Scheduler field, else sacct's Sched* flags."""
    named = snap.job.get("Scheduler", "")
    if named:
        return named.lower()
    flags = snap.accounting.get("Flags", "")
    return "backfill" if "SchedBackfill" in flags else "main" if "SchedMain" in flags else ""


def _started_by(snap: Snapshot) -> str:
    who = scheduler_of(snap)
    if who == "backfill":
        # backfill also starts jobs on an idle cluster: no bigger job need have been waiting
        return "the backfill scheduler started it (where it delayed no job ahead of it)"
    return "the main scheduler started it" if who == "main" else ""


def comparable_wait(commands: SlurmCommands, snap: Snapshot) -> tuple[float | None, int]:
    """Median wait of jobs of the same partition and similar size over the last week (sacct)."""
    since = (snap.now - timedelta(days=COMPARABLE_DAYS)).strftime("%Y-%m-%dT%H:%M:%S")
    text = commands.run(
        [
            "sacct",
            "-a",
            "-X",
            "-P",
            "-n",
            "-S",
            since,
            "-r",
            snap.partition,
            "-o",
            "JobID,NCPUS,Eligible,Start",
        ]
    )
    waits = []
    for row in parse_parsable(text, ("id", "cpus", "eligible", "start")):
        eligible, start = slurm_time(row["eligible"]), slurm_time(row["start"])
        cpus = int(row["cpus"]) if row["cpus"].isdigit() else 0
        similar = snap.cpus / 2 <= cpus <= snap.cpus * 2
        if row["id"] != snap.job_id and similar and eligible and start and start <= snap.now:
            waits.append(max(0.0, (start - eligible).total_seconds()))
    return (statistics.median(waits) if waits else None), len(waits)


def running(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    start, end = slurm_time(snap.get("StartTime")), slurm_time(snap.get("EndTime"))
    wait = waited(snap)
    sentence = (
        f"Job {snap.job_id} is running on {snap.get('NodeList')} "
        f"since {clock(start, snap.now)}, after waiting {duration(wait)}"
    )
    started = _started_by(snap)
    sentence += f"; {started}" if started else ""
    if end:
        sentence += f". Its time limit ends it at about {clock(end, snap.now)}"
    out = Explanation(sentence + ".")
    out.quote(
        snap.quote("JobName"),
        snap.quote("JobState"),
        snap.quote("StartTime"),
        snap.quote("EndTime"),
        snap.quote("NodeList"),
        snap.quote("Scheduler"),
        snap.quote("TimeLimit"),
    )
    return out


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _requested_mem_mb(snap: Snapshot) -> float | None:
    text = snap.accounting.get("ReqMem", "") or snap.job.get("MinMemoryNode", "")
    return memory_mb(text)


def finished(snap: Snapshot, commands: SlurmCommands | None, klass: str) -> Explanation:
    """A job that ended: how, why, and how its wait compares with similar jobs (asked of
    sacct; without ``commands``, as from the cache, the comparison is left out)."""
    jid, state = snap.job_id, snap.state
    if klass == REFUSED_CLASS:
        return refusal(snap)
    elapsed = slurm_duration(snap.get("RunTime")) or slurm_duration(snap.accounting.get("Elapsed"))
    exit_code = snap.get("ExitCode") or "0:0"
    status, _, sig = exit_code.partition(":")
    out = Explanation("")
    out.quote(snap.quote("JobState"), snap.quote("ExitCode"), snap.quote("RunTime"))
    if klass == "completed":
        out.verdict = f"Job {jid} finished successfully after running {duration(elapsed)}."
    elif klass == "timeout":
        limit = slurm_duration(snap.get("TimeLimit"))
        out.verdict = (
            f"Job {jid} was killed at its time limit: it ran {duration(elapsed)} "
            f"and had asked for {duration(limit)} (--time)."
        )
        out.quote(snap.quote("TimeLimit"))
    elif klass == "out_of_memory":
        peak, step = snap.peak_memory_mb()
        asked = _requested_mem_mb(snap)
        peak_text = (
            f"its peak was {peak:.0f} MB (MaxRSS of step {step})"
            if peak
            else "its peak use was not recorded"
        )
        out.verdict = (
            f"Job {jid} was killed for using more memory than it asked for "
            f"(state {state}, exit {exit_code}): it asked "
            f"for {asked:.0f} MB and {peak_text}."
            if asked
            else f"Job {jid} was killed for exceeding its memory; {peak_text}."
        )
        out.quote(Quoted(f"sacct -j {jid}", "ReqMem", snap.accounting.get("ReqMem", "")))
        out.quote(
            *(
                Quoted(f"sacct -j {jid}", f"{s.get('JobID')} MaxRSS", s.get("MaxRSS", ""))
                for s in snap.steps
                if s.get("MaxRSS")
            )
        )
    elif klass == "node_fail":
        nodes = snap.get("NodeList")
        out.verdict = f"Job {jid} ended because a node it ran on ({nodes}) failed."
        for name in nodes.split(","):
            node = snap.node(name)
            if node:
                out.quote(
                    Quoted("scontrol show nodes", f"{name} State", node.get("State", "")),
                    Quoted("scontrol show nodes", f"{name} Reason", node.get("Reason", "")),
                )
    elif klass == "cancelled":
        by = snap.accounting.get("State", snap.get("JobState")).partition(" by ")[2]
        ran = "before it started" if never_started(snap) else f"after running {duration(elapsed)}"
        out.verdict = f"Job {jid} was cancelled" + (f" by uid {by}" if by else "") + f" {ran}."
    elif klass == "failed" and sig not in {"", "0"}:
        out.verdict = (
            f"Job {jid} failed: it was killed by signal {sig} "
            f"({_signal_name(int(sig))}) after running {duration(elapsed)}."
        )
    elif klass == "failed":
        out.verdict = (
            f"Job {jid} failed: its script exited with status {status} after running "
            f"{duration(elapsed)}."
        )
    else:
        out.verdict = f"Job {jid} ended in state {state} after running {duration(elapsed)}."
    wait = waited(snap)
    median, count = comparable_wait(commands, snap) if commands else (None, 0)
    if wait is not None:
        extra = f" It waited {duration(wait)} from eligible to start"
        if median is not None:
            out.figures.update(
                median_wait_s=median, comparable_jobs=count, comparable_days=COMPARABLE_DAYS
            )
            extra += (
                f", against a median of {duration(median)} for {count} comparable jobs "
                f"(partition {snap.partition}, similar size, last {COMPARABLE_DAYS} days)"
            )
        started = _started_by(snap)
        out.verdict += extra + (f"; {started}." if started else ".")
        out.quote(snap.quote("EligibleTime"), snap.quote("StartTime"))
        out.quote(Quoted(f"sacct -j {jid}", "Flags", snap.accounting.get("Flags", "")))
    if klass in {"completed", "timeout"} and (used := usage(snap, elapsed, out.figures)):
        out.verdict += f" {used}"
        out.quote(
            *(
                Quoted(f"sacct -j {jid}", k, snap.accounting.get(k, ""))
                for k in ("TotalCPU", "NCPUS")
            )
        )
    return out


def usage(snap: Snapshot, elapsed: float | None, figures: dict[str, float] | None = None) -> str:
    """How much of what it held the job used: CPU time over elapsed x CPUs (sacct TotalCPU),
    and on one node its memory peak against its request ("was job 42 efficient?")."""
    cpu = slurm_duration(snap.accounting.get("TotalCPU"))
    ncpus = (
        int(snap.accounting.get("NCPUS") or 0) if snap.accounting.get("NCPUS", "").isdigit() else 0
    )
    if cpu is None or not elapsed or not ncpus:
        return ""
    share = cpu / (elapsed * ncpus)
    if figures is not None:
        figures.update(cpu_time_s=cpu, cpu_held_s=elapsed * ncpus, cpu_busy_share=share)
    if ncpus == 1:
        text = (
            f"It kept its CPU {share:.0%} busy ({duration(cpu)} of CPU time in {duration(elapsed)})"
        )
    else:  # "50 s over 50 s" read as 100%: say what the CPU time is measured against
        text = (
            f"It kept its {cpus(ncpus)} {share:.0%} busy ({duration(cpu)} of CPU time in "
            f"{duration(elapsed)} x {ncpus} CPUs = {duration(elapsed * ncpus)})"
        )
    peak, _ = snap.peak_memory_mb()
    asked = _requested_mem_mb(snap)
    if peak and asked and snap.accounting.get("NNodes", "1") == "1":
        text += f"; its memory peaked at {peak:.0f} MB of the {asked:.0f} MB it asked for"
        if figures is not None:
            figures.update(memory_peak_mb=peak, memory_asked_mb=asked)
    return text + "."
