"""The Slurm backend: the standard commands, run with argument lists, read as parsable text.

This works with every Slurm version (no library ABI to match; pyslurm is not used, see
:mod:`wass_chat.slurm.backend`). Before the first command, :func:`~wass_chat.slurm.availability.
ensure_slurm` checks cheaply that the command, the configuration, a known release and (for
slurmctld's commands) the controller are there, and names what is missing in one line. Every call
has a timeout; a missing binary, an unreachable controller or a timeout raises
:class:`~sim.errors.ServiceUnavailable` with a one-line message. Commands that Slurm answers
with an error about the request itself (a bad node name, say) raise :class:`SlurmCommandError`.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from sim.errors import InputError, ServiceUnavailable
from wass_chat.slurm.availability import ensure_slurm

SACCT_FIELDS = (
    "JobID",
    "JobName",
    "State",
    "ExitCode",
    "NodeList",
    "Submit",
    "Start",
    "End",
    "Elapsed",
    "AllocCPUS",
    "Comment",
    "Reason",
)

_UNREACHABLE = re.compile(
    r"Unable to contact slurm controller|Connection refused|Socket timed out|"
    r"Could not establish a configuration source|Munge|munge|slurmdbd|Zero Bytes were transmitted"
)


class SlurmCommandError(InputError):
    """Slurm refused a request (sbatch rejected the job, scancel an unknown id...)."""

    kind = "Slurm request"


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One job as ``squeue`` shows it right now."""

    job_id: str
    name: str
    state: str
    nodes: str
    reason: str


@dataclass(frozen=True, slots=True)
class NamedJob:
    """A job found by its name (:meth:`SlurmCommands.jobs_named`)."""

    job_id: str
    name: str
    state: str
    comment: str
    """Its ``--comment`` (sacct has it only with ``AccountingStoreFlags=job_comment``)."""
    live: bool
    """squeue shows it (pending, running, or ended less than ``MinJobAge`` ago)."""


class SlurmCommands:
    """Runs sbatch, scontrol, squeue, sacct and scancel; each method returns parsed output."""

    name = "commands"

    def __init__(self, timeout: float = 30.0) -> None:
        self.timeout = timeout
        """Seconds one command may take once the check passed (a loaded controller is slow)."""

    def run(self, argv: Sequence[str]) -> str:
        """Run one Slurm command (never through a shell) and return its standard output."""
        done = self.completed(argv)
        if done.returncode != 0:
            message = " ".join((done.stderr or done.stdout).split()) or f"exit {done.returncode}"
            raise SlurmCommandError(argv[0], [message])
        return done.stdout

    def completed(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """Run one Slurm command and return it whole (``sbatch --test-only`` answers on
        stderr); only a missing binary or configuration, a timeout or an unreachable daemon
        raise (:class:`~wass_chat.slurm.availability.SlurmAway` from the check before it)."""
        ensure_slurm(argv[0])
        try:
            done = subprocess.run(
                list(argv), capture_output=True, text=True, timeout=self.timeout, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise ServiceUnavailable(
                f"Slurm is unreachable: {argv[0]} did not answer within {self.timeout:.0f} s"
            ) from exc
        if done.returncode != 0:
            message = " ".join((done.stderr or done.stdout).split()) or f"exit {done.returncode}"
            if _UNREACHABLE.search(message):
                cause = unreachable_cause(message)
                raise ServiceUnavailable(f"Slurm is unreachable ({argv[0]}): {cause}")
        return done

    # --- queries ----------------------------------------------------------------------------
    def ping(self) -> None:
        """Raise ServiceUnavailable unless the controller answers."""
        out = self.run(["scontrol", "ping"])
        if "UP" not in out:
            raise ServiceUnavailable(f"Slurm controller is down: {' '.join(out.split())}")

    def show_nodes(self) -> list[dict[str, str]]:
        """``scontrol show nodes`` as one ``key -> value`` dict per node (``--oneliner``)."""
        return scontrol_records(self.run(["scontrol", "--oneliner", "show", "nodes"]))

    def show_partitions(self) -> list[dict[str, str]]:
        return scontrol_records(self.run(["scontrol", "--oneliner", "show", "partitions"]))

    def show_jobs(self, job_ids: Sequence[str]) -> dict[str, dict[str, str]]:
        """``scontrol show job`` records of the jobs among ``job_ids`` the controller still holds
        (finished jobs stay ``MinJobAge`` seconds), keyed by JobId."""
        if not job_ids:
            return {}
        wanted = set(job_ids)
        records = scontrol_records(self.run(["scontrol", "--oneliner", "show", "job"]))
        return {r["JobId"]: r for r in records if r.get("JobId") in wanted}

    def queue(self, job_ids: Sequence[str]) -> dict[str, QueueEntry]:
        """The jobs among ``job_ids`` still known to the controller (pending, running...)."""
        if not job_ids:
            return {}
        out = self.run(  # the name last: it may itself hold "|"
            ["squeue", "-h", "--states=all", "-j", ",".join(job_ids), "-o", "%i|%T|%N|%r|%j"]
        )
        entries = {}
        for line in out.splitlines():
            parts = line.split("|", 4)
            if len(parts) == 5:
                job_id, state, nodes, reason, name = parts
                entries[job_id] = QueueEntry(job_id, name, state, nodes, reason)
        return entries

    def accounting(
        self, job_ids: Sequence[str], fields: Sequence[str] = SACCT_FIELDS
    ) -> dict[str, dict[str, str]]:
        """``sacct -P`` rows of the allocations (job steps left out), keyed by JobID."""
        if not job_ids:
            return {}
        out = self.run(["sacct", "-P", "-n", "-X", "-j", ",".join(job_ids), "-o", ",".join(fields)])
        return {row["JobID"]: row for row in parse_parsable(out, fields)}

    def jobs_named(self, names: Sequence[str], since: str) -> list[NamedJob]:
        """Every job called one of ``names``: those the controller holds (squeue) and those
        accounting has since ``since`` (sacct ``-S``; finished jobs squeue no longer shows),
        each job once, squeue's state first. Finds a run's jobs when its record may not list
        them all (:mod:`wass_chat.slurm.recovery`)."""
        if not names:
            return []
        wanted = ",".join(names)
        out = self.run(["squeue", "-h", "--states=all", f"--name={wanted}", "-o", "%i|%T|%k|%j"])
        found: dict[str, NamedJob] = {}
        for line in out.splitlines():
            parts = line.split("|", 2)  # the comment may hold "|"; a name of ours does not
            if len(parts) == 3 and "|" in parts[2]:
                comment, name = parts[2].rsplit("|", 1)
                found[parts[0]] = NamedJob(parts[0], name, parts[1], comment, live=True)
        fields = ("JobID", "State", "JobName", "Comment")
        rows = self.run(
            [
                "sacct",
                "-P",
                "-n",
                "-X",
                "-a",
                f"--name={wanted}",
                "-S",
                since,
                "-o",
                ",".join(fields),
            ]
        )
        for row in parse_parsable(rows, fields):
            if row["JobID"] not in found and row["JobID"].isdigit():
                state = row["State"].split()[0] if row["State"] else ""
                found[row["JobID"]] = NamedJob(
                    row["JobID"], row["JobName"], state, row["Comment"], live=False
                )
        return sorted(found.values(), key=lambda j: int(j.job_id))

    # --- actions ----------------------------------------------------------------------------
    def sbatch(self, argv: Sequence[str]) -> str:
        """Submit with ``sbatch --parsable ARGV``; returns the job id."""
        out = self.run(["sbatch", "--parsable", *argv]).strip()
        job_id = out.split(";")[0]
        if not job_id.isdigit():
            raise SlurmCommandError("sbatch", [f"unexpected answer {out!r}"])
        return job_id

    def cancel(self, job_ids: Sequence[str]) -> None:
        if job_ids:
            self.run(["scancel", *job_ids])


_CAUSES = (
    (
        re.compile(
            r"persistent connection to host:(?P<where>\S+?):? .*?(?P<why>Connection refused|"
            r"timed out)|Problem talking to the database",
            re.I,
        ),
        "the accounting daemon (slurmdbd) does not answer{at}",
    ),
    (
        re.compile(
            r"DNS SRV|dns_srv|Could not establish a configuration source|fetch_config", re.I
        ),
        "no slurm.conf here (set SLURM_CONF) and no DNS SRV record naming a controller",
    ),
    (
        re.compile(r"Unable to contact slurm controller|Connection refused|Socket timed out"),
        "slurmctld does not answer at the address in slurm.conf",
    ),
    (re.compile(r"[Mm]unge"), "munge authentication failed (is munged running?)"),
    (re.compile(r"slurmdbd"), "the accounting daemon (slurmdbd) does not answer"),
)


def unreachable_cause(message: str, limit: int = 160) -> str:
    """Why Slurm is unreachable, in a few words, instead of its raw multi-line error."""
    for pattern, cause in _CAUSES:
        if found := pattern.search(message):
            where = found.groupdict().get("where") or ""
            if not where and (host := re.search(r"connection to host:(\S+?):? ", message)):
                where = host.group(1)
            return cause.format(at=f" at {where}" if where else "")
    head = re.split(r"(?<=[.!])\s", message, maxsplit=1)[0]
    return head if len(head) <= limit else head[: limit - 3] + "..."


def scontrol_lines(text: str) -> list[str]:
    """``scontrol --oneliner show ...`` output, one line per record.

    ``--oneliner`` does not make a record one line: a value holding a newline is printed as is
    (a job submitted with a multi-line ``--wrap`` has it in ``SubmitLine`` and ``Command``, and
    26.05 puts ``Comment`` and ``StdOut`` after them). A record starts with the key every record
    starts with (the first line's: ``JobId``, ``NodeName``...); any other line continues the
    record before it. A line of a crafted ``--wrap`` that itself starts ``JobId=`` still reads
    as a record of its own: this text cannot tell them apart (as before, when every line was
    one), so a caller looking up one job takes the record ``scontrol show job ID`` gives first.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    first_key = lines[0].split("=", 1)[0] + "="
    records: list[str] = []
    for line in lines:
        if line.startswith(first_key) or not records:
            records.append(line)
        else:
            records[-1] += " " + line
    return records


def scontrol_records(text: str) -> list[dict[str, str]]:
    """Every record of ``scontrol --oneliner show ...`` output (:func:`scontrol_lines`) as a
    dict (:func:`parse_scontrol_record`)."""
    return [parse_scontrol_record(line) for line in scontrol_lines(text)]


def parse_scontrol_record(line: str) -> dict[str, str]:
    """``Key=Value Key=Value ...`` (one ``--oneliner`` record) as a dict.

    Values may contain spaces (``OS=Linux 6.1 #1 SMP``, ``Reason=Not responding [root@...]``):
    a token without ``=`` belongs to the value before it.
    """
    record: dict[str, str] = {}
    key = None
    for token in line.split():
        name, sep, value = token.partition("=")
        if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9_:/]*", name):
            key = name
            record[key] = value
        elif key is not None:
            record[key] += " " + token
    return record


def parse_parsable(text: str, fields: Sequence[str]) -> list[dict[str, str]]:
    """Rows of ``-P`` output (``|``-separated, no header); lines of the wrong width skipped.

    The last field (Reason, Comment) may itself contain ``|``: extra pieces join into it.
    """
    rows = []
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < len(fields):
            continue
        head = parts[: len(fields) - 1]
        tail = "|".join(parts[len(fields) - 1 :])
        rows.append(dict(zip(fields, [*head, tail], strict=True)))
    return rows
