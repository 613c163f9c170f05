"""Jobs held back by a limit someone set: QOS and association limits (sacctmgr), licences,
constraints no node satisfies. Advice here is checked against the limit's own value, since
``sbatch --test-only`` does not apply accounting limits.
"""

from __future__ import annotations

import re

from wass_chat.slurm.advice import Advice
from wass_chat.slurm.advice import cpus as _cpus
from wass_chat.slurm.commands import SlurmCommandError, SlurmCommands, parse_parsable
from wass_chat.slurm.explain.model import Explanation
from wass_chat.slurm.explain.phrases import running_line
from wass_chat.slurm.formats import clock
from wass_chat.slurm.live import Quoted, RunningJob, Snapshot


def _sacctmgr(
    commands: SlurmCommands, argv: list[str], fields: tuple[str, ...]
) -> list[dict[str, str]]:
    try:
        text = commands.run(["sacctmgr", "-n", "-P", *argv, "format=" + ",".join(fields)])
    except SlurmCommandError:
        return []
    return parse_parsable(text, fields)


def limit(snap: Snapshot, commands: SlurmCommands, qos: bool) -> Explanation:
    """A QOS or association limit (set with sacctmgr) holds it back."""
    code, user, account = snap.reason, snap.user, snap.get("Account")
    mine = [j for j in snap.running if j.user == user]
    if qos:
        name = snap.get("QOS")
        fields = (
            "Name",
            "MaxJobsPU",
            "MaxSubmitPU",
            "MaxTRESPU",
            "MaxTRES",
            "MaxWall",
            "GrpTRES",
            "GrpJobs",
        )
        rows = _sacctmgr(commands, ["show", "qos", name], fields)
        mine = [j for j in mine if j.qos == name]
        subject, command = f"QOS {name}", f"sacctmgr show qos {name}"
    else:
        fields = (
            "Account",
            "User",
            "GrpTRES",
            "GrpJobs",
            "MaxJobs",
            "MaxTRES",
            "MaxWall",
            "MaxSubmit",
        )
        rows = _sacctmgr(commands, ["show", "assoc", f"user={user}", f"account={account}"], fields)
        subject = f"the association of user {user} in account {account}"
        command = f"sacctmgr show assoc user={user} account={account}"
    limits = {
        k: v
        for k, v in (rows[0] if rows else {}).items()
        if v and k not in {"Name", "Account", "User"}
    }
    shown = ", ".join(f"{k}={v}" for k, v in limits.items()) or "a limit sacctmgr did not show"
    running = (
        f"; {len(mine)} of its jobs run now, holding {_cpus(sum(j.cpus for j in mine))}"
        if mine
        else "; none of its jobs run now"
    )
    out = Explanation(
        f"Job {snap.job_id} waits for a limit of {subject} ({code}): {shown}"
        f"{running}, and it asks for {_cpus(snap.cpus)}."
    )
    out.quote(snap.quote("Reason"), snap.quote("QOS" if qos else "Account"), snap.quote("TRES"))
    out.quote(*(Quoted(command, k, v) for k, v in limits.items()))
    out.quote(*(running_line(j) for j in mine[:3]))
    out.advice = _limit_advice(snap, limits, mine)
    return out


def _limit_advice(snap: Snapshot, limits: dict[str, str], mine: list[RunningJob]) -> list[Advice]:
    """Advice checked against the limit's own value (sbatch --test-only ignores limits)."""
    advice = []
    cpu_cap = next(
        (
            int(m.group(1))
            for k in ("GrpTRES", "MaxTRESPU", "MaxTRES")
            if (m := re.search(r"cpu=(\d+)", limits.get(k, "")))
        ),
        None,
    )
    if cpu_cap is not None:
        room = cpu_cap - sum(j.cpus for j in mine)
        if 0 < room < snap.cpus:
            advice.append(
                Advice(
                    f"ask for {_cpus(room)} instead of {snap.cpus}",
                    None,
                    True,
                    f"fits the limit cpu={cpu_cap} next to the running jobs",
                )
            )
    ending = sorted((j for j in mine if j.end), key=lambda j: j.end or snap.now)
    if ending:
        first = ending[0]
        advice.append(
            Advice(
                f"wait for job {first.job_id} to end",
                None,
                None,
                f"it ends at about {clock(first.end, snap.now)}, freeing "
                f"{_cpus(first.cpus)} under the limit",
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
