"""What holds the queue (kind ``queue``): the Markdown (the verdict is
:mod:`wass_chat.slurm.explain.queue`'s).
"""

from __future__ import annotations

from collections import defaultdict

from wass_chat.agent.safety import literal as lit
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.markdown import plain
from wass_chat.slurm.advice import cpus
from wass_chat.slurm.explain.ended import duration
from wass_chat.slurm.explain.partitions import STATE_MEANING
from wass_chat.slurm.explain.phrases import jobs
from wass_chat.slurm.explain.queue import QueueFacts
from wass_chat.slurm.explain.queue_headline import NEEDS_A_PERSON

PARTITION_STATES = defaultdict(lambda: "see scontrol show partitions", STATE_MEANING)
"""What a partition's State (slurm.conf(5), PartitionName State=) means for its jobs."""


def _ids(reason: Facts) -> str:
    """The jobs of one reason by id, so "which jobs are held?" is answered with the jobs."""
    ids = [lit(j) for j in reason.get("job_ids", [])]
    if not ids:
        return ""
    more = reason["jobs"] - len(ids)
    return f" ({', '.join(ids)}{f' and {more} more' if more > 0 else ''})"


def render_queue(f: Facts) -> str:
    lines = [f"**{plain(f['verdict'])}**"]
    if f["reasons"]:
        lines += ["", "**Pending jobs by reason** (`squeue -t PD`):"]
        lines += [
            f"- {lit(r['reason'])}: {jobs(r['jobs'])}{_ids(r)}, {cpus(r['cpus'])} "
            f"({r['meaning']})"
            + (" - needs a person to act" if r.get("outcome") in NEEDS_A_PERSON else "")
            for r in f["reasons"]
        ]
    if f["partitions"]:
        lines += ["", "**Partitions** (`scontrol show partitions`, `scontrol show nodes`):"]
        for p in f["partitions"]:
            down = (
                f"; unavailable: {', '.join(p['unavailable_nodes'])}"
                if p["unavailable_nodes"]
                else ""
            )
            state = p.get("state") or "UP"
            shown = "" if state == "UP" else f" (state {lit(state)}: {PARTITION_STATES[state]})"
            lines.append(
                f"- {lit(p['partition'])}{shown}: {p['cpus_allocated']} of {p['cpus_total']} "
                f"CPUs in use, {jobs(p['pending_jobs'])} pending for "
                f"{cpus(p['pending_cpus'])}{down}"
            )
    if f["longest"]:
        lines += ["", "**Waiting longest:**"]
        lines += [
            f"- job {lit(j['job_id'])} ({lit(j['user'])}, {lit(j['partition'])}): "
            f"{duration(j['age_s'])}, {lit(j['reason'])}"
            for j in f["longest"]
        ]
    if running := f.get("running_jobs"):
        more = f["running"] - len(running)
        lines += ["", "**Running, the longest first** (`squeue -t R`):"]
        lines += [
            f"- job {lit(j['job_id'])} ({lit(j['user'])}, {lit(j['partition'])}): "
            f"{duration(j['elapsed_s'])} on {lit(j['nodes'])}, {cpus(j['cpus'])}"
            for j in running
        ]
        lines += [f"- and {jobs(more)} more"] if more > 0 else []
    if len(users := f.get("users", [])) > 1:
        lines += ["", "**Jobs by user** (`squeue`):"]
        lines += [
            f"- {lit(u['user'])}: {u['running']} running, {u['pending']} pending" for u in users
        ]
    return "\n".join(lines)


KIND = Kind(
    "queue",
    "the pending jobs by reason, the partitions, who waits longest, what runs, jobs by user",
    render_queue,
    facts=QueueFacts,
)
