"""The simulated cluster as Slurm describes it: ``scontrol`` records and configuration.

* ``scontrol show nodes`` / ``show partitions`` records (live, or saved text): CPUs,
  RealMemory, GPUs (Gres), features, and each partition's nodes, MaxTime, PriorityJobFactor
  and PriorityTier (:func:`cluster_from_records`);
* ``scontrol show config``: the priority weights and backfill parameters
  (:func:`scheduler_from_config`).

A node's power type is its first feature, else ``gpu``/``cpu``. Here, on the Slurm floor, so
the queue model (:mod:`wass_chat.slurm.queue_model`) and the what-ifs
(:mod:`wass_chat.batch.cluster_source`, which also infers a cluster from accounting) share it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sim.batch.config import PriorityWeights, SchedulerConfig
from sim.batch.model import UNLIMITED, BatchCluster, BatchNode, Partition
from wass_chat.slurm.commands import SlurmCommands, scontrol_records
from wass_chat.slurm.formats import slurm_duration
from wass_chat.slurm.hostlist import expand
from wass_chat.slurm.nodes import gpu_count


def records(text: str) -> list[dict[str, str]]:
    """``scontrol --oneliner show ...`` text -> one dict per record."""
    return scontrol_records(text)


def cluster_from_records(
    nodes: Sequence[Mapping[str, str]], partitions: Sequence[Mapping[str, str]]
) -> BatchCluster:
    """The cluster ``scontrol show nodes`` and ``show partitions`` describe."""
    batch_nodes = []
    for r in nodes:
        gpus = gpu_count(r.get("Gres", ""))
        features = [f for f in r.get("AvailableFeatures", "").split(",") if f and f != "(null)"]
        batch_nodes.append(
            BatchNode(
                name=r["NodeName"],
                cpus=int(r.get("CPUTot") or r.get("CPUEfctv") or 1),
                memory=int(r.get("RealMemory") or 0) * 2**20,
                gpus=gpus,
                node_type=features[0] if features else ("gpu" if gpus else "cpu"),
            )
        )
    parts = []
    for r in partitions:
        max_time = slurm_duration(r.get("MaxTime"))
        parts.append(
            Partition(
                name=r["PartitionName"],
                nodes=tuple(expand(r.get("Nodes", ""))),
                max_time_s=int(max_time) if max_time is not None else UNLIMITED,
                priority_job_factor=int(r.get("PriorityJobFactor") or 1),
                priority_tier=int(r.get("PriorityTier") or 1),
                default=r.get("Default") == "YES",
            )
        )
    return BatchCluster(tuple(batch_nodes), tuple(parts))


def live_cluster(commands: SlurmCommands | None = None) -> tuple[BatchCluster, SchedulerConfig]:
    """The live cluster and its scheduler settings (ServiceUnavailable when Slurm is not)."""
    commands = commands or SlurmCommands()
    cluster = cluster_from_records(commands.show_nodes(), commands.show_partitions())
    return cluster, scheduler_from_config(commands.run(["scontrol", "show", "config"]))


def config_values(text: str) -> dict[str, str]:
    """``scontrol show config`` lines ``Key = value`` -> dict with lower-case keys (Slurm
    spells PriorityWeightFairShare with a capital S; the man page does not)."""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and " " not in key.strip():
            values[key.strip().lower()] = value.strip()
    return values


SLURM_BF_RESOLUTION_S = 60
"""Slurm's default bf_resolution (backfill.c, BACKFILL_RESOLUTION)."""


def scheduler_from_config(text: str, base: SchedulerConfig | None = None) -> SchedulerConfig:
    """Priority weights and backfill parameters from ``scontrol show config`` text. Slurm's
    backfill reserves resources for every job it tests, so the reservation depth is
    ``bf_max_job_test`` (EASY would be 1)."""
    v = config_values(text)
    base = base or SchedulerConfig()

    def weight(key: str) -> int:
        return int(v.get(key.lower(), "0") or 0)

    def seconds(key: str, default: int) -> int:
        value = slurm_duration(v.get(key.lower()))
        return int(value) if value is not None else default

    params = dict(p.partition("=")[::2] for p in v.get("schedulerparameters", "").split(",") if p)
    max_test = int(params.get("bf_max_job_test", base.bf_max_job_test))
    weights = PriorityWeights(
        age=weight("PriorityWeightAge"),
        fairshare=weight("PriorityWeightFairshare"),
        job_size=weight("PriorityWeightJobSize"),
        partition=weight("PriorityWeightPartition"),
        qos=weight("PriorityWeightQOS"),
        max_age_s=seconds("PriorityMaxAge", 7 * 86400),
        decay_half_life_s=seconds("PriorityDecayHalfLife", 7 * 86400),
        favor_small=v.get("priorityfavorsmall", "No").lower() in {"yes", "1"},
    )
    multifactor = "multifactor" in v.get("prioritytype", "priority/multifactor")
    return replace(
        base,
        order="priority" if multifactor else "fifo",
        backfill="backfill" in v.get("schedulertype", "sched/backfill"),
        bf_interval_s=int(params.get("bf_interval", base.bf_interval_s)),
        bf_window_s=int(params["bf_window"]) * 60 if "bf_window" in params else base.bf_window_s,
        bf_resolution_s=int(params.get("bf_resolution", SLURM_BF_RESOLUTION_S)),
        bf_max_job_test=max_test,
        reservation_depth=max_test,  # Slurm reserves for every job its backfill pass tests
        calc_period_s=seconds("PriorityCalcPeriod", base.calc_period_s),
        weights=weights,
    )
