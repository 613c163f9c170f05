"""Whether the cluster knows a name a person typed, and the nearest names when it does not.

Slurm answers a misspelt name with nothing: ``squeue -p debgu`` prints an empty queue and exits
0, ``squeue -u wassbbo`` too (its "Invalid user" goes to stderr). Read as a result, that is a
confident all-clear while jobs pend. So every place a person names a partition, user, account,
node, QOS or reservation asks :func:`check_name` first, and an unknown name is refused with the
nearest names the cluster reports (:class:`~sim.errors.NoSuchName`), never answered as an
empty result.

Where the known names come from (:data:`NAME_KINDS`), the cheapest source first; a source the
site lacks (``sacctmgr`` without slurmdbd, ``sacct`` without accounting) is skipped:

- partitions and nodes: ``scontrol --all show partitions`` / ``show nodes`` (``--all``: a
  hidden partition is still a real name, one a plain user's scontrol leaves out);
- users: ``squeue`` (who has jobs now), ``sacctmgr show users`` (associations), and only
  without sacctmgr, ``sacct -a`` over the last :data:`ACCOUNTING_DAYS` days; a login the system
  knows (``getpwnam``) with none of these is real too: it simply has no jobs, a true answer;
- accounts and QOS: ``squeue``, ``sacctmgr show accounts`` / ``show qos``, else ``sacct -a``;
- reservations: ``scontrol show reservations``.
"""

from __future__ import annotations

import pwd
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from sim.errors import NoSuchName, ServiceUnavailable
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands, scontrol_records

ACCOUNTING_DAYS = 30
"""How far back ``sacct`` is asked for the users, accounts and QOS that ran jobs."""


Lister = Callable[[SlurmCommands], list[str]]


@dataclass(frozen=True)
class NameSource:
    """One command that reports names of a kind."""

    names: Lister
    optional: bool = False
    """A command some sites lack (``sacctmgr`` without slurmdbd, ``sacct`` without
    accounting): its refusal means "no names from here", not an error."""
    fallback: bool = False
    """Asked only when no optional source before it listed any name: ``sacct`` reads a month
    of a site's jobs to learn what ``sacctmgr`` lists at once."""


@dataclass(frozen=True)
class NameKind:
    """One kind of name a person gives, and the cluster's sources of the names it knows."""

    kind: str
    """As the refusal says it: ``partition``, ``user``, ``QOS``..."""
    sources: tuple[NameSource, ...]
    """Each returns the names one command reports; asked in order until the name is found."""
    system_login: bool = False
    """A name the system's user database knows counts as known (a user with no jobs yet)."""


def _scontrol(what: str, key: str) -> NameSource:
    def names(commands: SlurmCommands) -> list[str]:
        out = commands.run(["scontrol", "--all", "--oneliner", "show", what])  # hidden too
        return [r[key] for r in scontrol_records(out) if r.get(key)]

    return NameSource(names)


def _squeue(field: str) -> NameSource:
    def names(commands: SlurmCommands) -> list[str]:
        return commands.run(["squeue", "-h", "-a", "-t", "all", "-o", field]).split()

    return NameSource(names)


def _sacctmgr(entity: str, field: str) -> NameSource:
    def names(commands: SlurmCommands) -> list[str]:
        out = commands.run(["sacctmgr", "-P", "-n", "show", entity, f"format={field}"])
        return [line.split("|")[0] for line in out.splitlines() if line.strip()]

    return NameSource(names, optional=True)


def _sacct(field: str) -> NameSource:
    def names(commands: SlurmCommands) -> list[str]:
        since = (datetime.now() - timedelta(days=ACCOUNTING_DAYS)).strftime("%Y-%m-%dT%H:%M:%S")
        out = commands.run(["sacct", "-a", "-X", "-n", "-P", "-S", since, "-o", field])
        return [line for line in out.splitlines() if line.strip()]

    return NameSource(names, optional=True, fallback=True)


NAME_KINDS: dict[str, NameKind] = {
    kind.kind.lower(): kind
    for kind in (
        NameKind("partition", (_scontrol("partitions", "PartitionName"),)),
        NameKind("node", (_scontrol("nodes", "NodeName"),)),
        NameKind(
            "user",
            (_squeue("%u"), _sacctmgr("users", "user"), _sacct("User")),
            system_login=True,
        ),
        NameKind("account", (_squeue("%a"), _sacctmgr("accounts", "account"), _sacct("Account"))),
        NameKind("QOS", (_squeue("%q"), _sacctmgr("qos", "name"), _sacct("QOS"))),
        NameKind("reservation", (_scontrol("reservations", "ReservationName"),)),
    )
}
"""Every kind of cluster name :func:`check_name` knows, by its lower-case kind."""


def known_names(commands: SlurmCommands, kind: str) -> list[str]:
    """Every ``kind`` name the cluster reports, from all its sources, sorted."""
    return sorted({n for names in _each_source(commands, NAME_KINDS[kind.lower()]) for n in names})


def check_name(commands: SlurmCommands, kind: str, name: str | None) -> None:
    """Raise :class:`~sim.errors.NoSuchName` unless the cluster knows every name of ``name``.

    ``name`` may be a comma-separated list (``-p debug,small``), each part checked; ``None`` or
    empty checks nothing. A controller that does not answer raises
    :class:`~sim.errors.ServiceUnavailable` as any command does."""
    if not name:
        return
    spec = NAME_KINDS[kind.lower()]
    wanted = [part.strip() for part in name.split(",") if part.strip()]
    missing = set(wanted)
    known: set[str] = set()
    for names in _each_source(commands, spec):  # lazily: the cheap sources usually suffice
        known.update(names)
        missing -= known
        if not missing:
            return
    if spec.system_login:
        missing = {m for m in missing if not _is_login(m)}
    for part in wanted:  # the first unknown one, in the order given
        if part in missing:
            raise NoSuchName(spec.kind, part, known, "on this cluster")


def _each_source(commands: SlurmCommands, spec: NameKind) -> Iterator[list[str]]:
    """Each source's names in order; a fallback only while no optional source listed any."""
    listed = False
    for source in spec.sources:
        if source.fallback and listed:
            continue
        names = _asked(commands, source)
        listed = listed or (source.optional and bool(names))
        yield names


def _asked(commands: SlurmCommands, source: NameSource) -> list[str]:
    """One source's names; none from an optional source the site lacks."""
    try:
        return [n for n in source.names(commands) if n and n not in {"(null)", "N/A"}]
    except (SlurmCommandError, ServiceUnavailable):
        if not source.optional:
            raise  # the controller itself: the caller cannot answer without it either
        return []


def _is_login(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
