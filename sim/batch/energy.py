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

from collections.abc import Mapping
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
        return [self.profile(n.node_type, n.gpus) for n in cluster.nodes]


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
    profiles = model.node_profiles(cluster)
    idle = np.array([p.idle_w for p in profiles])
    cpu = np.array([p.cpu_w for p in profiles])
    gpu = np.array([p.gpu_w for p in profiles])
    cap_cpu = np.array([n.cpus for n in cluster.nodes], np.float64)
    cap_gpu = np.array([max(n.gpus, 1) for n in cluster.nodes], np.float64)
    ran = node_of_job >= 0
    node = np.where(ran, node_of_job, 0)
    cpu_share = np.minimum(w.cpus_per_node / cap_cpu[node], 1.0)
    gpu_share = np.minimum(w.gpus_per_node / cap_gpu[node], 1.0)
    per_node_w = (
        idle[node] * np.maximum(cpu_share, gpu_share)
        + cpu[node] * cpu_share
        + gpu[node] * w.gpus_per_node
    )
    seconds = np.where(ran, end_s - start_s, 0)
    return per_node_w * w.nnodes * seconds
