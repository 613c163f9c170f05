"""A partition's settings in words: "what is the max time limit in the small partition?".

From ``scontrol show partitions``: state, nodes, CPUs, the per-job limits a job meets at
submission (MaxTime, MaxNodes, MinNodes) and whom it admits (AllowQos, AllowAccounts,
AllowGroups when not ALL); the CPUs in use and the nodes that take no jobs come from the node
facts beside them (:mod:`wass_chat.slurm.explain.nodes`). Part of the ``cluster`` answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from sim.errors import InputError
from wass_chat.slurm.explain.phrases import minutes, names
from wass_chat.slurm.formats import is_set, slurm_duration
from wass_chat.slurm.hostlist import expand


class PartitionFacts(TypedDict):
    name: str
    state: str
    """As Slurm prints it: UP, DOWN, DRAIN, INACTIVE."""
    default: bool
    nodes: str
    """Slurm's hostlist (``n[1-2]``)."""
    node_names: list[str]
    cpus: int
    allocated_cpus: int
    """CPUs allocated on its nodes, to jobs of any partition (a node may be in several)."""
    unavailable: list[str]
    """Its nodes that take no jobs (drained, down...)."""
    max_time_s: float | None
    """MaxTime in seconds; None when UNLIMITED."""
    max_nodes: str
    """MaxNodes (``1``), or '' when UNLIMITED; ``min_nodes`` likewise ('' for 0 or 1)."""
    min_nodes: str
    admits: list[str]
    """Whom it admits when not everyone: ``QOS normal``, ``accounts physics``."""


def partition_facts(
    record: Mapping[str, str], nodes: Sequence[Mapping[str, Any]]
) -> PartitionFacts:
    """One partition's facts from its ``scontrol --oneliner show partitions`` record and the
    node facts (:class:`~wass_chat.slurm.explain.nodes.NodeFacts`: name, condition,
    takes_jobs, allocated_cores)."""
    members = expand(record.get("Nodes", "")) if is_set(record.get("Nodes")) else []
    mine = [n for n in nodes if n["name"] in members]
    max_nodes = record.get("MaxNodes", "UNLIMITED")
    min_nodes = record.get("MinNodes", "0")
    admits = [
        f"{label} {record[key]}"
        for key, label in (
            ("AllowQos", "QOS"),
            ("AllowAccounts", "accounts"),
            ("AllowGroups", "groups"),
        )
        if is_set(record.get(key)) and record[key] != "ALL"
    ]
    return PartitionFacts(
        name=record.get("PartitionName", "?"),
        state=record.get("State", "?"),
        default=record.get("Default") == "YES",
        nodes=record.get("Nodes", "") if members else "",
        node_names=members,
        cpus=int(record.get("TotalCPUs", "0") or 0),
        allocated_cpus=sum(n["allocated_cores"] for n in mine),
        unavailable=[f"{n['name']} is {n['condition']}" for n in mine if not n["takes_jobs"]],
        max_time_s=slurm_duration(record.get("MaxTime")),
        max_nodes="" if max_nodes.upper() == "UNLIMITED" else max_nodes,
        min_nodes="" if min_nodes in {"0", "1"} else min_nodes,
        admits=admits,
    )


STATE_MEANING = {
    "DOWN": "takes jobs but starts none",
    "DRAIN": "starts the jobs it holds, takes no new ones",
    "INACTIVE": "neither takes nor starts jobs",
}
"""What a partition's State (slurm.conf(5), PartitionName State=) other than UP means for its
jobs (the queue answer says it too)."""


def partition_verdict(p: PartitionFacts) -> str:
    """``Partition small is up: n[1-2], 1 of 4 CPUs in use (n1 is drained). A job there runs
    at most 10 min (MaxTime) on at most 1 node (MaxNodes).``"""
    meaning = STATE_MEANING.get(p["state"])
    state = p["state"].lower() + (f" (it {meaning})" if meaning else "")
    default = " and the default" if p["default"] else ""
    out = f" ({'; '.join(p['unavailable'])})" if p["unavailable"] else ""
    where = f"{p['nodes'] or 'no nodes'}, {p['allocated_cpus']} of {p['cpus']} CPUs in use{out}"
    return f"Partition {p['name']} is {state}{default}: {where}. {limits_sentence(p)}"


def limits_sentence(p: PartitionFacts, name: Callable[[str], str] = str) -> str:
    """What a job must keep to there, and whom it admits (``name`` writes the names Slurm was
    given: Markdown escapes them)."""
    time = (
        f"at most {minutes(p['max_time_s'])} (MaxTime)"
        if p["max_time_s"] is not None
        else "with no time limit (MaxTime=UNLIMITED)"
    )
    sizes = []
    if p["max_nodes"]:
        sizes.append(f"at most {p['max_nodes']} node{'s' * (p['max_nodes'] != '1')} (MaxNodes)")
    if p["min_nodes"]:
        sizes.append(f"at least {p['min_nodes']} nodes (MinNodes)")
    on = f" on {' and '.join(sizes)}" if sizes else ""
    admits = f"; it admits only {', '.join(map(name, p['admits']))}" if p["admits"] else ""
    return f"A job there runs {time}{on}{admits}."


_LENGTH = re.compile(r"(\d+(?:\.\d+)?)\s*(s|min|h|d)", re.I)
_UNIT_S = {"s": 1, "min": 60, "h": 3600, "d": 86400}


def time_limit_seconds(text: str) -> float:
    """``2h``, ``90min``, ``1.5d``, ``30s`` or Slurm's ``--time`` forms (``2:00:00``,
    ``1-12:00:00``, ``90`` = minutes) -> seconds; raises :class:`~sim.errors.InputError`."""
    text = text.strip()
    if match := _LENGTH.fullmatch(text):
        return float(match.group(1)) * _UNIT_S[match.group(2).lower()]
    seconds = slurm_duration(text) if re.fullmatch(r"[\d:-]+", text) else None
    if not seconds:
        raise InputError(text, ["a job's time limit is 2h, 90min, 1d or Slurm's 2:00:00"])
    return seconds


def admitting_verdict(partitions: Sequence[PartitionFacts], seconds: float) -> str:
    """``For a job of 2 h: debug (the default) and wassqos (only QOS normal) take it; small
    does not (at most 10 min).``: "which partition should I use for a 2 hour job?" by MaxTime
    and state alone (node counts, memory and the queue are the job's own question, /why)."""
    takes, too_short, closed = [], [], []
    for p in partitions:
        if p["state"] != "UP":
            closed.append(f"{p['name']} ({p['state'].lower()})")
        elif p["max_time_s"] is not None and p["max_time_s"] < seconds:
            too_short.append(f"{p['name']} (at most {minutes(p['max_time_s'])})")
        else:
            notes = ["the default"] * p["default"] + [f"only {a}" for a in p["admits"]]
            takes.append(p["name"] + (f" ({', '.join(notes)})" if notes else ""))
    words = [f"For a job of {minutes(seconds)}: "]
    words.append(
        f"{names(takes)} {'takes' if len(takes) == 1 else 'take'} it"
        if takes
        else "no partition that starts jobs takes it"
    )
    if too_short:
        words.append(f"; {names(too_short)} {'does' if len(too_short) == 1 else 'do'} not")
    if closed:
        words.append(f"; {names(closed)} start{'s' * (len(closed) == 1)} no new job now")
    return "".join(words) + " (MaxTime and state, from scontrol show partitions)."
