"""The queue model's start times against Slurm's: changed copies of pending jobs, really run.

``wass-chat whatif validate-start`` builds a queue on the live cluster (short jobs that fill
it, then pending jobs of mixed sizes, time limits and ``--nice`` values), waits one backfill
pass, and reads it (:func:`~wass_chat.slurm.queue_model.live_queue`). For each of the first
``n`` pending jobs it makes a changed copy, as the why-pending advice does (a shorter
``--time``, or fewer CPUs), predicts when every copy would start if each replaced its job
(:func:`~wass_chat.slurm.queue_model.predict`, the copies queued at a fresh job's priority,
:func:`~wass_chat.slurm.queue_model.fresh_copy`), then cancels the originals, submits the
copies and waits until Slurm has started them all. A copy is within the bound when its real
start is within :func:`~wass_chat.slurm.queue_model.tolerance` of the prediction. What
``--test-only`` said for each copy, alone, is kept beside it for comparison.

The JSON keeps what Slurm printed at the prediction (``inputs``, for
:func:`~wass_chat.slurm.queue_model.queue_from_texts`), so a miss can be replayed without Slurm.

Every job sleeps its whole time limit, so that each runs to its limit: the condition the
answer's bound states ("if every job runs to its time limit"). Its script starts a moment after
Slurm's StartTime, so it ends a moment after its EndTime (within that second on 22.05, about
the second the model gives a node to finish on later releases,
:data:`~wass_chat.slurm.queue_model.COMPLETING_S`); Slurm's own kill at the limit would come
3-16 s late. (Until 2026-12-02 they slept 3 s less: each
generation of jobs then ended 3-4 s before the model's, and after five or six generations a
job's start was decided by ends a few seconds apart in the other order: a miss the model
could not make.)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from sim.batch.config import SchedulerConfig
from sim.batch.model import BatchCluster
from sim.errors import InputError
from wass_chat.slurm.advice import JobRequest, check
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands, parse_parsable
from wass_chat.slurm.formats import slurm_time
from wass_chat.slurm.queue_model import (
    LiveQueue,
    Prediction,
    Waiting,
    fresh_copy,
    predict,
    queue_from_texts,
    queue_texts,
    tolerance,
)

JOB_NAME = "wass-start-validate"
SETTLE_S = 8.0
"""Seconds to wait after submitting, so that Slurm's backfill has placed what it can."""


@dataclass(frozen=True)
class QueueJob:
    """One job of the built queue: its size, limit (minutes) and ``--nice``."""

    cpus: int
    limit_min: int
    nice: int = 0
    nodes: int = 1
    partition: str = "debug"

    def sbatch_argv(self) -> list[str]:
        per_node = -(-self.cpus // self.nodes)
        return [
            "-J",
            JOB_NAME,
            "-p",
            self.partition,
            "-N",
            str(self.nodes),
            "--ntasks-per-node=1",
            "-c",
            str(per_node),
            "--mem=100M",
            "-t",
            str(self.limit_min),
            f"--nice={self.nice}",
            "-o",
            "/dev/null",
            "--wrap",
            f"sleep {self.limit_min * 60}",
        ]


def make_queue(n_pending: int, seed: int = 0) -> tuple[list[QueueJob], list[QueueJob]]:
    """Jobs that fill the local cluster's debug partition (n1-n4: 2, 2, 4, 8 CPUs) for one or
    two minutes, then ``n_pending`` jobs of 1-8 CPUs (a few on two nodes), 1-3 minutes, and
    ``--nice`` 0-300 so that the priority order is not the submission order."""
    rng = np.random.default_rng(seed)
    fill = [QueueJob(8, 2), QueueJob(4, 1), QueueJob(2, 2), QueueJob(2, 1)]
    pending = []
    for _ in range(n_pending):
        two = rng.random() < 0.1
        cpus = int(rng.choice([2, 4])) if two else int(rng.choice([1, 1, 2, 2, 4, 8]))
        pending.append(
            QueueJob(
                cpus=cpus,
                limit_min=int(rng.choice([1, 2, 2, 3])),
                nice=int(rng.integers(0, 4)) * 100,
                nodes=2 if two else 1,
            )
        )
    return fill, pending


def changed(job: QueueJob, k: int) -> tuple[str, QueueJob]:
    """The advice's kind of change: a shorter ``--time`` (even k) or half the CPUs (odd k),
    whichever the job allows (a 1-CPU, 1-minute job is resubmitted as it is)."""
    if (k % 2 == 0 or job.cpus <= job.nodes) and job.limit_min > 1:
        return f"--time={job.limit_min - 1}", QueueJob(
            job.cpus, job.limit_min - 1, job.nice, job.nodes, job.partition
        )
    if job.cpus > job.nodes:
        fewer = max(job.nodes, job.cpus // 2)
        return f"{fewer} CPUs", QueueJob(fewer, job.limit_min, job.nice, job.nodes, job.partition)
    return "resubmitted unchanged", job


def run_validation(
    commands: SlurmCommands | None = None,
    n_jobs: int = 20,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    timeout_s: float = 1800.0,
) -> dict[str, Any]:
    """Build the queue, predict, submit the copies, wait for their starts; the comparison."""
    commands = commands or SlurmCommands()
    commands.ping()
    say = progress or (lambda _text: None)
    fill, pending = make_queue(n_jobs + 6, seed)
    ids: list[str] = []
    try:
        for job in fill:
            ids.append(commands.sbatch(job.sbatch_argv()))
        time.sleep(2.0)
        pending_ids = [commands.sbatch(job.sbatch_argv()) for job in pending]
        ids += pending_ids
        say(f"submitted {len(fill)} jobs that fill the cluster and {len(pending)} more")
        time.sleep(SETTLE_S)
        texts = queue_texts(commands)
        queue, cluster, scheduler = queue_from_texts(texts)
        waiting = {w.job_id: w for w in queue.waiting}
        chosen = [
            (jid, job) for jid, job in zip(pending_ids, pending, strict=True) if jid in waiting
        ]
        chosen = chosen[:n_jobs]
        if len(chosen) < n_jobs:
            raise InputError(
                "validate-start",
                [f"only {len(chosen)} of the jobs still wait: the cluster is too free"],
            )
        copies = [(jid, *changed(job, k)) for k, (jid, job) in enumerate(chosen)]
        gone = {jid for jid, *_ in copies}
        alone = [_test_only(commands, copy) for _, _, copy in copies]
        extra_s = max(1, int((datetime.now() - queue.now).total_seconds()) + 1)
        models, found = predict_copies(
            queue, cluster, scheduler, [(jid, copy) for jid, _, copy in copies], extra_s
        )
        commands.cancel(sorted(gone))
        copy_ids = [commands.sbatch(copy.sbatch_argv()) for _, _, copy in copies]
        ids += copy_ids
        say(f"cancelled {len(gone)} pending jobs and submitted their changed copies")
        starts, priorities = _wait_for_starts(commands, copy_ids, time.monotonic() + timeout_s, say)
    finally:
        _cancel_ours(commands, ids)
    result = {
        "inputs": texts,
        "queue": [asdict(j) for j in pending],
        "copies": [[jid, asdict(copy)] for jid, _, copy in copies],
        "extra_after_s": extra_s,
        "per_job": [
            {
                "job": jid,
                "copy": cid,
                "change": what,
                "real_start": _iso(starts.get(cid)),
                "test_only_start": _iso(said),
                "real_priority": priorities.get(cid),
            }
            for (jid, what, _), cid, said in zip(copies, copy_ids, alone, strict=True)
        ],
    }
    return compare(result, models, found, scheduler)


def predict_copies(
    queue: LiveQueue,
    cluster: BatchCluster,
    scheduler: SchedulerConfig,
    copies: list[tuple[str, QueueJob]],
    extra_s: int,
) -> tuple[list[Waiting], Prediction]:
    """Each (pending job, its changed copy) as a fresh job ``copy-K`` replacing the job, and
    the queue model's prediction for them all, submitted ``extra_s`` after the queue's now."""
    waiting = {w.job_id: w for w in queue.waiting}
    models = [
        fresh_copy(
            waiting[jid],
            cluster,
            job_id=f"copy-{k}",
            cpus=copy.cpus,
            nodes=copy.nodes,
            limit_s=copy.limit_min * 60,
        )
        for k, (jid, copy) in enumerate(copies)
    ]
    gone = {jid for jid, _ in copies}
    without = replace(queue, waiting=tuple(w for w in queue.waiting if w.job_id not in gone))
    return models, predict(without, cluster, scheduler, models, extra_s)


def replay_validation(saved: dict[str, Any]) -> dict[str, Any]:
    """A saved run (:func:`run_validation`'s JSON) predicted again by today's queue model,
    without Slurm: the queue as Slurm printed it, the same copies, their real starts."""
    try:
        queue, cluster, scheduler = queue_from_texts(saved["inputs"])
        copies = [(str(jid), QueueJob(**copy)) for jid, copy in saved["copies"]]
        extra_s = int(saved["extra_after_s"])
        models, found = predict_copies(queue, cluster, scheduler, copies, extra_s)
        return compare(saved, models, found, scheduler)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError("validate-start --replay", [f"not a saved run: {exc!r}"]) from exc


def compare(
    result: dict[str, Any], models: list[Waiting], found: Prediction, scheduler: SchedulerConfig
) -> dict[str, Any]:
    """``result`` (inputs and per-job real starts) with the prediction of each copy
    (``models``) beside its real start: within the bound of the window the rules in doubt
    span, and of its point."""
    bound = tolerance(scheduler)
    rows, widths = [], []
    for row, copy in zip(result["per_job"], models, strict=True):
        model = copy.job_id
        predicted, real = found.starts.get(model), slurm_time(row.get("real_start") or "")
        said = slurm_time(row.get("test_only_start") or "")
        window = found.window(model)
        error = (real - predicted).total_seconds() if predicted and real else None
        test_error = (real - said).total_seconds() if said and real else None
        if window is not None:
            widths.append((window[1] - window[0]).total_seconds())
        rows.append(
            {
                **{key: row.get(key) for key in ("job", "copy", "change", "real_priority")},
                "predicted_start": _iso(predicted),
                "earliest_start": _iso(window[0] if window else None),
                "latest_start": _iso(window[1] if window else None),
                "real_start": _iso(real),
                "error_s": error,
                "within": real is not None and found.within(model, real),
                "within_point": error is not None and abs(error) <= bound,
                "test_only_start": _iso(said),
                "test_only_error_s": test_error,
                "test_only_within": test_error is not None and abs(test_error) <= bound,
                "predicted_priority": copy.priority,
            }
        )
    return {
        "jobs": len(rows),
        "within": sum(r["within"] for r in rows),
        "within_point": sum(r["within_point"] for r in rows),
        "test_only_within": sum(r["test_only_within"] for r in rows),
        "bound_s": bound,
        "bound": f"bf_interval ({scheduler.bf_interval_s} s) + bf_resolution "
        f"({scheduler.bf_resolution_s} s) around the window of the rules in doubt",
        "window_width_s": {
            "median": float(np.median(widths)) if widths else None,
            "max": max(widths, default=None),
        },
        "caveats": list(found.caveats),
        **{k: result[k] for k in ("queue", "inputs", "copies", "extra_after_s") if k in result},
        "per_job": rows,
    }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds") if moment else None


def _test_only(commands: SlurmCommands, job: QueueJob) -> datetime | None:
    request = JobRequest(
        partition=job.partition,
        ntasks=job.nodes,
        cpus_per_task=-(-job.cpus // job.nodes),
        nodes=str(job.nodes),
        time_min=job.limit_min,
        mem="100M",
    )
    return check(commands, request).start


def _wait_for_starts(
    commands: SlurmCommands, ids: list[str], deadline: float, say: Callable[[str], None]
) -> tuple[dict[str, datetime | None], dict[str, int]]:
    """Each job's real start (sacct's Start) and its priority while it waited (squeue)."""
    priorities: dict[str, int] = {}
    fields = ("JobID", "Start", "State")
    while True:
        text = commands.run(["squeue", "-h", "-t", "PD", "-j", ",".join(ids), "-o", "%i|%Q"])
        for line in text.splitlines():
            jid, _, prio = line.partition("|")
            if prio.strip().isdigit():
                priorities.setdefault(jid.strip(), int(prio))
        rows = parse_parsable(
            commands.run(["sacct", "-n", "-P", "-X", "-j", ",".join(ids), "-o", ",".join(fields)]),
            fields,
        )
        starts = {r["JobID"]: slurm_time(r["Start"]) for r in rows if r["JobID"] in ids}
        started = sum(1 for j in ids if starts.get(j) is not None)
        if started == len(ids):
            return starts, priorities
        if time.monotonic() > deadline:
            raise InputError("validate-start", [f"only {started} of {len(ids)} copies started"])
        say(f"{started} of {len(ids)} copies started")
        time.sleep(5.0)


def _cancel_ours(commands: SlurmCommands, ids: list[str]) -> None:
    with contextlib.suppress(SlurmCommandError):  # some have ended already
        commands.cancel(ids)
