"""The QOS and association limits that apply to a job, with their current use.

``scontrol show assoc_mgr`` prints, for every association and QOS, each limit next to its
current use: ``GrpTRES=cpu=N(1),mem=400(300)`` (no cpu cap, 1 in use; a 400 MB memory cap, 300
in use), ``GrpJobs=3(1)``, ``MaxWallPJ=5``, and for a QOS its per-account and per-user records
(``MaxTRESPU=mem=300(100)``). :func:`limit_holders` reads the job's association, its account and
every parent account up to root, and the job's and its partition's QOS, as
:class:`Holder` records; :func:`tres_value` and :func:`count_value` read one limit from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands

_VALUE = re.compile(r"^(?P<limit>[^()]*)(?:\((?P<used>[^()]*)\))?$")


@dataclass
class Holder:
    """One association or QOS (or a QOS's per-user or per-account record) and its limits."""

    kind: str
    """``user`` (the job's own association), ``account``, ``qos``, ``qos_user``, ``qos_account``."""
    name: str
    """The account, QOS or user name."""
    words: str
    """How an answer names it: "account physics (parent of wassgrp)"."""
    values: dict[str, str] = field(default_factory=dict)
    """assoc_mgr key -> raw value (``GrpTRES`` -> ``cpu=N(1),mem=400(300)``)."""
    command: str = ""


def _number(text: str) -> float | None:
    text = text.strip()
    if not text or text in {"N", "INFINITE", "UNLIMITED"}:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def count_value(raw: str) -> tuple[float | None, float | None]:
    """``3(1)`` -> (3, 1); ``N(1)`` -> (None, 1); ``5`` -> (5, None); ``''`` -> (None, None)."""
    match = _VALUE.match(raw.strip())
    if not match:
        return None, None
    return _number(match.group("limit")), _number(match.group("used") or "")


def tres_value(raw: str, tres: str) -> tuple[str, float, float | None] | None:
    """The (TRES name, limit, use) of ``tres`` in a list such as ``cpu=N(1),mem=400(300)``.

    ``tres`` is a TRES (``mem``) or a family (``gres``, ``license``, ``bb``, ``unknown``): the
    first member of it with a limit set. ``None`` when no such TRES has a limit."""
    families = {"gres": "gres/", "license": "license/", "bb": "bb/"}
    known = ("cpu", "mem", "node", "billing", "energy", "gres/", "license/", "bb/")
    for item in raw.split(","):
        name, _, value = item.partition("=")
        if tres in families:
            hit = name.startswith(families[tres])
        elif tres == "unknown":
            hit = not name.startswith(known)
        else:
            hit = name == tres
        if hit:
            limit, used = count_value(value)
            if limit is not None:
                return name, limit, used
    return None


Record = dict[str, Any]
"""One assoc_mgr record: keys as printed (str values), ``accounts``/``users`` sub-records."""


def parse_assoc_mgr(text: str) -> list[Record]:
    """Records of ``scontrol show assoc_mgr``: keys as printed, a QOS's ``Account Limits`` and
    ``User Limits`` under ``accounts`` and ``users`` (keyed as printed: an account's name; a
    user's uid on 22.05, ``name(uid)`` on 24.11 and 26.05)."""
    records: list[Record] = []
    current: Record | None = None
    section, sub = "", ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("ClusterName=", "QOS=")):
            current, section, sub = {}, "", ""
            records.append(current)
        if current is None or not stripped:
            continue
        if stripped in {"Account Limits", "User Limits"}:
            section = "accounts" if stripped.startswith("Account") else "users"
            current[section] = {}
            continue
        if section and "=" not in stripped:
            sub = stripped
            current[section][sub] = {}
            continue
        pairs = dict(p.split("=", 1) for p in stripped.split() if "=" in p)
        if section and sub:
            current[section][sub].update(pairs)
        else:
            current.update(pairs)
    return records


def _assoc_mgr(commands: SlurmCommands, argv: list[str]) -> list[Record]:
    try:
        return parse_assoc_mgr(commands.run(["scontrol", "show", "assoc_mgr", *argv]))
    except SlurmCommandError:
        return []


def _name(value: object) -> str:
    """``physics(3)`` -> ``physics``; ``wassalice(1001)`` -> ``wassalice``."""
    return str(value or "").split("(")[0]


def _flat(record: Record) -> dict[str, str]:
    return {k: v for k, v in record.items() if isinstance(v, str)}


def association_chain(
    commands: SlurmCommands, user: str, account: str, partition: str
) -> list[Holder]:
    """The job's association, then its account and each parent account up to root."""
    chain: list[Holder] = []
    below, name, seen = "", account, set[str]()
    while name and name not in seen and len(seen) < 12:
        seen.add(name)
        argv = ["flags=assoc", f"users={user}", f"accounts={name}"]
        command = "scontrol show assoc_mgr " + " ".join(argv)
        records = _assoc_mgr(commands, argv)
        if not chain:
            own = [
                r
                for r in records
                if _name(r.get("UserName")) == user and _name(r.get("Account")) == name
            ]
            own.sort(key=lambda r: r.get("Partition") != partition)  # a partition's own first
            if own and own[0].get("Partition") in {"", partition}:
                words = f"the association of user {user} in account {name}"
                chain.append(Holder("user", user, words, _flat(own[0]), command))
        acct = next(
            (
                r
                for r in records
                if _name(r.get("Account")) == name and not _name(r.get("UserName"))
            ),
            None,
        )
        if acct is None:
            break
        if not below:
            words = f"account {name} (the account of user {user}'s association)"
        elif name == "root":
            words = "account root (the top of the account tree)"
        else:
            words = f"account {name} (parent of {below})"
        chain.append(Holder("account", name, words, _flat(acct), command))
        below, name = name, _name(acct.get("ParentAccount"))
    return chain


def qos_holders(
    commands: SlurmCommands, names: list[tuple[str, str]], user: str, uid: str, account: str
) -> list[Holder]:
    """The QOS records (job's QOS, partition's QOS), each with the user's and account's own."""
    wanted = [n for n, _ in names if n]
    if not wanted:
        return []
    argv = ["flags=qos", "qos=" + ",".join(wanted)]
    command = "scontrol show assoc_mgr " + " ".join(argv)
    records = {_name(r.get("QOS")): r for r in _assoc_mgr(commands, argv)}
    holders = []
    for name, role in names:
        record = records.get(name)
        if record is None:
            continue
        holders.append(Holder("qos", name, f"QOS {name} ({role})", _flat(record), command))
        users, accounts = record.get("users") or {}, record.get("accounts") or {}
        holders.append(
            Holder(
                "qos_user",
                name,
                f"QOS {name} (per user, for {user})",
                own_record(users, user, uid),
                command,
            )
        )
        holders.append(
            Holder(
                "qos_account",
                name,
                f"QOS {name} (per account, for {account})",
                own_record(accounts, account, ""),
                command,
            )
        )
    return holders


def own_record(records: dict[str, dict[str, str]], name: str, uid: str) -> dict[str, str]:
    """One user's (or account's) record among a QOS's ``User Limits`` (``Account Limits``).

    Slurm 22.05 keys a user by uid (``1001``); 24.11 and 26.05 by name and uid
    (``wassalice(1001)``); accounts are keyed by name."""
    for key, values in records.items():
        head, _, rest = key.partition("(")
        if head == name or (uid and uid in {head, rest.rstrip(")")}):
            return dict(values)
    return {}


def sacctmgr_qos_limits(commands: SlurmCommands, name: str) -> dict[str, str]:
    """A QOS's per-user and per-account limits as sacctmgr shows them (assoc_mgr lists them
    only for users and accounts that already run jobs in the QOS)."""
    fields = ("MaxTRESPU", "MaxJobsPU", "MaxSubmitPU", "MaxTRESPA", "MaxJobsPA", "MaxSubmitPA")
    try:
        text = commands.run(
            ["sacctmgr", "-n", "-P", "show", "qos", name, "format=" + ",".join(fields)]
        )
    except SlurmCommandError:
        return {}
    row = (text.strip().splitlines() or [""])[0].split("|")
    keys = (
        "MaxTRESPU",
        "MaxJobsPU",
        "MaxSubmitJobsPU",
        "MaxTRESPA",
        "MaxJobsPA",
        "MaxSubmitJobsPA",
    )
    return {k: v for k, v in zip(keys, row, strict=False) if v}
