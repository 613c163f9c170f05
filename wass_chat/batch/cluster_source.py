"""Where the simulated cluster comes from when Slurm does not describe it, and what-if edits.

* the jobs seen in accounting, when nothing better exists (:func:`cluster_from_jobs`): every
  node a job ran on, with the largest per-node request seen on it, labelled as inferred;
  :func:`with_peak_use` raises each node to the most it held at once;
* the what-ifs' edits of a cluster: nodes added or removed, a partition's MaxTime.

The cluster Slurm itself describes (``scontrol`` records and configuration) is read on the
Slurm floor, by :mod:`wass_chat.slurm.scontrol_cluster`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

import numpy as np
import polars as pl

from sim.batch.model import BatchCluster, BatchNode, Partition
from sim.errors import PlatformError
from wass_chat.analytics.utilisation import host_ranges
from wass_chat.batch.sacct_workload import gpus
from wass_chat.slurm.hostlist import EMPTY


def cluster_from_jobs(jobs: pl.DataFrame) -> BatchCluster:
    """Nodes seen in ``jobs`` (the parsed sacct table), each with the largest per-node CPUs,
    memory and GPUs any job had there; partitions as the sets of nodes their jobs used.

    Capacity is a lower bound (a node never filled is smaller than it is): say so where it is
    used. Node lists are read as (prefix, range) rows by the analytics' vectorised hostlist
    reading (:func:`~wass_chat.analytics.utilisation.host_ranges`, which expands the rare
    lists it cannot hold through :func:`~wass_chat.slurm.hostlist.expand`): 1.8 s of CPU for
    the 1.5 M jobs of ``report bench``, against 11.4 s when every distinct list was expanded.
    """
    ran = jobs.filter(_ran_on_nodes())
    if ran.is_empty():
        raise PlatformError("jobs", ["no job with a node list: the cluster cannot be inferred"])
    per_job = ran.select(
        pl.col("partition").str.split(",").list.first().alias("partition"),
        pl.col("node_list").str.strip_chars(),
        (pl.col("ncpus") / pl.col("nnodes")).ceil().cast(pl.Int64).alias("cpus"),
        (pl.col("req_mem_bytes").fill_null(0) / pl.col("nnodes")).cast(pl.Int64).alias("mem"),
        (pl.coalesce(gpus("alloc_tres"), gpus("req_tres"), pl.lit(0)) / pl.col("nnodes"))
        .ceil()
        .cast(pl.Int64)
        .alias("gpus"),
    )
    per_list = per_job.group_by("partition", "node_list").agg(
        pl.col("cpus").max(), pl.col("mem").max(), pl.col("gpus").max()
    )
    ranges = host_ranges(per_list)
    node = ["prefix", "width", "index"]  # a node, as integers until its name is needed
    exploded = (
        ranges.group_by("partition", "prefix", "width", "lo", "hi")
        .agg(pl.col("cpus").max(), pl.col("mem").max(), pl.col("gpus").max())
        .with_columns(_node_indices())
        .explode("index")
    )
    caps = (
        exploded.group_by(node)
        .agg(pl.col("cpus").max(), pl.col("mem").max(), pl.col("gpus").max())
        .with_columns(_node_name())
    )
    nodes = exploded.select("partition", *node).unique().join(caps.select(*node, "name"), on=node)
    caps = caps.select("name", "cpus", "mem", "gpus")
    cap_of = {name: (cpus, mem, gpus) for name, cpus, mem, gpus in caps.iter_rows()}
    order = sorted(cap_of, key=_natural)
    batch_nodes = tuple(
        BatchNode(
            n, max(cap_of[n][0], 1), cap_of[n][1], cap_of[n][2], "gpu" if cap_of[n][2] else "cpu"
        )
        for n in order
    )
    members = nodes.group_by("partition").agg(pl.col("name").unique())
    parts = tuple(
        Partition(part, tuple(sorted(names, key=_natural)))
        for part, names in sorted(members.iter_rows())
    )
    return BatchCluster(batch_nodes, parts)


def with_peak_use(cluster: BatchCluster, jobs: pl.DataFrame) -> tuple[BatchCluster, int]:
    """``cluster`` with each node's CPUs, memory and GPUs raised to the most the record shows
    it holding at once (the jobs' per-node requests summed over every instant), and how many
    nodes grew. A node that ran several jobs side by side is at least as large as their sum:
    still a lower bound, a tighter one than the largest single request
    (:func:`cluster_from_jobs`)."""
    ran = jobs.filter(_ran_on_nodes())
    if ran.is_empty():
        return cluster, 0
    start = pl.col("start").dt.epoch("s")
    end = pl.coalesce(pl.col("end").dt.epoch("s"), start + pl.col("elapsed_s").fill_null(0))
    per_job = ran.select(
        pl.col("node_list").str.strip_chars(),
        start.alias("t0"),
        end.alias("t1"),
        (pl.col("ncpus") / pl.col("nnodes")).ceil().cast(pl.Int64).alias("cpus"),
        (pl.col("req_mem_bytes").fill_null(0) / pl.col("nnodes")).cast(pl.Int64).alias("mem"),
        (pl.coalesce(gpus("alloc_tres"), gpus("req_tres"), pl.lit(0)) / pl.col("nnodes"))
        .ceil()
        .cast(pl.Int64)
        .alias("gpus"),
    ).filter(pl.col("t1") > pl.col("t0"))
    rows = (
        host_ranges(per_job)
        .with_columns(_node_indices())
        .explode("index")
        .with_columns(_node_name())
    )
    amounts = ("cpus", "mem", "gpus")
    events = pl.concat(
        [
            rows.select("name", pl.col("t0").alias("t"), *amounts),
            rows.select("name", pl.col("t1").alias("t"), *(-pl.col(a) for a in amounts)),
        ]
    )
    # At one instant, ends before starts (a node freed and refilled is not held twice).
    peaks = (
        events.sort("name", "t", "cpus")
        .with_columns(pl.col(a).cum_sum().over("name") for a in amounts)
        .group_by("name")
        .agg(pl.col(a).max() for a in amounts)
    )
    peak_of = {name: (c, m, g) for name, c, m, g in peaks.iter_rows()}
    grown = 0
    nodes = []
    for node in cluster.nodes:
        cpus, mem, gpu = peak_of.get(node.name, (0, 0, 0))
        bigger = replace(
            node,
            cpus=max(node.cpus, cpus),
            memory=max(node.memory, mem),
            gpus=max(node.gpus, gpu),
        )
        grown += bigger != node
        nodes.append(bigger)
    return BatchCluster(tuple(nodes), cluster.partitions), grown


def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name))


def add_nodes(
    cluster: BatchCluster, partition: str, count: int, like: str | None = None
) -> BatchCluster:
    """``count`` copies of a node of ``partition`` (its most common shape, or ``like``) added
    to that partition (and to every partition the model node belongs to)."""
    names = cluster.partition_names()
    if partition not in names:
        raise PlatformError(
            "what-if", [f"no partition {partition}; partitions: {', '.join(names)}"]
        )
    part = cluster.partitions[names.index(partition)]
    index = cluster.node_index()
    if like is not None and like not in index:
        raise PlatformError("what-if", [f"no node {like}"])
    shapes = [cluster.nodes[index[n]] for n in part.nodes]
    common = Counter((s.cpus, s.gpus) for s in shapes)
    model = (
        cluster.nodes[index[like]]
        if like
        else max(shapes, key=lambda n: (common[(n.cpus, n.gpus)], -index[n.name]))
    )
    new = tuple(replace(model, name=f"{partition}-added{k + 1}") for k in range(count))
    owners = {p.name for p in cluster.partitions if model.name in p.nodes}
    parts = tuple(
        replace(p, nodes=p.nodes + tuple(n.name for n in new)) if p.name in owners else p
        for p in cluster.partitions
    )
    return BatchCluster(cluster.nodes + new, parts)


def remove_nodes(cluster: BatchCluster, partition: str, count: int) -> BatchCluster:
    """The last ``count`` nodes of ``partition`` removed from the cluster."""
    names = cluster.partition_names()
    if partition not in names:
        raise PlatformError(
            "what-if", [f"no partition {partition}; partitions: {', '.join(names)}"]
        )
    part = cluster.partitions[names.index(partition)]
    if count >= len(part.nodes):
        raise PlatformError(
            "what-if", [f"partition {partition} has {len(part.nodes)} nodes: cannot remove {count}"]
        )
    gone = set(part.nodes[len(part.nodes) - count :])
    nodes = tuple(n for n in cluster.nodes if n.name not in gone)
    parts = tuple(
        replace(p, nodes=tuple(n for n in p.nodes if n not in gone)) for p in cluster.partitions
    )
    return BatchCluster(nodes, tuple(p for p in parts if p.nodes))


def set_max_time(cluster: BatchCluster, partition: str, max_time_s: int) -> BatchCluster:
    """``partition``'s MaxTime set to ``max_time_s`` (``UNLIMITED`` for none)."""
    names = cluster.partition_names()
    if partition not in names:
        raise PlatformError(
            "what-if", [f"no partition {partition}; partitions: {', '.join(names)}"]
        )
    parts = tuple(
        replace(p, max_time_s=max_time_s) if p.name == partition else p for p in cluster.partitions
    )
    return BatchCluster(cluster.nodes, parts)


def describe(cluster: BatchCluster) -> dict[str, object]:
    """Nodes, CPUs, GPUs per partition (JSON-ready)."""
    index = cluster.node_index()
    out: dict[str, object] = {
        "nodes": len(cluster.nodes),
        "cpus": cluster.total_cpus,
        "gpus": sum(n.gpus for n in cluster.nodes),
    }
    out["partitions"] = {
        p.name: {
            "nodes": len(p.nodes),
            "cpus": sum(cluster.nodes[index[n]].cpus for n in p.nodes),
            "max_time_s": None if p.max_time_s < 0 else p.max_time_s,
        }
        for p in cluster.partitions
    }
    return out


def per_node_ceiling(values: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """``ceil(values / nodes)`` in integers (a request spread over its nodes)."""
    return -(-values // np.maximum(nodes, 1))


def _ran_on_nodes() -> pl.Expr:
    """Allocation rows of jobs that started on a recorded node list."""
    return (
        ~pl.col("is_step")
        & pl.col("node_list").is_not_null()
        & ~pl.col("node_list").str.strip_chars().is_in(list(EMPTY))
        & pl.col("start").is_not_null()
    )


def _node_indices() -> pl.Expr:
    """Each host range's node numbers as a list (``[-1]`` for a name without a number), to be
    exploded into one row per node."""
    numbered = (pl.col("width") > 0) & (pl.col("lo") >= 0)
    return (
        pl.when(numbered)
        .then(pl.int_ranges("lo", pl.col("hi") + 1))
        .otherwise(pl.lit([-1], dtype=pl.List(pl.Int64)))
        .alias("index")
    )


def _node_name() -> pl.Expr:
    """A node's name from its prefix and number, zero-padded to the range's width."""
    return (
        pl.when(pl.col("index") >= 0)
        .then(pl.concat_str("prefix", pl.col("index").cast(pl.String).str.zfill(pl.col("width"))))
        .otherwise("prefix")
        .alias("name")
    )
