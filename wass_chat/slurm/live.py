"""What Slurm itself says about one job right now, gathered from its own commands.

:func:`snapshot` asks, each through an argument list (user text is only ever an argv value):

* ``scontrol --oneliner show job ID``: state, Reason, dependency, requested TRES, partition,
  QOS, reservation, begin time, requested/excluded nodes, hold, time limit (the controller keeps
  a finished job ``MinJobAge`` seconds);
* ``squeue --start``: the scheduler's start estimate and the nodes it plans to use;
* ``scontrol show nodes`` / ``show partitions`` / ``show licenses`` / ``show reservations``:
  free CPUs and memory, drained or down nodes and their reason, partition limits;
* ``squeue -t R`` (running jobs and their ends) and ``squeue -t PD`` (the pending queue);
* ``sprio`` (priority factors) and ``sshare`` (fairshare), when the priority plugin offers them;
* ``sacct`` for jobs the controller no longer holds (only the fields this sacct offers);
* ``sdiag``: when the backfill scheduler last ran.

Everything is kept as Slurm printed it next to the command it came from, so an explanation can
quote its evidence; Slurm's time and size formats are parsed here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from sim.errors import InputError
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands, scontrol_records
from wass_chat.slurm.formats import is_set, memory_mb, set_or_empty, slurm_time, tres

ACCOUNTING_FIELDS = (
    "JobID",
    "JobIDRaw",
    "JobName",
    "User",
    "Account",
    "Partition",
    "QOS",
    "State",
    "ExitCode",
    "DerivedExitCode",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "Timelimit",
    "NCPUS",
    "NNodes",
    "ReqMem",
    "ReqTRES",
    "NodeList",
    "Flags",
    "Reason",
    "Reservation",
    "Comment",
    "MaxRSS",
    "TotalCPU",
)
"""sacct fields read for a finished job; those this sacct lacks are left out (22.05 has no
``Dependency``, and asking for an unknown field fails the whole command)."""


class UnknownJob(InputError):
    """A job id Slurm knows neither in its queue nor in its accounting."""

    kind = "job"

    def one_line(self, limit: int = 5) -> str:
        return "; ".join(self.problems[:limit])


@dataclass(frozen=True)
class Quoted:
    """One value Slurm printed, the field it was in, and the command that printed it."""

    command: str
    field: str
    value: str


@dataclass(frozen=True)
class RunningJob:
    """A running job as ``squeue -t R`` shows it (the jobs that hold resources)."""

    job_id: str
    name: str
    user: str
    partition: str
    nodes: str
    cpus: int
    end: datetime | None
    qos: str = ""
    licenses: str = ""


@dataclass
class Snapshot:
    """Everything gathered about one job, with the commands that said it."""

    job_id: str
    now: datetime
    job: dict[str, str] = field(default_factory=dict)
    """``scontrol show job`` record (empty when the controller no longer holds the job)."""
    accounting: dict[str, str] = field(default_factory=dict)
    """``sacct`` row of the allocation (finished jobs), fields as Slurm names them."""
    steps: list[dict[str, str]] = field(default_factory=list)
    """``sacct`` rows of the job's steps (MaxRSS lives there)."""
    tasks: list[dict[str, str]] = field(default_factory=list)
    """``sacct`` rows of an array's other tasks, when the id asked is the array's (``12``)."""
    start_estimate: datetime | None = None
    planned_nodes: str = ""
    nodes: list[dict[str, str]] = field(default_factory=list)
    partitions: list[dict[str, str]] = field(default_factory=list)
    running: list[RunningJob] = field(default_factory=list)
    pending: list[dict[str, str]] = field(default_factory=list)
    """The pending queue: job id, partition, priority, user, reason."""
    priority: dict[str, str] = field(default_factory=dict)
    fairshare: str = ""
    backfill_last: str = ""
    licenses: list[dict[str, str]] = field(default_factory=list)
    reservations: list[dict[str, str]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    """Every command run for this snapshot, in order."""

    # --- the job's own fields, from whichever source holds them ---------------------------
    def scontrol_field(self, key: str) -> str:
        """The name under which this release's ``scontrol show job`` printed ``key``: 22.05's
        ``TRES`` is ``ReqTRES`` from 23.02 on (next to ``AllocTRES``)."""
        return next((k for k in _SCONTROL_NAMES.get(key, (key,)) if is_set(self.job.get(k))), key)

    def get(self, key: str) -> str:
        """A field of the job: ``scontrol`` name first (as this release names it), then the
        sacct name."""
        value = self.job.get(self.scontrol_field(key))
        if is_set(value):
            return str(value)
        sacct = _SACCT_NAME.get(key, key)
        return str(self.accounting.get(sacct, "")) if is_set(self.accounting.get(sacct)) else ""

    def quote(self, key: str) -> Quoted:
        """The job's field ``key`` as evidence, with the command it came from and the field
        name that command printed."""
        field_name = self.scontrol_field(key)
        if is_set(self.job.get(field_name)):
            return Quoted(f"scontrol show job {self.job_id}", field_name, self.job[field_name])
        sacct = _SACCT_NAME.get(key, key)
        return Quoted(f"sacct -j {self.job_id}", sacct, self.accounting.get(sacct, ""))

    @property
    def state(self) -> str:
        return (self.get("JobState") or "UNKNOWN").split()[0]

    @property
    def reason(self) -> str:
        return (self.get("Reason") or "None").replace("_", " ")

    @property
    def user(self) -> str:
        return self.get("UserId").split("(")[0]

    @property
    def num_nodes(self) -> str:
        """``2`` for ``2`` and ``2-2``; ``1-4`` stays a range."""
        low, _, high = self.get("NumNodes").partition("-")
        return low if not high or high == low else f"{low}-{high}"

    @property
    def partition(self) -> str:
        return self.get("Partition")

    @property
    def cpus(self) -> int:
        """CPUs asked for (scontrol's TRES, else NumCPUs or sacct's NCPUS)."""
        return int(tres(self.get("TRES")).get("cpu") or self.get("NumCPUs") or 1)

    def peak_memory_mb(self) -> tuple[float, str]:
        """The largest ``MaxRSS`` over the job's steps, in MB, and that step (0 and '' when
        no step recorded one)."""
        peaks = [(memory_mb(s.get("MaxRSS")) or 0.0, s.get("JobID", "")) for s in self.steps]
        return max(peaks, default=(0.0, ""))

    def node(self, name: str) -> dict[str, str]:
        return next((n for n in self.nodes if n.get("NodeName") == name), {})

    def partition_record(self, name: str | None = None) -> dict[str, str]:
        name = name or self.partition
        return next((p for p in self.partitions if p.get("PartitionName") == name), {})


_SCONTROL_NAMES = {"TRES": ("TRES", "ReqTRES")}
"""Fields ``scontrol show job`` renamed between releases: the names to try, oldest first."""

_SACCT_NAME = {
    "TRES": "ReqTRES",
    "JobState": "State",
    "UserId": "User",
    "NumCPUs": "NCPUS",
    "NumNodes": "NNodes",
    "TimeLimit": "Timelimit",
    "SubmitTime": "Submit",
    "EligibleTime": "Eligible",
    "StartTime": "Start",
    "EndTime": "End",
    "RunTime": "Elapsed",
    "NodeList": "NodeList",
    "JobName": "JobName",
    "Account": "Account",
    "QOS": "QOS",
    "Partition": "Partition",
    "ExitCode": "ExitCode",
    "Reason": "Reason",
    "Reservation": "Reservation",
    "Comment": "Comment",
}


def nearest_job_ids(typed: str, queued: list[str], count: int = 3) -> list[str]:
    """Queued ids one typing slip from ``typed`` (a digit added, dropped, changed, or two
    swapped), nearest in number first. Job ids are numbers, not words: string similarity
    offered 321 for 987654321 (both end in 321)."""

    def one_slip(a: str, b: str) -> bool:
        if a == b or abs(len(a) - len(b)) > 1:
            return False
        if len(a) == len(b):
            differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
            swapped = len(differ) == 2 and differ[1] == differ[0] + 1
            return len(differ) == 1 or (
                swapped and a[differ[0]] == b[differ[1]] and a[differ[1]] == b[differ[0]]
            )
        short, long = sorted((a, b), key=len)
        return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))

    near = [q for q in dict.fromkeys(queued) if q.isdigit() and one_slip(typed, q)]
    if typed.isdigit():
        near.sort(key=lambda q: abs(int(q) - int(typed)))
    return near[:count]


def snapshot(commands: SlurmCommands, job_id: str, now: datetime | None = None) -> Snapshot:
    """Gather what Slurm says about ``job_id``; raise :class:`UnknownJob` if it knows nothing.

    An unreachable controller raises :class:`~sim.errors.ServiceUnavailable` from the first
    command. Optional sources (sprio without a multifactor plugin, sdiag) are skipped quietly.
    """
    snap = Snapshot(job_id=job_id, now=now or datetime.now())
    run = _Recorder(commands, snap)
    snap.job = _job_record(run, job_id)
    if not snap.job or snap.state not in {"PENDING", "RUNNING", "SUSPENDED", "CONFIGURING"}:
        snap.accounting, snap.steps, snap.tasks = _accounting(run, job_id)
    if not snap.job and not snap.accounting:
        problem = f"Slurm knows no job {job_id}: it is neither queued nor in accounting"
        if near := nearest_job_ids(job_id, commands.run(["squeue", "-h", "-o", "%i"]).split()):
            problem += f"; the nearest queued: {', '.join(near)}"
        raise UnknownJob(job_id, [problem])
    snap.nodes = _records(run.text(["scontrol", "--oneliner", "show", "nodes"]))
    snap.partitions = _records(run.text(["scontrol", "--oneliner", "show", "partitions"]))
    if snap.state in {"PENDING", "RUNNING", "SUSPENDED", "CONFIGURING"}:
        _live_queue(run, snap)
    return snap


class _Recorder:
    """Runs commands for a snapshot and notes each one (the evidence names its command)."""

    def __init__(self, commands: SlurmCommands, snap: Snapshot) -> None:
        self.commands = commands
        self.snap = snap

    def text(self, argv: list[str]) -> str:
        self.snap.commands.append(" ".join(argv))
        return self.commands.run(argv)

    def optional(self, argv: list[str]) -> str:
        """A source some sites lack (sprio needs priority/multifactor): '' when refused."""
        try:
            return self.text(argv)
        except SlurmCommandError:
            return ""


def _records(text: str) -> list[dict[str, str]]:
    return scontrol_records(text)


def _job_record(run: _Recorder, job_id: str) -> dict[str, str]:
    try:
        records = _records(run.text(["scontrol", "--oneliner", "show", "job", job_id]))
    except SlurmCommandError as exc:
        if "Invalid job id" in exc.one_line() or re.search(r"\bJob \S+ not found", exc.one_line()):
            return {}  # the second: an array task the controller no longer holds
        raise
    return next((r for r in records if _is_job(r, job_id)), records[0] if records else {})


def _is_job(record: dict[str, str], job_id: str) -> bool:
    """``42`` is JobId 42; ``42_3`` is task 3 of array 42 (scontrol gives each task its own
    JobId, with ArrayJobId and ArrayTaskId)."""
    array, _, task = job_id.partition("_")
    if task:
        return record.get("ArrayJobId") == array and record.get("ArrayTaskId") == task
    return record.get("JobId") == job_id


def _accounting(
    run: _Recorder, job_id: str
) -> tuple[dict[str, str], list[dict[str, str]], list[dict[str, str]]]:
    """The allocation's sacct row, its steps' rows and an array's other tasks' rows, with the
    fields this sacct offers."""
    offered = {w.lower() for w in run.text(["sacct", "--helpformat"]).split()}
    fields = [f for f in ACCOUNTING_FIELDS if f.lower() in offered]
    text = run.text(["sacct", "-P", "-n", "-j", job_id, "-o", ",".join(fields)])
    rows = []
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) >= len(fields):
            head = parts[: len(fields) - 1]
            rows.append(dict(zip(fields, [*head, "|".join(parts[len(fields) - 1 :])], strict=True)))
    allocation = next(
        (r for r in rows if r.get("JobID") == job_id),
        next((r for r in rows if _raw_allocation(r, job_id)), rows[0] if rows else {}),
    )
    own = allocation.get("JobID", "")
    steps = [r for r in rows if r is not allocation and r.get("JobID", "").split(".")[0] == own]
    tasks = [
        r
        for r in rows
        if r is not allocation and "_" in r.get("JobID", "") and "." not in r.get("JobID", "")
    ]
    return allocation, steps, tasks


def _raw_allocation(row: dict[str, str], job_id: str) -> bool:
    """Whether ``row`` is the allocation Slurm numbers ``job_id``: ``sacct -j 12`` of an array
    lists every task (``12_1``, ``12_[2-3%1]``), and the one scontrol calls JobId=12 is the
    row whose JobIDRaw is 12 (its tasks not yet started), not the first task's."""
    return row.get("JobIDRaw") == job_id and "." not in row.get("JobID", "")


LICENCES_ARGV = ("scontrol", "--oneliner", "show", "licenses")
"""The cluster's licences (slurm.conf ``Licenses=``), one record each."""

RUNNING_ARGV = ["squeue", "-h", "-t", "R", "-o", "%i|%u|%P|%N|%C|%e|%q|%W|%j"]
"""The running jobs, in the form :func:`parse_running` reads (the name last: it may hold ``|``)."""


def parse_running(text: str) -> list[RunningJob]:
    """The running jobs in ``squeue`` output of :data:`RUNNING_ARGV`."""
    jobs = []
    for line in text.splitlines():
        parts = line.split("|", 8)
        if len(parts) == 9:
            job, user, part, nodes, cpus, end, qos, licenses, name = parts
            cpu_count = int(cpus) if cpus.isdigit() else 0
            jobs.append(
                RunningJob(
                    job,
                    name,
                    user,
                    part,
                    nodes,
                    cpu_count,
                    slurm_time(end),
                    qos,
                    set_or_empty(licenses),
                )
            )
    return jobs


def _live_queue(run: _Recorder, snap: Snapshot) -> None:
    """The scheduler's view: start estimate, running and pending jobs, priority, backfill."""
    start = run.text(["squeue", "-h", "--start", "-j", snap.job_id, "-o", "%i|%S|%Y"])
    for line in start.splitlines():
        job, _, rest = line.partition("|")
        if job.strip() == snap.job_id:
            when, _, planned = rest.partition("|")
            snap.start_estimate = slurm_time(when)
            snap.planned_nodes = planned if is_set(planned) else ""
    snap.running = parse_running(run.text(RUNNING_ARGV))
    for line in run.text(["squeue", "-h", "-t", "PD", "-o", "%i|%P|%Q|%u|%r"]).splitlines():
        parts = line.split("|")
        if len(parts) == 5:
            keys = ("job_id", "partition", "priority", "user", "reason")
            snap.pending.append(dict(zip(keys, parts, strict=True)))
    if snap.state != "PENDING":
        return
    prio = run.optional(["sprio", "-h", "-j", snap.job_id, "-o", "%i|%Y|%A|%F|%J|%P|%Q"])
    for line in prio.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 7 and parts[0] == snap.job_id:
            factors = ("job", "priority", "age", "fairshare", "jobsize", "partition", "qos")
            snap.priority = dict(zip(factors, parts, strict=True))
    user, account = snap.user, snap.get("Account")
    if user:
        share = run.optional(["sshare", "-h", "-P", "-u", user, "-o", "Account,User,FairShare"])
        for line in share.splitlines():
            acct, who, value = ([*line.split("|"), "", ""])[:3]
            if who.strip() == user and acct.strip() == account:
                snap.fairshare = value.strip()
    if "Licenses" in snap.job and is_set(snap.job["Licenses"]):
        snap.licenses = _records(run.text(list(LICENCES_ARGV)))
    if is_set(snap.job.get("Reservation")) or snap.reason.startswith("ReqNodeNotAvail"):
        snap.reservations = _records(
            run.optional(["scontrol", "--oneliner", "show", "reservations"])
        )
    diag = run.optional(["sdiag"])
    if match := re.search(r"Backfilling stats.*?Last cycle when:\s*(.+?)\s*\(", diag, re.S):
        snap.backfill_last = match.group(1)
