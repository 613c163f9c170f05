"""What a job that ended leaves behind: where its output went, the last lines of its error
output, the jobs it strands, and what to change before running it again.

"Why did job 81 fail?" is not answered by "its script exited with status 3" alone. The person
next wants the error file and its last lines (:mod:`wass_chat.slurm.job_files`), to know that job
82, which waits for 81 to succeed, now never starts, and what to change: the failing command,
or (for a job that finished but used little of what it held) the requests that the efficiency
code's :func:`~wass_chat.analytics.job_efficiency.advice` suggests, from the same figures
``wass-chat sacct efficiency`` shows (the caller passes them in: the analytics sit above
Slurm's floor). Time and memory kills keep their advice checked with
``sbatch --test-only`` (:func:`wass_chat.slurm.explain._ended_advice`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wass_chat.slurm.advice import Advice
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands, parse_parsable
from wass_chat.slurm.explain.phrases import names
from wass_chat.slurm.explain.refused import REFUSED_CLASS
from wass_chat.slurm.hostlist import expand
from wass_chat.slurm.job_files import JobFile, JobNames, job_files, last_lines
from wass_chat.slurm.live import Snapshot

_DEPENDENCY = re.compile(
    r"(?P<type>after\w*):(?P<job>\d+(?:_\d+)?)(?:\+\d+)?(?:\((?P<state>\w+)\))?"
)
NEVER_AFTER_FAILURE = frozenset({"afterok", "aftercorr"})
"""Dependency types a job that did not complete can never satisfy."""
NEVER_AFTER_SUCCESS = frozenset({"afternotok"})
"""Dependency types a job that completed can never satisfy."""
_SACCT_FILE_FIELDS = ("WorkDir", "StdOut", "StdErr", "SubmitLine")
"""sacct fields that say where the files are (SubmitLine last: it may hold ``|``)."""

Suggestions = Callable[[str], list[str]]
"""A job id -> the efficiency code's suggestions for its next request: the analytics' (above
this floor) :func:`~wass_chat.analytics.job_efficiency.efficiency_suggestions`, passed in by
whoever explains the job (the agent's ``job_why`` tool)."""


@dataclass
class Aftermath:
    """What an ended job left: files, its error output's last lines, stranded jobs, changes."""

    files: tuple[JobFile, ...] = ()
    error_tail: list[str] | None = None
    """The last lines of the error file; None when it could not be read here."""
    stranded: list[dict[str, str]] = field(default_factory=list)
    """Pending jobs whose dependency on this one can never be satisfied now."""
    failed_step: dict[str, str] = field(default_factory=dict)
    """The first step that failed (sacct JobID, name, ExitCode) and the batch script."""
    advice: list[Advice] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        """What the verdict adds: the jobs this one strands."""
        if not self.stranded:
            return ""
        ids = [f"job {s['job_id']}" for s in self.stranded]
        shown = names(ids[:3]) + (" and others" if len(ids) > 3 else "")
        kinds = sorted({s["type"] for s in self.stranded})
        waits = "waits" if len(ids) == 1 else "wait"
        return (
            f" It strands {len(ids)} pending job{'s' if len(ids) != 1 else ''} ({shown}), "
            f"which {waits} on it ({', '.join(kinds)}) and can never start as "
            f"{'it stands' if len(ids) == 1 else 'they stand'}."
        )

    def facts(self) -> dict[str, Any]:
        """The keys this adds to a job's facts (see :class:`~.model.JobWhyFacts`)."""
        found: dict[str, Any] = {
            "files": [
                {"stream": f.stream, "path": f.path, "source": f.source, "certain": f.certain}
                for f in self.files
            ],
            "stranded": self.stranded,
        }
        if self.error_tail is not None:
            found["error_tail"] = self.error_tail
        if self.failed_step:
            found["failed_step"] = self.failed_step
        return found


def ended_aftermath(
    commands: SlurmCommands,
    snap: Snapshot,
    klass: str,
    suggestions: Suggestions | None = None,
) -> Aftermath:
    """The aftermath of the ended job in ``snap`` (reason class ``klass``), asked of Slurm;
    a completed job's advice is what ``suggestions`` gives (none without it)."""
    after = Aftermath()
    if klass == REFUSED_CLASS:  # no script ran: no files, no failing command, only dependants
        after.stranded = stranded(commands, snap, after)
        return after
    after.files = _files(commands, snap, after)
    bad = klass != "completed"
    if bad and len(after.files) == 2:
        after.error_tail = last_lines(after.files[1].path)
    after.stranded = stranded(commands, snap, after)
    if klass == "failed":
        after.failed_step = _failed_step(snap)
        after.advice.append(_fix_the_command(snap, after))
    if klass == "completed":
        tips = suggestions(snap.job_id) if suggestions else []
        after.advice += [
            Advice(
                tip,
                None,
                None,
                "from its accounting figures, as `wass-chat sacct efficiency` computes them",
            )
            for tip in tips
        ]
    return after


def _files(commands: SlurmCommands, snap: Snapshot, after: Aftermath) -> tuple[JobFile, ...]:
    head, _, task = snap.job_id.partition("_")
    nodes = expand(snap.get("NodeList")) if snap.get("NodeList") else []
    naming = JobNames(
        job_id=snap.job_id,
        name=snap.get("JobName"),
        user=snap.user,
        first_node=nodes[0] if nodes else "",
        array_job_id=snap.job.get("ArrayJobId", "") or (head if task else ""),
        array_task_id=snap.job.get("ArrayTaskId", "") or task,
    )
    record = _sacct_files(commands, snap.job_id, after) if not snap.job.get("StdOut") else {}
    workdir = snap.job.get("WorkDir") or record.get("WorkDir", "")
    found = job_files(naming, workdir, snap.job, record, record.get("SubmitLine", ""))
    return found or ()


def _sacct_files(commands: SlurmCommands, job_id: str, after: Aftermath) -> dict[str, str]:
    """WorkDir, StdOut, StdErr and SubmitLine of the job, those this sacct offers."""
    try:
        offered = {w.lower() for w in commands.run(["sacct", "--helpformat"]).split()}
        fields = [f for f in _SACCT_FILE_FIELDS if f.lower() in offered]
        argv = ["sacct", "-n", "-P", "-X", "-j", job_id, "-o", ",".join(fields)]
        after.commands.append(" ".join(argv))
        rows = parse_parsable(commands.run(argv), fields)
    except SlurmCommandError:
        return {}
    return rows[0] if rows else {}


def stranded(commands: SlurmCommands, snap: Snapshot, after: Aftermath) -> list[dict[str, str]]:
    """Pending jobs that wait on this one in a way its end can never satisfy (afterok on a job
    that failed, afternotok on one that completed), or that Slurm already marked
    DependencyNeverSatisfied."""
    argv = ["squeue", "-h", "-t", "PD", "-o", "%i|%u|%r|%E"]
    after.commands.append(" ".join(argv))
    try:
        rows = parse_parsable(commands.run(argv), ("job_id", "user", "reason", "dependency"))
    except SlurmCommandError:
        return []
    never = NEVER_AFTER_SUCCESS if snap.state == "COMPLETED" else NEVER_AFTER_FAILURE
    head = snap.job_id.split("_")[0]
    found = []
    for row in rows:
        for dep in _DEPENDENCY.finditer(row["dependency"]):
            if dep["job"] not in {snap.job_id, head}:
                continue
            if dep["type"] in never or row["reason"] == "DependencyNeverSatisfied":
                found.append({**row, "type": dep["type"]})
                break
    return found


def _failed_step(snap: Snapshot) -> dict[str, str]:
    """The first step sacct records as failed (``81.batch``, ``81.0``), and the script."""
    step = next(
        (
            s
            for s in snap.steps
            if s.get("State", "").startswith("FAILED") or s.get("ExitCode", "0:0") != "0:0"
        ),
        {},
    )
    found = {
        "step": step.get("JobID", ""),
        "name": step.get("JobName", ""),
        "exit_code": step.get("ExitCode", "") or snap.get("ExitCode"),
        "script": snap.job.get("Command", ""),
    }
    return {k: v for k, v in found.items() if v}


def _fix_the_command(snap: Snapshot, after: Aftermath) -> Advice:
    """Advice for a non-zero exit: which command to fix, and where its error output is."""
    status = snap.get("ExitCode").partition(":")[0] or "?"
    step = after.failed_step.get("step", "")
    which = (
        "the batch script"
        if not step or step.endswith(".batch")
        else f"the command of step {step.rsplit('.', 1)[-1]}"
    )
    if after.error_tail:
        where = "its error output ends with the lines below"
    elif after.files:
        where = "its error output could not be read here; look at the error file below"
    else:
        where = "Slurm does not say where its error output went"
    return Advice(
        f"fix {which}, which exited with status {status}, then resubmit",
        None,
        None,
        where,
    )
