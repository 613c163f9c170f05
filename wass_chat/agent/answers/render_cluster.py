"""Renderings of the cluster's facts: a job's why, the queue, waits, nodes, accounting.

Every answer leads with its verdict (computed from the facts by :mod:`wass_chat.slurm.explain`),
then the evidence with the command each value came from, then what would help (with what
``sbatch --test-only`` said), then the expected start. Everything that came from Slurm (job
names, users, reasons, comments) is shown through :func:`~wass_chat.agent.safety.literal`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from wass_chat.agent.safety import MAX_NOTE
from wass_chat.agent.safety import literal as lit
from wass_chat.slurm.advice import cpus
from wass_chat.slurm.explain.ended import duration
from wass_chat.slurm.explain.phrases import jobs
from wass_chat.slurm.explain.queue_headline import NEEDS_A_PERSON
from wass_chat.slurm.reasons import PENDING_STATES

Facts = Mapping[str, Any]
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#|~!])")


def plain(text: str) -> str:
    """A computed sentence as Markdown text: one line, every Markdown character escaped.

    Verdicts carry no user-chosen strings (job names and comments stay in the evidence, as
    literals) except a node's Reason, which an admin sets; escaping keeps it, and node,
    partition and user names, from being read as Markdown.
    """
    return _MARKDOWN.sub(r"\\\1", " ".join(str(text).split()))


def render_job_why(f: Facts) -> str:
    """Verdict, the expected start (one source, named), evidence, advice, and for an ended job
    its files, the last lines of its error output and the jobs it strands."""
    lines = [f"**{plain(f['verdict'])}**"]
    if f.get("meaning") and f.get("reason_class") not in {"running", "completed", "unknown"}:
        what = "reason" if f.get("state") in PENDING_STATES else "outcome"
        lines.append(f"Slurm's {what} {lit(f['reason'])} means: {f['meaning']}.")
    note = f.get("expected_start_note")
    if f.get("state") in PENDING_STATES and note:
        lines += ["", f"**Expected start:** {plain(note)}."]
    evidence = f.get("evidence") or []
    if evidence:
        lines += ["", "**Evidence** (as Slurm printed it):"]
        lines += [
            f"- {lit(e['field'])} = {lit(e['value'])} ({lit(e['command'])})" for e in evidence
        ]
    advice = f.get("advice") or []
    if advice:
        waiting = f.get("state") in PENDING_STATES
        heading = "What would make it start sooner" if waiting else "What to change next time"
        lines += ["", f"**{heading}:**"]
        for a in advice:
            if a["helps"] is None and not a.get("checked_with"):  # a suggestion, not checked
                lines.append(f"- {plain(a['text'].rstrip('.'))} ({plain(a['outcome'])}).")
                continue
            mark = {True: "helps", False: "does not help", None: "not checkable"}[a["helps"]]
            how = (
                f" (checked: {lit(a['checked_with'], limit=300)})" if a.get("checked_with") else ""
            )
            lines.append(f"- {plain(a['text'])}: {mark}; {plain(a['outcome'])}{how}")
    elif f.get("state") in PENDING_STATES:
        lines += ["", "Nothing you can change in the request would start it sooner."]
    lines += _aftermath_lines(f)
    if f.get("note"):
        lines += ["", f"_Answered {plain(f['note'])}._"]
    if f.get("comment"):
        lines.append(f"- comment: {lit(f['comment'])}")
    if f.get("run_id"):
        lines.append(f"- part of wass-chat run {lit(f['run_id'])}, task {lit(f['task'])}")
    return "\n".join(lines)


def _aftermath_lines(f: Facts) -> list[str]:
    """An ended job's files, the last lines of its error output (the job's own text, shown as
    literals) and the jobs it strands."""
    lines: list[str] = []
    files = f.get("files") or []
    if files:
        lines += ["", "**Its files:**"]
        same = len(files) == 2 and files[0]["path"] == files[1]["path"]
        for item in files[:1] if same else files:
            stream = "output and error" if same else item["stream"]
            doubt = "" if item["certain"] else ", unless its script named another file"
            lines.append(f"- {stream}: {lit(item['path'], limit=300)} ({item['source']}{doubt})")
    tail = f.get("error_tail")
    if tail:
        lines += ["", "**The last lines of its error output** (written by the job, quoted as is):"]
        lines += [f"- {lit(line, limit=200)}" for line in tail]
    elif "error_tail" in f and files:
        lines += ["", "Its error file is empty."]
    elif files and f.get("reason_class") != "completed":
        lines += ["", "Its error file could not be read here (missing, or not readable by you)."]
    stranded = f.get("stranded") or []
    if stranded:
        lines += ["", "**Jobs it strands** (`squeue -t PD`):"]
        lines += [
            f"- job {lit(s['job_id'])} of {lit(s['user'])}: {lit(s['dependency'])}, "
            f"{lit(s['reason'])}"
            for s in stranded
        ]
    return lines


def render_queue(f: Facts) -> str:
    lines = [f"**{plain(f['verdict'])}**"]
    if f["reasons"]:
        lines += ["", "**Pending jobs by reason** (`squeue -t PD`):"]
        lines += [
            f"- {lit(r['reason'])}: {jobs(r['jobs'])}, {cpus(r['cpus'])} ({r['meaning']})"
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
            lines.append(
                f"- {lit(p['partition'])}: {p['cpus_allocated']} of {p['cpus_total']} "
                f"CPUs in use, {jobs(p['pending_jobs'])} pending for "
                f"{p['pending_cpus']} CPUs{down}"
            )
    if f["longest"]:
        lines += ["", "**Waiting longest:**"]
        lines += [
            f"- job {lit(j['job_id'])} ({lit(j['user'])}, {lit(j['partition'])}): "
            f"{duration(j['age_s'])}, {lit(j['reason'])}"
            for j in f["longest"]
        ]
    return "\n".join(lines)


def render_waiters(f: Facts) -> str:
    lines = [f"**{plain(f['verdict'])}**"]
    if f["users"]:
        lines += ["", f"**Median wait by user** ({f['jobs']} jobs that started, from sacct):"]
        lines += [
            f"- {lit(u['user'])}: median {duration(u['median_wait_s'])}, longest "
            f"{duration(u['max_wait_s'])} (job {lit(u['longest_job'])}), {jobs(u['jobs'])}"
            for u in f["users"]
        ]
    if f.get("note"):
        lines += ["", f"_{lit(f['note'], MAX_NOTE)}_"]
    return "\n".join(lines)


def render_cluster(f: Facts) -> str:
    """The verdict, then each node (the asked one only, with its jobs): state in words, the
    admin's reason, CPUs in use; the demo platform's nodes when Slurm does not answer."""
    lines = [f"**{plain(f['verdict'])}**", ""] if f.get("verdict") else []
    nodes = [n for n in f["nodes"] if not f.get("node") or n["name"] == f["node"]]
    source = "`scontrol show nodes`" if f["source"] == "slurm" else lit(f["source"])
    lines.append(f"**Nodes** ({source}):")
    for n in nodes:
        if "condition" not in n:  # the demo platform's simulated nodes
            lines.append(f"- {lit(n['name'])}: {lit(n['state'])}, {n['cores']} cores")
            continue
        reason = (
            f' ("{lit(n["reason"])}"'
            + (f", {lit(n['reason_by'])} at {n['reason_since']})" if n["reason_by"] else ")")
            if n["reason"]
            else ""
        )
        parts = ", ".join(n["partitions"])
        lines.append(
            f"- {lit(n['name'])}: {n['condition']}{reason}; {n['allocated_cores']} of "
            f"{n['cores']} CPUs in use"
            + (f"; partitions {lit(parts)}" if parts else "")
            + f" (state {lit(n['state'])})"
        )
        if f.get("node"):
            lines += [
                f"  - job {lit(j['job_id'])} of {lit(j['user'])}: {j['cpus']} CPUs"
                + (f", time limit ends about {j['ends']}" if j["ends"] else ", no time limit")
                for j in n["jobs"]
            ]
    return "\n".join(lines)


def _people(key: str, value: float) -> str:
    """A statistic in people's units: durations as ``3 h 20 min``, shares as percentages."""
    if key.endswith("_s"):
        return duration(value)
    if any(w in key for w in ("share", "rate", "fraction", "utilisation", "utilization")):
        return f"{100 * value:.1f}%" if value <= 1 else f"{value:.1f}%"
    if key.endswith("_hours"):
        return f"{value:,.0f}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"


STATISTIC_WORDS = {
    "finished": "finished jobs (as last recorded, some after the period's end)",
    "started": "started jobs",
    "pending": "pending at the period's end",
    "running": "running at the period's end",
    "refused": "submissions Slurm refused (never ran)",
    "node_hours": "node-hours",
    "core_hours": "core-hours",
    "over_request_jobs": "completed jobs with a walltime request",
    "over_request_ratio": "walltime asked / used, all completed jobs",
    "over_request_median": "walltime asked / used, median completed job",
    "under_half_share": "completed jobs using under half their walltime",
    "backfill_share": "started jobs backfilled",
}
"""Statistic names in words (the rest read well as they are: ``wait median``, ``failure rate``)."""
RATIOS = frozenset({"over_request_ratio", "over_request_median"})
"""Statistics that are a multiple (walltime asked / used), shown as ``2.9x``."""


def render_sacct_summary(f: Facts) -> str:
    lines = [f"**{plain(f['verdict'])}**", ""] if f.get("verdict") else []
    lines += [
        f"**Accounting summary** ({lit(f['period'])}"
        + (f", user {lit(f['user'])}" if f.get("user") else "")
        + f"): {f['jobs']:,} jobs."
    ]
    states = ", ".join(f"{n:,} {lit(state)}" for state, n in f.get("state_counts", {}).items())
    if states:
        lines.append(f"- states: {states}")
    for key, value in f["statistics"].items():
        label = STATISTIC_WORDS.get(key, key.removesuffix("_s").replace("_", " "))
        shown = f"{value:.1f}x" if key in RATIOS else _people(key, value)
        lines.append(f"- {label}: {shown}")
    lines += [f"- {insight}" for insight in f.get("insights", [])]
    if f.get("note"):
        lines += ["", f"_{lit(f['note'], MAX_NOTE)}_"]
    return "\n".join(lines)


def render_efficiency(f: Facts) -> str:
    """Efficiency facts: the verdict, then the figures line by line (user names and job ids
    come from accounting: shown as literals)."""
    lines = [f"**{plain(f['verdict'])}**", ""]
    for line in f.get("lines", []):  # list items keep their marker; the rest are paragraphs
        item = re.match(r"^(- |\d+\. )(.*)$", line)
        lines += [item[1] + plain(item[2])] if item else ["", plain(line)] if line else []
    if f.get("note"):
        lines += ["", f"_{lit(f['note'], MAX_NOTE)}_"]
    return "\n".join(lines)


CLUSTER_RENDERERS: dict[str, Callable[[Facts], str]] = {
    "job_why": render_job_why,
    "queue": render_queue,
    "waiters": render_waiters,
    "cluster": render_cluster,
    "sacct_summary": render_sacct_summary,
    "efficiency": render_efficiency,
    "gpu_usage": render_efficiency,
}
