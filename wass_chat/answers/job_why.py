"""Why a job waits or how it ended (kind ``job_why``): the Markdown.

The verdict comes first (computed from the facts by :mod:`wass_chat.slurm.explain`), then the
evidence with the command each value came from, then what would help (with what
``sbatch --test-only`` said), then the expected start. Everything that came from Slurm (job
names, users, reasons, comments) is shown through :func:`~wass_chat.agent.safety.literal`.
"""

from __future__ import annotations

from wass_chat.agent.safety import literal as lit
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.markdown import plain
from wass_chat.slurm.explain.model import JobWhyFacts
from wass_chat.slurm.reasons import PENDING_STATES


def render_job_why(f: Facts) -> str:
    """Verdict, the expected start (one source, named), evidence, advice, and for an ended job
    its files, the last lines of its error output and the jobs it strands."""
    lines = [f"**{plain(f['verdict'])}**"]
    if f.get("meaning") and f.get("reason_class") not in {"running", "completed", "unknown"}:
        if f.get("state") in PENDING_STATES:
            lines.append(f"Slurm's reason {lit(f['reason'])} means: {f['meaning']}.")
        elif f.get("state") and f["state"] != f["reason"]:  # FAILED 0:9 read as out of memory
            lines.append(
                f"Slurm recorded {lit(f['state'])}; read as {lit(f['reason'])}, it means: "
                f"{f['meaning']}."
            )
        else:
            lines.append(f"Slurm's outcome {lit(f['reason'])} means: {f['meaning']}.")
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


KIND = Kind(
    "job_why",
    "why a job waits, or how it ended and what it strands",
    render_job_why,
    facts=JobWhyFacts,
)
