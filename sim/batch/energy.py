"""Power per node type and the energy of a simulated (or recorded) period.

A node draws ``idle_w`` when on and idle (its idle GPUs included), plus ``cpu_w`` times the
share of its CPUs allocated, plus ``gpu_w`` per allocated GPU; ``off_w`` when powered down
(the BMC), ``boot_w`` while booting. The facility draws the IT power times ``pue``. The
defaults are assumptions, not measurements (docs/cluster-whatif.md, "Energy"): a two-socket
CPU node idles near 150 W and draws ~400 W flat out; a data-centre GPU adds ~50 W idle and
~250 W busy (a 300-400 W part); a powered-down node keeps ~10 W; booting draws about a
half-busy node. A site's own figures go in the platform file (``power:`` section).

A job's energy is its nodes' dynamic power over its run plus the idle power of the share of
each node it holds (the larger of its CPU and GPU shares), so the jobs' energies and the
idle, off and boot energy of unallocated nodes add up to the period's IT energy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from sim.batch.model import BatchCluster, Workload
from sim.errors import InputError, raise_if

GPU_IDLE_W = 50.0


@dataclass(frozen=True, slots=True)
class PowerProfile:
    """Watts of one node type (see the module docstring)."""

    idle_w: float = 150.0
    cpu_w: float = 250.0
    gpu_w: float = 250.0
    off_w: float = 10.0
    boot_w: float = 275.0

    def __post_init__(self) -> None:
        bad = [k for k in ("idle_w", "cpu_w", "gpu_w", "off_w", "boot_w") if getattr(self, k) < 0]
        raise_if([f"{k} is negative" for k in bad], InputError, "power profile")


@dataclass(frozen=True)
class PowerModel:
    """A profile per node type, a default for the others, and the facility's PUE."""

    profiles: Mapping[str, PowerProfile] = field(default_factory=dict)
    pue: float = 1.3
    """Power usage effectiveness: facility power over IT power (assumed; HPC centres report
    1.1-1.5)."""

    def __post_init__(self) -> None:
        raise_if(["pue must be at least 1"] if self.pue < 1.0 else [], InputError, "power model")

    def profile(self, node_type: str, gpus: int) -> PowerProfile:
        """The node type's profile; the default adds ``GPU_IDLE_W`` per GPU to idle power."""
        if node_type in self.profiles:
            return self.profiles[node_type]
        base = PowerProfile()
        extra = GPU_IDLE_W * gpus
        return PowerProfile(
            base.idle_w + extra, base.cpu_w, base.gpu_w, base.off_w, base.boot_w + extra
        )

    def node_profiles(self, cluster: BatchCluster) -> list[PowerProfile]:
        """Each node's profile (one object per type and GPU count: clusters have thousands
        of nodes and a handful of types)."""
        known: dict[tuple[str, int], PowerProfile] = {}
        out = []
        for n in cluster.nodes:
            key = (n.node_type, n.gpus)
            if key not in known:
                known[key] = self.profile(n.node_type, n.gpus)
            out.append(known[key])
        return out


def share_watts(
    nnodes: np.ndarray,
    cpus_per_node: np.ndarray,
    gpus_per_node: np.ndarray,
    node_cpus: np.ndarray,
    node_gpus: np.ndarray,
    watts: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Per job, the idle watts of the node share it holds and its dynamic watts (all its
    nodes). Every argument has one entry per job: the CPUs and GPUs of the node type it runs
    on, and that type's ``(idle_w, cpu_w, gpu_w)``."""
    idle, cpu, gpu = watts
    cpu_share = np.minimum(cpus_per_node / np.maximum(node_cpus, 1), 1.0)
    gpu_share = np.minimum(gpus_per_node / np.maximum(node_gpus, 1), 1.0)
    idle_part = idle * np.maximum(cpu_share, gpu_share) * nnodes
    dynamic = (cpu * cpu_share + gpu * gpus_per_node) * nnodes
    return idle_part, dynamic


def node_watts(cluster: BatchCluster, model: PowerModel) -> tuple[np.ndarray, ...]:
    """Per node: CPUs, GPUs, and its type's idle, CPU and GPU watts (float arrays)."""
    profiles = model.node_profiles(cluster)
    return (
        np.array([n.cpus for n in cluster.nodes], np.float64),
        np.array([n.gpus for n in cluster.nodes], np.float64),
        np.array([p.idle_w for p in profiles]),
        np.array([p.cpu_w for p in profiles]),
        np.array([p.gpu_w for p in profiles]),
    )


def _job_watts(
    w: Workload, node_of_job: np.ndarray, cluster: BatchCluster, model: PowerModel
) -> tuple[np.ndarray, np.ndarray]:
    """Per job, the idle watts of the node share it holds and its dynamic watts (all nodes)."""
    cpus, gpus, idle, cpu, gpu = node_watts(cluster, model)
    node = np.where(node_of_job >= 0, node_of_job, 0)
    return share_watts(
        w.nnodes,
        w.cpus_per_node,
        w.gpus_per_node,
        cpus[node],
        gpus[node],
        (idle[node], cpu[node], gpu[node]),
    )


def job_energy_j(
    w: Workload,
    start_s: np.ndarray,
    end_s: np.ndarray,
    node_of_job: np.ndarray,
    cluster: BatchCluster,
    model: PowerModel,
) -> np.ndarray:
    """IT energy (joules) per job, from its first node's type (a job's nodes share a partition
    and, in practice, a type). Jobs that never ran have 0."""
    idle_part, dynamic = _job_watts(w, node_of_job, cluster, model)
    seconds = np.where(node_of_job >= 0, end_s - start_s, 0)
    return (idle_part + dynamic) * seconds


def first_nodes(cluster: BatchCluster, partitions: Sequence[str]) -> np.ndarray:
    """Per partition name, the index of its first node (-1 for a partition the cluster lacks):
    the node type a recorded job is priced on."""
    names = cluster.partition_names()
    index = cluster.node_index()
    return np.array(
        [
            index[cluster.partitions[names.index(p)].nodes[0]] if p in names else -1
            for p in partitions
        ],
        np.int64,
    )


def recorded_energy(cluster: BatchCluster, w: Workload, model: PowerModel) -> dict[str, object]:
    """The energy the recorded schedule drew (kWh): every node on and idle over the recorded
    period, plus each job's dynamic power over its recorded run, the job counted on its
    partition's first node type. Jobs' energy by partition and by user (the ten largest)."""
    ran = w.recorded_start_s >= 0
    if not ran.any():
        return {}
    first = first_nodes(cluster, w.partitions)
    node_of_job = np.where(ran, first[w.partition], -1)
    idle_part, dynamic = _job_watts(w, node_of_job, cluster, model)
    seconds = np.where(ran & (node_of_job >= 0), w.runtime_s, 0)
    period = int((w.recorded_start_s + w.runtime_s)[ran].max() - w.submit_s.min())
    idle_w = sum(p.idle_w for p in model.node_profiles(cluster))
    it_j = idle_w * period + float((dynamic * seconds).sum())
    job_j = (idle_part + dynamic) * seconds
    by_user = {w.users[u]: float(job_j[w.user == u].sum()) / 3.6e6 for u in np.unique(w.user[ran])}
    top = dict(sorted(by_user.items(), key=lambda kv: -kv[1])[:10])
    return {
        "period_s": period,
        "it_kwh": it_j / 3.6e6,
        "facility_kwh": it_j * model.pue / 3.6e6,
        "jobs_kwh": float(job_j.sum()) / 3.6e6,
        "by_partition_kwh": {
            p: float(job_j[w.partition == k].sum()) / 3.6e6
            for k, p in enumerate(w.partitions)
            if (w.partition == k).any()
        },
        "top_users_kwh": top,
    }


def energy_before_j(
    start_s: np.ndarray, end_s: np.ndarray, watts: np.ndarray, edges_s: np.ndarray
) -> np.ndarray:
    """Joules drawn before each of ``edges_s`` by loads of constant ``watts`` running over
    ``[start_s, end_s)``: bucket energies are differences of consecutive edges. ``watts`` may
    have a column per kind of power (one row per load; the result then has one column per
    kind). Exact, in O(n log n): a load started by ``t`` has drawn ``W (t - start)``, minus
    ``W (t - end)`` once it ended. Pass times relative to the first edge to keep sums small."""
    flat = watts.ndim == 1
    power = (watts[:, None] if flat else watts).astype(np.float64)
    edges = np.asarray(edges_s, np.float64)

    def drawn_since(times: np.ndarray) -> np.ndarray:
        order = np.argsort(times, kind="stable")
        t, w = times[order].astype(np.float64), power[order]
        zero = np.zeros((1, w.shape[1]))
        sum_w = np.concatenate([zero, np.cumsum(w, axis=0)])
        sum_wt = np.concatenate([zero, np.cumsum(w * t[:, None], axis=0)])
        k = np.searchsorted(t, edges, side="right")
        return edges[:, None] * sum_w[k] - sum_wt[k]

    drawn = drawn_since(start_s) - drawn_since(end_s)
    return drawn[:, 0] if flat else drawn


def profiles_in_use(cluster: BatchCluster, model: PowerModel) -> list[dict[str, object]]:
    """Each node type of ``cluster`` (and GPU count) with its watts and whether they are the
    documented defaults (assumptions) or the site's (a platform file): what a page or an
    answer must state next to any energy figure."""
    groups: dict[tuple[str, int], int] = {}
    for node in cluster.nodes:
        groups[(node.node_type, node.gpus)] = groups.get((node.node_type, node.gpus), 0) + 1
    out: list[dict[str, object]] = []
    for (node_type, gpus), count in sorted(groups.items()):
        p = model.profile(node_type, gpus)
        out.append(
            {
                "node_type": node_type,
                "nodes": count,
                "gpus_per_node": gpus,
                "idle_w": p.idle_w,
                "cpu_w": p.cpu_w,
                "gpu_w": p.gpu_w,
                "off_w": p.off_w,
                "boot_w": p.boot_w,
                "assumed": node_type not in model.profiles,
            }
        )
    return out
