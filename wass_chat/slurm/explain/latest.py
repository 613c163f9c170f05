"""Which job "my job" means when no id is given: the asker's latest job that ended badly.

"Why did my job crash?" names no job. ``sacct`` lists the asker's allocations of the last
:data:`DAYS` days, and the one that ended last in a bad state is the one explained (the
states are sacct's, ``CANCELLED by 0`` read as ``CANCELLED``). ``sacct --state`` is not used:
with it Slurm 22.05 returned nothing here, even for a job that had just failed.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from sim.errors import InputError
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.explain import explain_job
from wass_chat.slurm.explain.aftermath import Suggestions
from wass_chat.slurm.explain.model import JobWhyFacts
from wass_chat.slurm.formats import clock, slurm_time

DAYS = 7
ENDED_BADLY = frozenset(
    {
        "FAILED",
        "TIMEOUT",
        "OUT_OF_MEMORY",
        "NODE_FAIL",
        "CANCELLED",
        "BOOT_FAIL",
        "DEADLINE",
        "PREEMPTED",
    }
)


class EndedJob(NamedTuple):
    job_id: str
    name: str
    state: str
    end: datetime


def latest_bad_job(
    commands: SlurmCommands, user: str, now: datetime | None = None
) -> EndedJob | None:
    """``user``'s job that ended last in a bad state within :data:`DAYS` days, or ``None``."""
    since = ((now or datetime.now()) - timedelta(days=DAYS)).strftime("%Y-%m-%dT%H:%M:%S")
    argv = ["sacct", "-X", "-n", "-P", "-u", user, "-S", since, "-o", "JobID,State,End,JobName"]
    latest: EndedJob | None = None
    for line in commands.run(argv).splitlines():
        parts = line.split("|", 3)  # the name last: it may itself hold "|"
        if len(parts) != 4 or not parts[1].split() or parts[1].split()[0] not in ENDED_BADLY:
            continue
        job_id, state, ended, name = parts
        end = slurm_time(ended)
        if end is not None and (latest is None or end > latest.end):
            latest = EndedJob(job_id, name, state.split()[0], end)
    return latest


def explain_latest_bad(
    commands: SlurmCommands, user: str, suggestions: Suggestions | None = None
) -> JobWhyFacts:
    """The explanation of ``user``'s latest bad ending, its verdict saying which job that is.

    Raises :class:`~sim.errors.InputError` when there is none in :data:`DAYS` days."""
    found = latest_bad_job(commands, user)
    if found is None:
        raise InputError(
            "my job",
            [
                f"{user} has no job that failed, timed out or was killed in the last {DAYS} days; "
                "ask about one by its id (/why JOBID)"
            ],
        )
    facts = explain_job(commands, found.job_id, user=user, suggestions=suggestions)
    facts["verdict"] = (
        f"Your latest job that ended badly is {found.job_id} ({found.name}, "
        f"{found.state.lower()} at {clock(found.end)}). {facts.get('verdict', '')}"
    )
    return facts
