"""Platform files (YAML or JSON) and a generator of homogeneous or heterogeneous clusters.

File layout (units optional: plain numbers are bytes, bytes/s, flop/s, seconds, watts)::

    name: demo
    latency: 10us                 # one network latency for every route
    shared_fs_bandwidth: 2.5GBps  # read bandwidth of the shared filesystem
    nodes:
      - {name: cpu01, cores: 16, speed: 2.5Gf, memory: 64GiB, bandwidth: 10Gbps}
      - {name: gpu, count: 2, cores: 32, speed: 3Gf, memory: 256GiB, gpus: 4}
      - {name: a100-, count: 2, cores: 32, gpus: 4, gpu_type: a100, gpu_speed: 19.5Gf}

``gpu_type`` names the nodes' GPU model and ``gpu_speed`` its speed per device (flop/s in the
tasks' work units; :class:`sim.model.GpuType`); give both or neither.

A node entry with ``count: N`` expands to N nodes named ``<name>01`` ... ``<name>NN``. Unknown
keys are errors (a typo must not silently fall back to a default); every problem in the file is
reported at once as a :class:`~sim.errors.PlatformError`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from sim.errors import InputError, PlatformError
from sim.json_fields import FieldChecker
from sim.model import GpuType, Node, Platform
from sim.units import Quantity, parse_quantity

GiB = 2**30

_NODE_FIELDS: dict[str, Quantity | None] = {
    "speed": "speed",
    "memory": "size",
    "bandwidth": "bandwidth",
    "power_idle": None,
    "power_busy": None,
}
_NODE_KEYS = {"name", "count", "cores", "gpus", "features", "gpu_type", "gpu_speed", *_NODE_FIELDS}
_PLATFORM_KEYS = {"name", "latency", "shared_fs_bandwidth", "nodes"}


# --- reading ------------------------------------------------------------------------------


def load_platform(path: str | Path) -> Platform:
    """Read a platform from a ``.yaml``/``.yml`` or ``.json`` file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlatformError(str(path), [f"cannot read file: {exc}"]) from exc
    return loads_platform(text, subject=str(path), is_json=path.suffix.lower() == ".json")


def loads_platform(text: str, subject: str = "<string>", *, is_json: bool = False) -> Platform:
    """Parse platform text (YAML, of which JSON is a subset, unless ``is_json``)."""
    try:
        doc = json.loads(text) if is_json else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        kind = "JSON" if is_json else "YAML"
        raise PlatformError(subject, [f"malformed {kind}: {_first_line(exc)}"]) from exc
    return platform_from_dict(doc, subject)


def platform_from_dict(doc: Any, subject: str = "<document>") -> Platform:
    """Convert a parsed platform document; one PlatformError lists every problem."""
    if not isinstance(doc, Mapping):
        raise PlatformError(subject, ["top level must be a mapping with 'nodes'"])
    check = FieldChecker()
    check.unknown_keys(doc, _PLATFORM_KEYS, "platform")
    name = check.get(doc, "name", "str", "platform", required=False, default=Path(subject).stem)
    latency = _quantity(check, doc, "latency", "time", "platform", 1e-5)
    fs_bandwidth = _quantity(check, doc, "shared_fs_bandwidth", "bandwidth", "platform", 2.5e9)
    raw_nodes = check.get(doc, "nodes", "list", "platform", default=[])
    nodes: list[Node] = []
    for i, raw in check.objects(raw_nodes, "node"):
        nodes += _read_nodes(check, raw, i)
    try:
        platform = Platform(name, tuple(nodes), latency, fs_bandwidth)
    except PlatformError as exc:
        raise PlatformError(subject, [*check.problems, *exc.problems]) from exc
    if check.problems:
        raise PlatformError(subject, check.problems)
    return platform


def _read_nodes(check: FieldChecker, raw: Mapping[str, Any], index: int) -> list[Node]:
    where = f"node {raw.get('name', f'#{index}')!r}"
    check.unknown_keys(raw, _NODE_KEYS, where)
    name = check.get(raw, "name", "str", where, default=f"node{index}")
    count = check.get(raw, "count", "int", where, required=False)
    cores = check.get(raw, "cores", "int", where, default=1)
    gpus = check.get(raw, "gpus", "int", where, required=False, default=0)
    features = check.get(raw, "features", "str-list", where, required=False, default=[])
    gpu_type = _gpu_type(check, raw, where)
    defaults = Node("defaults", 1)
    values = {
        key: _quantity(check, raw, key, kind, where, getattr(defaults, key))
        for key, kind in _NODE_FIELDS.items()
    }
    if count is not None and count < 1:
        check.add(f"{where}: 'count' must be at least 1, got {count}")
    names = (
        [name]
        if count is None
        else [f"{name}{i:0{max(2, len(str(count)))}d}" for i in range(1, count + 1)]
    )
    return [
        Node(
            n,
            cores,
            speed=values["speed"],
            memory=round(values["memory"]),
            gpus=gpus,
            bandwidth=values["bandwidth"],
            power_idle=values["power_idle"],
            power_busy=values["power_busy"],
            features=tuple(features),
            gpu_type=gpu_type,
        )
        for n in names
    ]


def _gpu_type(check: FieldChecker, raw: Mapping[str, Any], where: str) -> GpuType | None:
    """The node's GPU type from ``gpu_type`` (name) and ``gpu_speed`` (both or neither)."""
    name = check.get(raw, "gpu_type", "str", where, required=False)
    if name is None and "gpu_speed" not in raw:
        return None
    if name is None:
        check.add(f"{where}: 'gpu_speed' needs 'gpu_type' (the GPU model's name)")
        return None
    if "gpu_speed" not in raw:
        check.add(f"{where}: 'gpu_type' needs 'gpu_speed' (flop/s per device)")
        return None
    return GpuType(name, _quantity(check, raw, "gpu_speed", "speed", where, 1.0))


def _quantity(
    check: FieldChecker,
    obj: Mapping[str, Any],
    key: str,
    kind: Quantity | None,
    where: str,
    default: float,
) -> float:
    if key not in obj:
        return default
    try:
        if kind is None:
            if isinstance(obj[key], bool) or not isinstance(obj[key], int | float):
                raise ValueError(f"expected a number, got {obj[key]!r}")
            value = float(obj[key])
        else:
            value = parse_quantity(obj[key], kind)
        if not math.isfinite(value):  # YAML's .nan / .inf: no comparison would catch it
            raise ValueError(f"must be a finite number, got {obj[key]!r}")
        return value
    except ValueError as exc:
        check.add(f"{where}: {key!r}: {exc}")
        return default


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


# --- writing ------------------------------------------------------------------------------


def platform_to_dict(platform: Platform) -> dict[str, Any]:
    """A document :func:`platform_from_dict` reads back to an equal platform (base units)."""
    return {
        "name": platform.name,
        "latency": platform.latency,
        "shared_fs_bandwidth": platform.shared_fs_bandwidth,
        "nodes": [
            {
                "name": n.name,
                "cores": n.cores,
                "speed": n.speed,
                "memory": n.memory,
                "gpus": n.gpus,
                "bandwidth": n.bandwidth,
                "power_idle": n.power_idle,
                "power_busy": n.power_busy,
                **({"features": list(n.features)} if n.features else {}),
                **(
                    {"gpu_type": n.gpu_type.name, "gpu_speed": n.gpu_type.speed}
                    if n.gpu_type is not None
                    else {}
                ),
            }
            for n in platform.nodes
        ],
    }


def dumps_platform(platform: Platform, *, as_json: bool = False) -> str:
    """YAML (default) or JSON text for ``platform``."""
    doc = platform_to_dict(platform)
    if as_json:
        return json.dumps(doc, indent=2) + "\n"
    header = "# wass-chat platform. Units: bytes, bytes/s, flop/s per core, seconds, watts.\n"
    return header + yaml.safe_dump(doc, sort_keys=False)


def save_platform(platform: Platform, path: str | Path) -> None:
    """Write ``platform`` as YAML, or JSON when ``path`` ends in ``.json``."""
    path = Path(path)
    path.write_text(
        dumps_platform(platform, as_json=path.suffix.lower() == ".json"), encoding="utf-8"
    )


# --- generation ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterSpec:
    """What :func:`generate_platform` builds. Heterogeneous clusters draw each node's speed,
    cores, NIC and GPUs at random; homogeneous ones repeat the base node."""

    nodes: int = 8
    heterogeneous: bool = False
    base_speed: float = 2.5e9
    """Per-core flop/s of the base node."""
    speed_spread: float = 0.4
    """Heterogeneous speeds are uniform in ``base_speed * [1 - spread, 1 + spread]``."""
    base_cores: int = 16
    core_choices: tuple[int, ...] = (4, 8, 16, 32)
    memory_per_core: int = 4 * GiB
    base_bandwidth: float = 1.25e9
    """NIC bytes/s of the base node (10 Gb/s)."""
    bandwidth_choices: tuple[float, ...] = (1.25e9, 3.125e9, 12.5e9)
    """Heterogeneous NICs: 10, 25 or 100 Gb/s."""
    gpu_fraction: float = 0.25
    """Share of heterogeneous nodes that carry GPUs (at least one node when > 0)."""
    gpus_per_node: int = 4
    gpu_types: tuple[GpuType, ...] = ()
    """GPU models the GPU nodes draw from (empty: untyped GPUs, the model before types)."""
    latency: float = 1e-5
    shared_fs_bandwidth: float = 2.5e9
    name: str = ""


MIN_NODES, MAX_NODES = 4, 128

GPU_TYPES = (GpuType("t4", 8.1e9), GpuType("v100", 15.7e9), GpuType("a100", 19.5e9))
"""A heterogeneous GPU cluster's models, speeds per device in reference-core units (the FP32
peak in TFLOP/s times 1 Gf: a T4 does the work of about 8 reference cores). Only the ratios
come from the hardware (NVIDIA's FP32 peaks: 8.1, 15.7 and 19.5 TFLOP/s)."""


def gpu_cluster_spec(nodes: int) -> ClusterSpec:
    """A shared heterogeneous GPU cluster (the ``gpu:N`` platform kind): nodes of 4 or 8 cores
    at mixed speeds, half of them with two GPUs of a model drawn from :data:`GPU_TYPES`, and a
    parallel filesystem (25 GB/s) that many workflows read at once."""
    return ClusterSpec(
        nodes=nodes,
        heterogeneous=True,
        core_choices=(4, 8),
        gpu_fraction=0.5,
        gpus_per_node=2,
        gpu_types=GPU_TYPES,
        shared_fs_bandwidth=25e9,
        name=f"gpu-{nodes}n",
    )


def generate_platform(spec: ClusterSpec, seed: int = 0) -> Platform:
    """A cluster of ``spec.nodes`` nodes (4 to 128), deterministic in ``seed``."""
    problems = []
    if not MIN_NODES <= spec.nodes <= MAX_NODES:
        problems.append(f"nodes must be in {MIN_NODES}..{MAX_NODES}, got {spec.nodes}")
    if not 0 <= spec.speed_spread < 1:
        problems.append(f"speed spread must be in [0, 1), got {spec.speed_spread}")
    if not 0 <= spec.gpu_fraction <= 1:
        problems.append(f"GPU fraction must be in [0, 1], got {spec.gpu_fraction}")
    if not spec.core_choices or min(spec.core_choices) < 1 or spec.base_cores < 1:
        problems.append("core counts must be at least 1")
    if problems:
        raise InputError("platform generator", problems)
    rng = np.random.default_rng(seed)
    width = max(2, len(str(spec.nodes)))
    gpu_nodes: set[int] = set()
    if spec.heterogeneous and spec.gpu_fraction > 0:
        count = max(1, round(spec.gpu_fraction * spec.nodes))
        gpu_nodes = {int(i) for i in rng.choice(spec.nodes, count, replace=False)}
    nodes = []
    for i in range(spec.nodes):
        if spec.heterogeneous:
            factor = rng.uniform(1 - spec.speed_spread, 1 + spec.speed_spread)
            speed = round(spec.base_speed * factor / 1e8) * 1e8  # 0.1 Gf steps
            cores = int(rng.choice(spec.core_choices))
            bandwidth = float(rng.choice(spec.bandwidth_choices))
        else:
            speed, cores, bandwidth = spec.base_speed, spec.base_cores, spec.base_bandwidth
        gpus = spec.gpus_per_node if i in gpu_nodes else 0
        nodes.append(
            Node(
                name=f"{'gpu' if gpus else 'cpu'}{i + 1:0{width}d}",
                cores=cores,
                speed=speed,
                memory=cores * spec.memory_per_core * (2 if gpus else 1),
                gpus=gpus,
                bandwidth=bandwidth,
                power_idle=_idle_watts(cores, gpus),
                power_busy=_idle_watts(cores, gpus) + _dynamic_watts(cores, speed, gpus),
                features=("gpu",) if gpus else (),
            )
        )
    if spec.gpu_types and gpu_nodes:  # drawn last: platforms without types stay as they were
        drawn = rng.integers(len(spec.gpu_types), size=spec.nodes)
        nodes = [
            replace(n, gpu_type=spec.gpu_types[int(drawn[i])]) if i in gpu_nodes else n
            for i, n in enumerate(nodes)
        ]
    kind = "hetero" if spec.heterogeneous else "homo"
    name = spec.name or f"{kind}-{spec.nodes}n-s{seed}"
    return Platform(name, tuple(nodes), spec.latency, spec.shared_fs_bandwidth)


def _idle_watts(cores: int, gpus: int) -> float:
    """A rough node idle draw: chassis, per-core leakage and idle GPUs."""
    return 50.0 + 5.0 * cores + 30.0 * gpus


def _dynamic_watts(cores: int, speed: float, gpus: int) -> float:
    """Extra draw at full load: ~4 W per Gf of core speed, 250 W per busy GPU."""
    return round(4.0 * cores * speed / 1e9 + 250.0 * gpus, 1)
