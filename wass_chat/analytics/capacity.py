"""The cluster's capacity, the denominator of every utilisation figure, and where it came from.

Accounting data only shows nodes that ran something, so "nodes seen" understates a cluster with
idle or drained nodes and overstates nothing; it is therefore the last resort. In order:

1. what the user states (``--capacity-cpus N`` / ``--capacity-nodes N``);
2. the live controller (``scontrol show nodes`` / ``show partitions``, which reflect slurm.conf);
3. the file ``$SLURM_CONF`` (``NodeName=`` and ``PartitionName=`` lines);
4. a guess: the distinct nodes seen in the period's accounting, labelled as such, and said in
   one note at the top of the report (:func:`capacity_note`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sim.errors import ServiceUnavailable, UserFacingError
from wass_chat.slurm.hostlist import expand


@dataclass(frozen=True)
class PartitionCapacity:
    """Nodes and CPUs configured in one partition (partitions may share nodes)."""

    name: str
    nodes: int
    cpus: int | None = None


@dataclass(frozen=True)
class Capacity:
    """Configured nodes and CPUs, per partition too when known, and the source of the numbers."""

    nodes: int | None
    cpus: int | None
    source: str
    """``--capacity-nodes``, ``scontrol``, ``slurm.conf /path`` or the fallback's description."""
    partitions: tuple[PartitionCapacity, ...] = ()
    fallback: bool = False
    """True when no configuration was available and nodes seen in accounting stand in for it."""

    def label(self) -> str:
        """One phrase for the report: ``64 nodes / 4,096 CPUs (from scontrol)``."""
        parts = [
            f"{self.nodes:,} nodes" if self.nodes else "",
            f"{self.cpus:,} CPUs" if self.cpus else "",
        ]
        what = " / ".join(p for p in parts if p) or "unknown"
        return f"{what} ({self.source})"

    def partition(self, name: str) -> PartitionCapacity | None:
        return next((p for p in self.partitions if p.name == name), None)


FALLBACK_SOURCE = "guessed: the nodes seen in accounting"


def stated_capacity(nodes: int | None, cpus: int | None) -> Capacity | None:
    """The capacity a user gave on the command line, or None when they gave none."""
    if nodes is None and cpus is None:
        return None
    flags = [f for f, v in (("--capacity-nodes", nodes), ("--capacity-cpus", cpus)) if v]
    return Capacity(nodes, cpus, "stated: " + ", ".join(flags))


def fallback_capacity(nodes_seen: int) -> Capacity:
    return Capacity(nodes_seen or None, None, FALLBACK_SOURCE, fallback=True)


def capacity_note(capacity: Capacity) -> str | None:
    """The report's note when the capacity was guessed (None when it was known): what utilisation
    is measured against then, which way it errs, and how to give the real figure."""
    if not capacity.fallback:
        return None
    return (
        "Capacity guessed: neither scontrol nor a slurm.conf gave the cluster's configured "
        f"size, so utilisation is measured against the {capacity.nodes or 0:,} nodes seen in "
        "accounting. Nodes that ran nothing in the period are missing from that count, so "
        "utilisation may read high. Run the report where scontrol answers, or give "
        "--capacity-nodes or --capacity-cpus."
    )


def capacity_from_records(
    nodes: Sequence[Mapping[str, str]], partitions: Sequence[Mapping[str, str]], source: str
) -> Capacity:
    """Capacity from node records (``NodeName``, ``CPUTot``/``CPUs``) and partition records
    (``PartitionName``, ``Nodes``), as ``scontrol --oneliner`` or slurm.conf lines give them."""
    cpus_of = {}
    for record in nodes:
        count = int(record.get("CPUEfctv") or record.get("CPUTot") or record.get("CPUs") or 1)
        for name in expand(record["NodeName"]):
            cpus_of[name] = count
    parts = []
    for record in partitions:
        members = record.get("Nodes", "")
        names = list(cpus_of) if members.upper() == "ALL" else expand(members)
        known = [n for n in names if n in cpus_of]
        parts.append(
            PartitionCapacity(
                record["PartitionName"], len(known), sum(cpus_of[n] for n in known) or None
            )
        )
    return Capacity(len(cpus_of), sum(cpus_of.values()), source, tuple(parts))


def parse_slurm_conf(text: str, source: str) -> Capacity:
    """Capacity from slurm.conf text: its ``NodeName=`` and ``PartitionName=`` lines."""
    nodes, partitions = [], []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        record = dict(item.split("=", 1) for item in line.split() if "=" in item)
        if "NodeName" in record and record["NodeName"] != "DEFAULT":
            nodes.append(record)
        elif "PartitionName" in record and record["PartitionName"] != "DEFAULT":
            partitions.append(record)
    return capacity_from_records(nodes, partitions, source)


def discover_capacity(timeout_s: float = 10.0) -> Capacity | None:
    """The configured capacity from the live controller, else ``$SLURM_CONF``; None if neither."""
    from wass_chat.slurm.commands import SlurmCommands

    commands = SlurmCommands(timeout=timeout_s)
    try:
        found = capacity_from_records(
            commands.show_nodes(), commands.show_partitions(), "scontrol show nodes/partitions"
        )
        if found.nodes:
            return found
    except (ServiceUnavailable, UserFacingError, OSError):
        pass
    conf = Path(os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf"))
    if conf.is_file():
        found = parse_slurm_conf(conf.read_text(errors="replace"), f"slurm.conf {conf}")
        if found.nodes:
            return found
    return None
