"""A batch cluster and its power model from a YAML (or JSON) platform file.

    nodes:                       # groups of identical nodes, named PREFIX001, PREFIX002...
      - {prefix: cpu, count: 100, cpus: 64, memory_gb: 256, type: cpu}
      - {prefix: gpu, count: 8, cpus: 32, memory_gb: 512, gpus: 4, type: a100}
    partitions:                  # nodes: group prefixes or node names
      - {name: batch, nodes: [cpu], max_time_h: 24, default: true}
      - {name: gpu, nodes: [gpu], max_time_h: 48, priority_job_factor: 2}
    power:                       # optional; see sim.batch.energy for the defaults
      pue: 1.3
      types:
        a100: {idle_w: 350, cpu_w: 250, gpu_w: 300, off_w: 15, boot_w: 450}

Every problem in the file is reported at once (PlatformError).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from sim.batch.energy import PowerModel, PowerProfile
from sim.batch.model import UNLIMITED, BatchCluster, BatchNode, Partition
from sim.errors import InputError, PlatformError, raise_if

_NODE_KEYS = {"prefix", "count", "cpus", "memory_gb", "gpus", "type", "digits"}
_PART_KEYS = {"name", "nodes", "max_time_h", "priority_job_factor", "priority_tier", "default"}


def load_cluster_file(path: Path) -> tuple[BatchCluster, PowerModel]:
    """Read a platform file (see the module docstring)."""
    try:
        text = Path(path).read_text()
        data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise PlatformError(str(path), [f"cannot read: {exc}"]) from exc
    if not isinstance(data, dict):
        raise PlatformError(str(path), ["expected a mapping with nodes and partitions"])
    return cluster_from_dict(data, str(path))


def cluster_from_dict(
    data: dict[str, Any], source: str = "platform"
) -> tuple[BatchCluster, PowerModel]:
    problems: list[str] = []
    nodes: list[BatchNode] = []
    groups: dict[str, list[str]] = {}
    for k, group in enumerate(data.get("nodes") or []):
        if not isinstance(group, dict):
            problems.append(f"nodes[{k}] is not a mapping")
            continue
        problems += [f"nodes[{k}]: unknown key {key}" for key in sorted(set(group) - _NODE_KEYS)]
        try:
            prefix = str(group["prefix"])
            count = int(group.get("count", 1))
            digits = int(group.get("digits", max(3, len(str(count)))))
            names = [f"{prefix}{i:0{digits}d}" for i in range(1, count + 1)]
            for name in names:
                nodes.append(
                    BatchNode(
                        name,
                        int(group["cpus"]),
                        int(float(group.get("memory_gb", 0)) * 2**30),
                        int(group.get("gpus", 0)),
                        str(group.get("type", "gpu" if group.get("gpus") else "cpu")),
                    )
                )
            groups[prefix] = names
        except (KeyError, ValueError, TypeError) as exc:
            problems.append(f"nodes[{k}]: needs prefix and cpus as numbers ({exc})")
    partitions = []
    for k, part in enumerate(data.get("partitions") or []):
        if not isinstance(part, dict) or "name" not in part:
            problems.append(f"partitions[{k}] needs a name")
            continue
        problems += [
            f"partition {part['name']}: unknown key {key}" for key in sorted(set(part) - _PART_KEYS)
        ]
        members: list[str] = []
        for ref in part.get("nodes") or []:
            members += groups.get(str(ref), [str(ref)])
        hours = part.get("max_time_h")
        partitions.append(
            Partition(
                str(part["name"]),
                tuple(members),
                UNLIMITED if hours is None else int(float(hours) * 3600),
                int(part.get("priority_job_factor", 1)),
                int(part.get("priority_tier", 1)),
                bool(part.get("default", False)),
            )
        )
    raise_if(problems, PlatformError, source)
    cluster = BatchCluster(tuple(nodes), tuple(partitions))
    return cluster, _power(data.get("power") or {}, source)


def _power(data: dict[str, Any], source: str) -> PowerModel:
    try:
        profiles = {
            str(name): PowerProfile(**values) for name, values in (data.get("types") or {}).items()
        }
        return PowerModel(profiles, float(data.get("pue", 1.3)))
    except (TypeError, ValueError, InputError) as exc:
        raise PlatformError(source, [f"power: {exc}"]) from exc
