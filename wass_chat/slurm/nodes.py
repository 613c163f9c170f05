"""A simulator platform built from what Slurm reports: ``scontrol show nodes`` and partitions.

Slurm knows cores, memory, GRES GPUs, features and state, not core speed or network
bandwidth: those keep the model's defaults (the reference machine), so simulated runtimes
equal WfFormat runtimes. Nodes that cannot take work (down, drained, failing, not responding)
are left out and reported with the state that excluded them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sim.errors import PlatformError
from sim.model import Node, Platform
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.names import check_name

UNUSABLE_STATES = frozenset(
    {
        "DOWN",
        "DRAIN",
        "DRAINED",
        "DRAINING",
        "FAIL",
        "FAILING",
        "INVAL",
        "FUTURE",
        "NOT_RESPONDING",
        "POWERED_DOWN",
        "POWERING_DOWN",
        "MAINT",
        "UNKNOWN",
        # newer releases' states: a registration that did not match slurm.conf (INVALID_REG,
        # 23.02+), a node booting for a job or a reboot (POWERING_UP, REBOOT_ISSUED in 26.05)
        "INVALID_REG",
        "POWERING_UP",
        "REBOOT_ISSUED",
    }
)


@dataclass(frozen=True, slots=True)
class ExcludedNode:
    """A node of the partition left out of the platform, and why."""

    name: str
    state: str
    reason: str


@dataclass(frozen=True)
class SlurmPlatform:
    """The platform of usable nodes, the partition it came from, and the nodes left out."""

    platform: Platform
    partition: str
    excluded: tuple[ExcludedNode, ...]


def state_flags(state: str) -> set[str]:
    """``IDLE+DRAIN`` -> {IDLE, DRAIN}; a trailing ``*`` (no response) adds NOT_RESPONDING."""
    flags = {f for f in re.split(r"[+]", state.rstrip("*~#!%$@^-").upper()) if f}
    if state.endswith("*"):
        flags.add("NOT_RESPONDING")
    return flags


def gpu_count(gres: str) -> int:
    """GPUs in a GRES string: ``gpu:2``, ``gpu:a100:4(S:0-1)``, ``gpu:2,shard:8`` -> 2, 4, 2."""
    total = 0
    for item in gres.split(","):
        item = re.sub(r"\(.*?\)", "", item.strip())
        parts = item.split(":")
        if parts[0] == "gpu" and len(parts) >= 2 and parts[-1].isdigit():
            total += int(parts[-1])
    return total


def node_from_record(record: Mapping[str, str]) -> Node:
    """A model node from one ``scontrol show nodes`` record."""
    cores = int(record.get("CPUEfctv") or record.get("CPUTot") or 1)
    memory_mb = int(record.get("RealMemory") or 0)
    features = record.get("AvailableFeatures", "")
    return Node(
        name=record["NodeName"],
        cores=cores,
        memory=memory_mb * 2**20,
        gpus=gpu_count(record.get("Gres", "")),
        features=tuple(f for f in features.split(",") if f and f != "(null)"),
    )


def default_partition(partitions: Sequence[Mapping[str, str]]) -> str:
    for p in partitions:
        if p.get("Default") == "YES":
            return p["PartitionName"]
    if partitions:
        return partitions[0]["PartitionName"]
    raise PlatformError("slurm", ["Slurm reports no partition"])


def platform_from_records(
    nodes: Sequence[Mapping[str, str]], partition: str, name: str | None = None
) -> SlurmPlatform:
    """Usable nodes of ``partition`` as a :class:`Platform` (pure: no Slurm call)."""
    usable: list[Node] = []
    excluded: list[ExcludedNode] = []
    for record in nodes:
        if partition not in record.get("Partitions", "").split(","):
            continue
        state = record.get("State", "UNKNOWN")
        bad = state_flags(state) & UNUSABLE_STATES
        if bad:
            reason = record.get("Reason") or ", ".join(sorted(bad)).lower()
            excluded.append(ExcludedNode(record["NodeName"], state, reason))
        else:
            usable.append(node_from_record(record))
    if not usable:
        problems = [f"partition {partition!r} has no usable node"]
        problems += [f"{e.name} is {e.state} ({e.reason})" for e in excluded]
        raise PlatformError(f"slurm:{partition}", problems)
    platform = Platform(name or f"slurm-{partition}", tuple(usable))
    return SlurmPlatform(platform, partition, tuple(excluded))


def platform_from_slurm(
    commands: SlurmCommands | None = None, partition: str | None = None
) -> SlurmPlatform:
    """The cluster as a platform: ``partition`` (default: Slurm's default partition).

    A partition the cluster does not have is refused with the nearest names
    (:class:`~sim.errors.NoSuchName`), not reported as one without usable nodes."""
    commands = commands or SlurmCommands()
    check_name(commands, "partition", partition)
    part = partition or default_partition(commands.show_partitions())
    return platform_from_records(commands.show_nodes(), part)
