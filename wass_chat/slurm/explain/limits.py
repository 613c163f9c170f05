"""Jobs held back by a limit someone set: QOS and association limits, licences, constraints.

For a limit reason the catalogue entry says which limit Slurm found in the way (its
``scontrol show assoc_mgr`` key and TRES); :func:`limit` reads that limit wherever it is set
(the job's association, its account and every parent account up to root, the job's QOS and its
partition's QOS, per user and per account) with its current use, finds the one that binds and
names it: "account physics (parent of wassgrp) has GrpTRES mem=400M; its running jobs use 300M;
this job asks 200M". Advice is checked against the limit's own value, since
``sbatch --test-only`` does not apply accounting limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from wass_chat.slurm.advice import Advice
from wass_chat.slurm.advice import cpus as _cpus
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.explain.limit_records import (
    Holder,
    association_chain,
    count_value,
    qos_holders,
    sacctmgr_qos_limits,
    tres_value,
)
from wass_chat.slurm.explain.model import Explanation
from wass_chat.slurm.explain.phrases import running_line
from wass_chat.slurm.formats import clock, is_set, memory_mb, slurm_duration, tres
from wass_chat.slurm.live import Quoted, RunningJob, Snapshot
from wass_chat.slurm.reasons import LIMIT_KINDS, LimitSpec, Reason

_SCOPE_KINDS = {
    "group": {"user", "account", "qos"},
    "job": {"user", "account", "qos"},
    "node": {"user", "account", "qos"},
    "assoc_user": {"user"},
    "user": {"qos_user"},
    "account": {"qos_account"},
}
"""Which holders a limit of each scope is read from."""


@dataclass(frozen=True)
class Finding:
    """One limit in the way: where it is set, its value, its use and what the job asks."""

    holder: Holder
    name: str
    """The limit as set with sacctmgr, with its TRES: ``GrpTRES mem``, ``MaxJobsPU``."""
    tres: str
    limit: float
    used: float | None
    ask: float
    never: bool
    """The job alone passes (or falls short of) the limit: it can never start as requested."""


def limit(snap: Snapshot, commands: SlurmCommands, entry: Reason) -> Explanation:
    """A QOS or association limit holds it back: the limit, its value, its use, the ask."""
    spec = entry.limit
    holders = _holders(snap, commands, spec.owner if spec else "both")
    found = _binding(snap, holders, spec) if spec else None
    out = Explanation("")
    out.quote(
        snap.quote("Reason"),
        snap.quote("QOS"),
        snap.quote("Account"),
        snap.quote("TRES"),
        snap.quote("TimeLimit"),
    )
    if found is None:
        shown = _all_limits(holders)
        out.verdict = (
            f"Job {snap.job_id} waits for a limit of its "
            f"{'QOS' if entry.klass == 'qos_limit' else 'association'} ({snap.reason}): "
            f"{entry.meaning}; "
            + (
                f"the limits set are {shown}."
                if shown
                else "no limit of that kind is set "
                "where wass-chat can read it (scontrol show assoc_mgr)."
            )
        )
        return out
    out.verdict = _verdict(snap, found, snap.reason)
    raw = found.holder.values.get(_key_of(found), "")
    out.quote(Quoted(found.holder.command, f"{found.holder.name} {_key_of(found)}", raw))
    per_job = LIMIT_KINDS[_key_of(found)].scope in {"job", "node"}
    mine = [] if per_job else _counted_jobs(snap, commands, found.holder)  # what others run
    out.quote(*(running_line(j) for j in mine[:3]))  # is no part of a per-job limit
    out.advice = _limit_advice(snap, found, mine)
    if found.never:
        out.expected_start_note = "none: it cannot start as it stands"
    return out


def _holders(snap: Snapshot, commands: SlurmCommands, owner: str) -> list[Holder]:
    user, account = snap.user, snap.get("Account")
    uid = snap.get("UserId").partition("(")[2].rstrip(")")
    holders: list[Holder] = []
    if owner in {"qos", "both"}:
        part_qos = snap.partition_record().get("QoS", "")
        names = [(snap.get("QOS"), "the job's QOS")]
        if is_set(part_qos) and part_qos != snap.get("QOS"):
            names.append((part_qos, f"the QOS of partition {snap.partition}"))
        holders += qos_holders(commands, names, user, uid, account)
        for holder in holders:
            if holder.kind in {"qos_user", "qos_account"}:
                suffix = "PU" if holder.kind == "qos_user" else "PA"
                for key, value in sacctmgr_qos_limits(commands, holder.name).items():
                    if key.endswith(suffix) and key not in holder.values:
                        holder.values[key] = value  # no use recorded yet: nothing runs
    if owner in {"assoc", "both"}:
        holders += association_chain(commands, user, account, snap.partition)
    return holders


def _job_ask(snap: Snapshot, spec: LimitSpec, tres_name: str) -> float:
    """What the job asks of ``tres_name`` (per node for a per-node limit, times its time
    limit in minutes for a minutes limit; 1 job for a count, minutes for a wall limit)."""
    kind = LIMIT_KINDS[spec.key]
    minutes = (slurm_duration(snap.get("TimeLimit")) or 0.0) / 60
    if not spec.tres:
        return minutes if kind.measure in {"wall", "wall_used"} else 1.0
    asked = tres(snap.get("TRES")).get(tres_name, "0")
    value = memory_mb(asked) if tres_name == "mem" else float(asked or 0)
    amount = float(value or 0.0)
    if kind.scope == "node":
        amount /= max(1.0, float(tres(snap.get("TRES")).get("node") or 1))
    if kind.measure in {"minutes", "run_minutes"}:
        amount *= minutes
    return amount


def _key_of(found: Finding) -> str:
    return next(k for k, v in LIMIT_KINDS.items() if found.name.split()[0] == v.name)


def _binding(snap: Snapshot, holders: list[Holder], spec: LimitSpec) -> Finding | None:
    """The limit of ``spec`` that keeps the job out: the nearest one its ask (with the use)
    passes; for an inherited per-job limit, the highest holder that sets the same value."""
    kind = LIMIT_KINDS[spec.key]
    readers = [
        h
        for h in holders
        if h.kind in _SCOPE_KINDS[kind.scope]
        and (h.kind.startswith("qos")) == (spec.owner == "qos")
    ]
    found: list[Finding] = []
    for holder in readers:
        raw = holder.values.get(spec.key, "")
        value = tres_value(raw, spec.tres) if spec.tres else ("", *count_value(raw))
        if value is None or value[1] is None:
            continue
        name, cap, used = value[0], float(value[1]), value[2]
        ask = _job_ask(snap, spec, name)
        label = kind.name + (f" {name}" if name else "")
        if kind.measure == "minimum":
            over, never = ask < cap, True
        elif kind.scope in {"job", "node"} or kind.measure == "wall":
            over, never = ask > cap, True
        elif kind.measure in {"running", "submitted", "wall_used"}:
            over, never = (used or 0) >= cap, False
        else:
            over, never = (used or 0) + ask > cap, ask > cap
        found.append(Finding(holder, label, name, cap, used, ask, never and over))
        if over and not (kind.scope in {"job", "node", "assoc_user"} and holder.kind == "user"):
            break
    binding = [f for f in found if _passes(f, kind.measure)]
    if not binding:
        return found[0] if found else None
    first = binding[0]
    if kind.scope in {"job", "node", "assoc_user"}:  # inherited: name where it was set
        same = [f for f in found if f.limit == first.limit]
        return same[-1] if same else first
    return first


def _passes(f: Finding, measure: str) -> bool:
    if measure == "minimum":
        return f.ask < f.limit
    if measure in {"running", "submitted", "wall_used"}:
        return (f.used or 0) >= f.limit
    if f.used is None or (f.holder.kind in {"qos"} and measure == "wall"):
        return f.ask > f.limit
    return (f.used or 0) + f.ask > f.limit


def _amount(value: float, tres_name: str, measure: str) -> str:
    number = f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.1f}"
    if measure in {"wall", "wall_used"}:
        return f"{number} min"
    if tres_name == "mem":
        number += "M"
    if measure in {"minutes", "run_minutes"}:
        return f"{number} {tres_name}-minutes" if tres_name != "mem" else f"{number}-minutes"
    return number


def _quantity(value: float, tres_name: str) -> str:
    """``1 CPU``, ``2 nodes``, ``100M of memory``."""
    if tres_name == "cpu":
        return _cpus(int(value))
    if tres_name == "node":
        return f"{int(value)} node" + ("" if value == 1 else "s")
    word = "memory" if tres_name == "mem" else tres_name
    return f"{_amount(value, tres_name, 'amount')} of {word}"


def _bare(value: float, tres_name: str) -> str:
    return _amount(value, tres_name, "amount")


def _verdict(snap: Snapshot, f: Finding, code: str) -> str:
    kind = LIMIT_KINDS[_key_of(f)]
    cap = _amount(f.limit, f.tres, kind.measure)
    limit_text = f"{f.name}={cap}" if f.tres else f"{kind.name}={cap}"
    per = {"job": " per job", "node": " per node"}.get(kind.scope, "")
    asks = _amount(f.ask, f.tres, kind.measure)
    used = _amount(f.used or 0, f.tres, kind.measure)
    whose = {
        "qos_user": f"user {snap.user}'s running jobs in it",
        "qos_account": f"account {snap.get('Account')}'s running jobs in it",
        "user": f"user {snap.user}'s running jobs in it",
    }.get(f.holder.kind, "its running jobs")
    if kind.measure == "running":
        use = f"{whose.replace('running jobs', 'jobs')} running now: {used}"
        ask = "this job would be one more"
    elif kind.measure == "submitted":
        use = f"{whose.replace('running jobs', 'jobs')} running or pending: {used}"
        ask = "this job is one of them"
    elif kind.measure == "wall_used":
        use, ask = f"its jobs have used {used} of wall time", f"this job asks {asks}"
    elif kind.scope in {"job", "node"} or kind.measure == "minimum":
        use, ask = "", f"this job asks {asks}" + (" per node" if kind.scope == "node" else "")
    elif kind.measure == "minutes":
        use, ask = f"its jobs have used {used}", f"this job asks {asks}"
    else:
        use = f"{whose} use {used}" if kind.measure == "amount" else f"{whose} hold {used}"
        ask = f"this job asks {asks}"
    parts = "; ".join(p for p in (f"{f.holder.words} has {limit_text}{per}", use, ask) if p)
    if f.never:
        alone = " (it alone passes the limit)" if kind.scope not in {"job", "node"} else ""
        return f"Job {snap.job_id} can never start as requested{alone}: {parts} ({code})."
    return f"Job {snap.job_id} waits for a limit: {parts} ({code})."


def _all_limits(holders: list[Holder]) -> str:
    shown = []
    for h in holders:
        for key, raw in h.values.items():
            if key in LIMIT_KINDS and (count_value(raw)[0] is not None or "=" in raw):
                set_items = (
                    [i for i in raw.split(",") if count_value(i.partition("=")[2])[0] is not None]
                    if "=" in raw
                    else [raw]
                )
                if set_items:
                    shown.append(f"{h.words}: {LIMIT_KINDS[key].name} {','.join(set_items)}")
    return "; ".join(shown)


def _counted_jobs(snap: Snapshot, commands: SlurmCommands, holder: Holder) -> list[RunningJob]:
    """The running jobs a limit of ``holder`` counts (as far as squeue shows them)."""
    if holder.kind.startswith("qos"):
        jobs = [j for j in snap.running if j.qos == holder.name]
        if holder.kind == "qos_user":
            jobs = [j for j in jobs if j.user == snap.user]
        return jobs
    accounts = _running_accounts(commands)
    if holder.kind == "user":
        return [
            j
            for j in snap.running
            if j.user == snap.user and accounts.get(j.job_id) == snap.get("Account")
        ]
    return (
        [j for j in snap.running if accounts.get(j.job_id) in {holder.name, snap.get("Account")}]
        if holder.name != "root"
        else list(snap.running)
    )


def _running_accounts(commands: SlurmCommands) -> dict[str, str]:
    try:
        text = commands.run(["squeue", "-h", "-t", "R", "-o", "%i|%a"])
    except Exception:
        return {}
    return dict(line.split("|", 1) for line in text.splitlines() if "|" in line)


def _limit_advice(snap: Snapshot, f: Finding, mine: list[RunningJob]) -> list[Advice]:
    """Advice checked against the limit's own value (sbatch --test-only ignores limits)."""
    kind = LIMIT_KINDS[_key_of(f)]
    advice: list[Advice] = []
    label = f"{f.name}={_amount(f.limit, f.tres, kind.measure)}"
    if kind.measure == "wall":
        text = f"ask for --time={int(f.limit)} (minutes) or less"
        advice.append(Advice(text, None, True, f"within {label}"))
    elif kind.measure == "amount" and (f.tres in {"cpu", "mem", "node"} or "gres/" in f.tres):
        room = f.limit if kind.scope in {"job", "node"} or f.never else f.limit - (f.used or 0)
        if 0 < room < f.ask:
            used = _amount(f.used or 0, f.tres, "amount")
            fits = f" next to the running jobs' {used}" if f.used and not f.never else ""
            text = f"ask for {_quantity(room, f.tres)} instead of {_bare(f.ask, f.tres)}"
            advice.append(Advice(text, None, True, f"fits {label}{fits}"))
    if not f.never and kind.measure in {"amount", "running", "run_minutes"}:
        ending = sorted((j for j in mine if j.end), key=lambda j: j.end or snap.now)
        if ending:
            first = ending[0]
            when = clock(first.end, snap.now)
            advice.append(
                Advice(
                    f"wait for job {first.job_id} to end",
                    None,
                    None,
                    f"it ends at about {when}; "
                    + ("its place" if kind.measure == "running" else "what it holds")
                    + f" under {label} is free then",
                )
            )
    return advice


def licenses(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    wanted = snap.get("Licenses")
    parts, out = [], Explanation("")
    out.quote(snap.quote("Reason"), snap.quote("Licenses"))
    for item in wanted.split(","):
        name, _, count = item.partition(":")
        record = next((r for r in snap.licenses if r.get("LicenseName") == name), {})
        holders = [j.job_id for j in snap.running if name in j.licenses]
        parts.append(
            f"licence {name}: it needs {count or 1} and {record.get('Used', '?')} of "
            f"{record.get('Total', '?')} are in use"
            + (f" (by job {', '.join(holders)})" if holders else "")
        )
        if record:
            out.quote(
                Quoted(
                    "scontrol show licenses",
                    f"{name} Used/Total",
                    f"{record.get('Used')}/{record.get('Total')}",
                )
            )
    out.verdict = f"Job {snap.job_id} waits for {'; '.join(parts) or 'licences'}."
    return out


def constraints(snap: Snapshot, commands: SlurmCommands) -> Explanation:
    features = snap.get("Features")
    offered = {n.get("NodeName", ""): n.get("ActiveFeatures", "") for n in snap.nodes}
    out = Explanation(
        f"Job {snap.job_id} can never start as submitted: no node of partition "
        f"{snap.partition} satisfies its constraints ({features or snap.get('TRES')})."
    )
    out.quote(snap.quote("Reason"), snap.quote("Features"))
    out.quote(
        *(
            Quoted("scontrol show nodes", f"{n} ActiveFeatures", f)
            for n, f in list(offered.items())[:6]
        )
    )
    return out
