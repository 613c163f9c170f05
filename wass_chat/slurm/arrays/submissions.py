"""The record of an array's submissions (``submissions.json`` in its directory) and the
``--array`` spelling of a set of tasks: what every other part of the arrays reads to know which
job ran which task last."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sim.atomic_files import write_atomic

SUBMISSIONS = "submissions.json"


@dataclass(frozen=True, slots=True)
class Submission:
    job_id: str
    tasks: tuple[int, ...]


def task_list(tasks: Iterable[int]) -> str:
    """``0-3,5,7-8``: the ``--array`` spelling of ``tasks``."""
    ordered = sorted(set(tasks))
    ranges: list[list[int]] = []
    for t in ordered:
        if ranges and t == ranges[-1][1] + 1:
            ranges[-1][1] = t
        else:
            ranges.append([t, t])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges)


def submissions(directory: Path) -> list[Submission]:
    path = directory / SUBMISSIONS
    if not path.exists():
        return []
    return [Submission(s["job_id"], tuple(s["tasks"])) for s in json.loads(path.read_text())]


def record(directory: Path, submission: Submission) -> None:
    listed = [{"job_id": s.job_id, "tasks": list(s.tasks)} for s in submissions(directory)]
    listed.append({"job_id": submission.job_id, "tasks": list(submission.tasks)})
    write_atomic(directory / SUBMISSIONS, json.dumps(listed, indent=1))


def latest_job(directory: Path) -> dict[int, str]:
    """Each submitted task's most recent array job id."""
    return {t: s.job_id for s in submissions(directory) for t in s.tasks}
