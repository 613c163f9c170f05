"""Explain a live Slurm job: verdict first, then Slurm's evidence, checked advice, expected start.

:func:`explain_job` is the one entry point (the agent's ``job_why`` tool, the offline mode and
the app all call it). It gathers a :class:`~wass_chat.slurm.live.Snapshot`, classifies the
reason with :mod:`wass_chat.slurm.reasons`, runs the explainer of that class, checks advice with
``sbatch --test-only`` (:mod:`wass_chat.slurm.advice`) and returns a
:class:`~wass_chat.slurm.explain.model.JobWhyFacts` dict.

Who may ask: a user about their own jobs; root and Slurm operators/administrators
(``sacctmgr show user`` AdminLevel) about anyone's. Asking about another user's job otherwise
raises :class:`NotYourJob` (one line, exit 2 from ``ask``), as Slurm's PrivateData would.
"""

from __future__ import annotations

import math
import os
import pwd
import re
from dataclasses import replace
from datetime import datetime

from sim.errors import InputError
from wass_chat.slurm.advice import Advice, JobRequest, check, judge, request_of
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands
from wass_chat.slurm.explain.aftermath import Aftermath, Suggestions, ended_aftermath
from wass_chat.slurm.explain.ended import finished, running, scheduler_of, waited
from wass_chat.slurm.explain.model import Explanation, JobWhyFacts
from wass_chat.slurm.explain.pending import EXPLAINERS, generic
from wass_chat.slurm.explain.refused import (
    REFUSED_CLASS,
    REFUSED_MEANING,
    refusal_advice,
    refused_at_submit,
)
from wass_chat.slurm.explain.replay_start import replayed_start
from wass_chat.slurm.formats import clock, memory_mb, slurm_duration, slurm_time
from wass_chat.slurm.live import Quoted, Snapshot, snapshot
from wass_chat.slurm.queue_advice import (
    QUEUE_CLASSES,
    QueueView,
    advise,
    judge_newcomer,
    queue_or_none,
    queue_view,
    start_words,
)
from wass_chat.slurm.reasons import NO_START, PENDING_STATES, Reason, classify

__all__ = ["JobWhyFacts", "NotYourJob", "explain_job", "facts_of"]

_JOB_ID = re.compile(r"\d+(_\d+)?")
_COMMENT_TOKEN = re.compile(r"wass:v1:(?P<body>\S+)")


class NotYourJob(InputError):
    """A user who is not a Slurm operator asked about another user's job."""

    kind = "request"

    def one_line(self, limit: int = 5) -> str:
        return "; ".join(self.problems[:limit])


def asker() -> str:
    """The user running wass-chat (whose jobs they may ask about)."""
    return pwd.getpwuid(os.geteuid()).pw_name


def is_operator(commands: SlurmCommands, user: str) -> bool:
    """root, or AdminLevel Operator/Administrator in Slurm's accounting."""
    if user == "root":
        return True
    try:
        level = commands.run(["sacctmgr", "-n", "-P", "show", "user", user, "format=AdminLevel"])
    except SlurmCommandError:
        return False
    return level.strip() in {"Operator", "Administrator"}


def explain_job(
    commands: SlurmCommands,
    job_id: str,
    now: datetime | None = None,
    user: str | None = None,
    suggestions: Suggestions | None = None,
) -> JobWhyFacts:
    """Why job ``job_id`` waits, runs or ended as it did, from Slurm's own sources; a completed
    job is advised what ``suggestions`` gives for it (the agent passes the efficiency code's
    :func:`~wass_chat.analytics.job_efficiency.efficiency_suggestions`)."""
    job_id = job_id.strip()
    if not _JOB_ID.fullmatch(job_id):
        raise InputError(job_id, ["a Slurm job id is a number (or ARRAY_TASK)"])
    snap = snapshot(commands, job_id, now)
    user = user or asker()
    if snap.user and snap.user != user and not is_operator(commands, user):
        raise NotYourJob(
            job_id,
            [
                f"job {job_id} belongs to another user; wass-chat explains "
                "only your own jobs unless you are a Slurm operator"
            ],
        )
    code = snap.reason if snap.state in PENDING_STATES else snap.state
    if killed_for_memory(snap):
        code = "OUT_OF_MEMORY"
    entry = classify(code)
    klass, meaning = entry.klass, entry.meaning
    if klass == "failed" and refused_at_submit(snap):
        klass, meaning = REFUSED_CLASS, REFUSED_MEANING
    after: Aftermath | None = None
    if snap.state in PENDING_STATES:
        explain = EXPLAINERS.get(entry.klass)
        out = explain(snap, commands) if explain else generic(snap, commands, entry)
        view = (
            queue_view(commands, snap.job_id, snap.now)
            if entry.klass in QUEUE_CLASSES and snap.job
            else None
        )
        out.advice += _pending_advice(commands, snap, entry.klass, view)
        out.verdict += _waiting_so_far(out, snap)
        _expected_start(out, snap, entry, commands, view)
    elif snap.state in {"RUNNING", "SUSPENDED", "CONFIGURING", "COMPLETING"}:
        out = running(snap, commands)
    else:
        out = finished(snap, commands, klass)
        out.advice = _ended_advice(commands, snap, klass)
        after = ended_aftermath(commands, snap, klass, suggestions)
        out.verdict += after.sentence() + _array_words(snap)
        out.advice += after.advice
    if snap.user:  # "who submitted job 29?": the owner, as Slurm records it
        out.quote(snap.quote("UserId"))
    restarts = snap.get("Restarts")
    if restarts.isdigit() and int(restarts) > 0:
        out.verdict += f" Slurm has requeued it {restarts} time{'s' if restarts != '1' else ''}."
        out.quote(snap.quote("Restarts"))
    facts = facts_of(snap, code, klass, meaning, out)
    if snap.tasks and "_" not in job_id:
        facts["array_tasks"] = [
            {"job_id": t.get("JobID", ""), "state": _state_word(t)} for t in snap.tasks
        ]
    if after is not None:
        facts.update(after.facts())  # type: ignore[typeddict-item]
        facts["commands"] += after.commands
    return facts


ARRAY_TASKS_SHOWN = 6


def _state_word(row: dict[str, str]) -> str:
    """``CANCELLED by 0`` as ``CANCELLED``: the state, not who set it."""
    return (row.get("State") or "?").split()[0]


def _array_words(snap: Snapshot) -> str:
    """When the id asked is an array's (``sacct -j 12`` lists its tasks), which of its tasks
    this answer is about and how the others ended: one task's fate is not the array's."""
    if "_" in snap.job_id or not snap.tasks:
        return ""
    own = snap.accounting.get("JobID", "").partition("_")[2].strip("[]").split("%")[0] or "?"
    shown = [f"{t.get('JobID', '')} {_state_word(t)}" for t in snap.tasks[:ARRAY_TASKS_SHOWN]]
    more = len(snap.tasks) - len(shown)
    others = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    plural = "" if own.isdigit() else "s"
    return (
        f" This is array {snap.job_id}'s task{plural} {own}; its other tasks: {others} "
        f"(ask about one by its id, e.g. /why {snap.tasks[0].get('JobID', '')})."
    )


def _waiting_so_far(out: Explanation, snap: Snapshot) -> str:
    """`` It has been pending since 14:57 (its submission).``: "how long has job 15 been
    waiting?" was answered with why and when, never since when; '' without a submit time. A
    clock, not a duration: the verdict is the same however many seconds apart it is asked (the
    chat's, ``ask``'s and the MCP server's answers are compared)."""
    submitted = slurm_time(snap.get("SubmitTime"))
    if submitted is None or submitted > snap.now:
        return ""
    out.quote(snap.quote("SubmitTime"))
    return f" It has been pending since {clock(submitted, snap.now)} (its submission)."


def killed_for_memory(snap: Snapshot) -> bool:
    """A job killed by SIGKILL whose peak memory (MaxRSS) passed its request: how Slurm with
    ``JobAcctGatherParams=OverMemoryKill`` (no cgroup) reports an out-of-memory kill (state
    FAILED, exit 0:9), as well as the OUT_OF_MEMORY state of cgroup sites."""
    if snap.state == "OUT_OF_MEMORY":
        return True
    if snap.state not in {"FAILED", "CANCELLED"} or not snap.get("ExitCode").endswith(":9"):
        return False
    asked = memory_mb(snap.accounting.get("ReqMem")) or 0.0
    return asked > 0 and snap.peak_memory_mb()[0] > asked


def _pending_advice(
    commands: SlurmCommands, snap: Snapshot, klass: str, view: QueueView | None
) -> list[Advice]:
    if not snap.job:
        return []
    request = request_of(snap, _submit_line(commands, snap.job_id))
    found = advise(commands, snap, request, klass, view)
    release = {
        "held_user": f"release it: scontrol release {snap.job_id}",
        "begin_time": f"move its begin time: scontrol update JobId={snap.job_id} StartTime=now",
        "dependency_never": f"remove the dependency: scontrol update JobId={snap.job_id} "
        "Dependency= (or cancel it)",
    }
    if klass in release:
        result = check(commands, request)
        found.insert(0, judge(release[klass], result, None, snap.now))
    return found


def _submit_line(commands: SlurmCommands, job_id: str) -> str:
    """sacct's SubmitLine (the node count a user typed), '' where sacct lacks it."""
    try:
        return commands.run(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "SubmitLine"]).strip()
    except SlurmCommandError:
        return ""


def _ended_advice(commands: SlurmCommands, snap: Snapshot, klass: str) -> list[Advice]:
    """For jobs killed for time or memory, or by a node: the change, checked with --test-only."""
    if klass == REFUSED_CLASS:
        return refusal_advice(commands, snap)
    if klass not in {"timeout", "out_of_memory", "node_fail"}:
        return []
    base = _ended_request(snap)
    if klass == "timeout":
        limit = slurm_duration(snap.get("TimeLimit")) or 60.0
        minutes = max(2, math.ceil(2 * limit / 60))
        text, changed = (
            f"ask for --time={minutes} (minutes), twice the limit it hit",
            replace(base, time_min=minutes),
        )
    elif klass == "out_of_memory":
        asked = memory_mb(snap.accounting.get("ReqMem")) or 0.0
        mem = max(64, math.ceil(1.5 * max(snap.peak_memory_mb()[0], asked)))
        text, changed = (
            f"ask for --mem={mem}M (1.5 times its peak or request)",
            replace(base, mem=f"{mem}M", mem_per_cpu=""),
        )
    else:
        nodes = snap.get("NodeList")
        text, changed = f"resubmit excluding {nodes} (--exclude)", replace(base, exclude=nodes)
    return [judge_newcomer(commands, snap, text, changed, queue_or_none(commands, snap.now))]


def _ended_request(snap: Snapshot) -> JobRequest:
    cpus = int(snap.get("NumCPUs") or 1) if (snap.get("NumCPUs") or "1").isdigit() else 1
    time_s = slurm_duration(snap.get("TimeLimit"))
    return JobRequest(
        partition=snap.partition,
        ntasks=cpus,
        time_min=None if time_s is None else max(1, math.ceil(time_s / 60)),
    )


def _expected_start(
    out: Explanation,
    snap: Snapshot,
    entry: Reason,
    commands: SlurmCommands,
    view: QueueView | None = None,
) -> None:
    """The answer's one start time, with its source: for a job waiting its turn, our replay of
    the whole queue, with Slurm's own estimate beside it when it has one; else Slurm's estimate;
    else (waiting for CPUs) our replay of the running jobs' time limits; else none yet.

    The replay comes first because it is the closer: on the captured queues of
    ``tests/slurm/data/slurm-V/queue-model/`` Slurm's ``squeue --start`` put 6 of 20 (22.05), 4
    of 26 (24.11) and 4 of 26 (26.05) jobs within 65 s of their real start, most 2-9 minutes
    late, and the replay 18, 23 and 23 (``test_predicted_starts_are_where_slurm_really_started
    _the_jobs``); on a 24.11 queue an answer said "Expected start: about 13:00 (Slurm's
    estimate)" beside advice whose replay said 12:57 for the job as it stands: it started at
    12:57:15."""
    if out.expected_start_note:  # the explainer found it cannot start (a limit it passes alone)
        return
    if entry.outcome in NO_START:
        out.expected_start_note = "none: it cannot start as it stands"
    elif view is not None and view.start is not None:
        out.expected_start = view.start
        out.expected_start_source = "queue model"
        out.expected_start_note = (
            f"{start_words(view.own, snap.job_id, snap.now)}{view.hedge()} "
            f"({view.source_words()}; {view.bound()})"
        )
        if view.why_hedged():
            out.expected_start_note += f"; at the earliest because {view.why_hedged()}"
        if snap.start_estimate is not None:  # Slurm's plan, beside: it runs late
            out.expected_start_note += (
                f"; Slurm's own estimate (squeue --start) is about "
                f"{clock(snap.start_estimate, snap.now)}{_on(snap)}, its backfill plan, which "
                "came minutes after the real start for most jobs of the queues measured"
            )
            _quote_estimate(out, snap)
        else:
            out.expected_start_note += "; Slurm has not estimated a start yet"
        for job, why in view.queue.left_out[:1]:  # the job the note names, as evidence
            out.quote(Quoted("scontrol -d --oneliner show job", f"job {job} left out", why))
        out.figures.update(view.figures())
    elif snap.start_estimate is not None:
        out.expected_start = snap.start_estimate
        out.expected_start_source = "slurm"
        out.expected_start_note = (
            f"about {clock(snap.start_estimate, snap.now)}{_on(snap)} "
            f"(Slurm's estimate, squeue --start)"
        )
        _quote_estimate(out, snap)
    elif entry.klass == "resources" and (replay := replayed_start(snap, commands=commands)):
        out.expected_start = replay.when
        out.expected_start_source = "replay"
        out.expected_start_note = replay.note(snap.now)
    else:
        note = "Slurm has not estimated a start yet"
        if snap.backfill_last:
            note += f" (the backfill scheduler last ran at {snap.backfill_last})"
            out.quote(Quoted("sdiag", "backfill Last cycle when", snap.backfill_last))
        out.expected_start_note = note


def _on(snap: Snapshot) -> str:
    """' on n4': the nodes Slurm plans the job on, where it has planned them."""
    return f" on {snap.planned_nodes}" if snap.planned_nodes else ""


def _quote_estimate(out: Explanation, snap: Snapshot) -> None:
    start = f"squeue --start -j {snap.job_id}"
    if snap.start_estimate is not None:
        out.quote(Quoted(start, "START_TIME", snap.start_estimate.isoformat(timespec="seconds")))
    out.quote(Quoted(start, "SCHEDNODES", snap.planned_nodes))


def facts_of(snap: Snapshot, code: str, klass: str, meaning: str, out: Explanation) -> JobWhyFacts:
    """The facts of an explanation (what every mode renders and the verifier checks)."""
    comment = snap.get("Comment")
    run_id, task = _run_link(comment)
    wait = waited(snap)
    elapsed = slurm_duration(snap.get("RunTime")) or slurm_duration(snap.accounting.get("Elapsed"))
    who = scheduler_of(snap)
    return JobWhyFacts(
        kind="job_why",
        job_id=snap.job_id,
        job_name=snap.get("JobName"),
        user=snap.user,
        state=snap.state,
        reason=snap.reason if snap.state in PENDING_STATES else code,
        reason_class=klass,
        meaning=meaning,
        verdict=out.verdict,
        evidence=out.evidence_facts(),
        advice=out.advice_facts(),
        expected_start=out.expected_start.isoformat() if out.expected_start else None,
        expected_start_note=out.expected_start_note,
        expected_start_source=out.expected_start_source,
        figures=out.figures,
        wait_s=wait or 0.0,
        elapsed_s=elapsed or 0.0,
        backfill=(who == "backfill") if who else None,
        scheduler=who,
        nodes=snap.get("NodeList"),
        comment=comment,
        run_id=run_id,
        task=task,
        source="live" if snap.job else "accounting",
        commands=list(snap.commands),
    )


def _run_link(comment: str) -> tuple[str | None, str | None]:
    """(run id, task) from a ``wass:v1:run=...;task=...`` comment token, if well formed."""
    match = _COMMENT_TOKEN.search(comment)
    if not match:
        return None, None
    parts = dict(p.split("=", 1) for p in re.split(r"[;:,]", match.group("body")) if "=" in p)
    run = parts.get("run")
    return (run if run and re.fullmatch(r"[\w.-]+", run) else None), parts.get("task")
