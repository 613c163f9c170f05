"""Busy time over time and per node: interval arithmetic on sorted arrays, no loop over jobs.

*Busy integral*: for bucket edges ``t_k`` the busy seconds up to ``t`` are
``F(t) = sum_j w_j * clamp(t - s_j, 0, e_j - s_j)``, which splits into two prefix sums over the
sorted starts and the sorted ends; each bucket's busy time is ``F(t_k+1) - F(t_k)``.

*Distinct nodes*: Slurm hostlists (``nid[000080-000143,000200]``) are expanded to one row per
(job, node); per node the jobs' intervals are merged (sort, running maximum of ends), so a node
shared by two jobs at once counts once. Busy node-seconds can then never exceed the nodes seen
times the bucket length, and utilisation against a capacity at least that large stays <= 100%.

*Allocated CPUs*: the same integral weighted by NCPUS. On a real cluster Slurm never allocates
more CPUs than are configured, so CPU utilisation above 100% means the stated capacity is wrong
or the data are inconsistent: such buckets are capped at 100% and counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from wass_chat.analytics.capacity import Capacity
from wass_chat.analytics.period import Period
from wass_chat.slurm.hostlist import expand

_HOST_GROUP = r"[^,\[]+(?:\[[^\]]*\])?"
_FAMILY_STRIDE = 2**32
"""A node's key is ``family * 2**32 + index``: one int64 per node, cheap to sort and group."""


def busy_integral(
    starts: np.ndarray, ends: np.ndarray, weights: np.ndarray, edges: np.ndarray
) -> np.ndarray:
    """``F(edges)``: weighted busy seconds accumulated up to each edge (int64, exact)."""
    order_s = np.argsort(starts, kind="stable")
    order_e = np.argsort(ends, kind="stable")
    s, ws = starts[order_s], weights[order_s]
    e, we = ends[order_e], weights[order_e]
    cum_ws = np.concatenate([[0], np.cumsum(ws)])
    cum_wss = np.concatenate([[0], np.cumsum(ws * s)])
    cum_we = np.concatenate([[0], np.cumsum(we)])
    cum_wee = np.concatenate([[0], np.cumsum(we * e)])
    i = np.searchsorted(s, edges, side="right")
    k = np.searchsorted(e, edges, side="right")
    return (edges * cum_ws[i] - cum_wss[i]) - (edges * cum_we[k] - cum_wee[k])


@dataclass(frozen=True)
class NodeIntervals:
    """Merged busy intervals per distinct node, plus the per-node job counts and names."""

    merged: pl.DataFrame
    """key, run_start, run_end: disjoint per node after merging (the cluster-wide view)."""
    by_partition: pl.DataFrame
    """key, partition, run_start, run_end: disjoint per (node, partition)."""
    per_node: pl.DataFrame
    """node, busy_hours (distinct), jobs (that touched it), busiest first."""


def utilisation_over_time(
    loaded: pl.DataFrame, period: Period, capacity: Capacity, intervals: NodeIntervals
) -> pl.DataFrame:
    """Per bucket: busy distinct nodes, allocated CPUs, and utilisation against ``capacity``.

    The basis is CPUs when the capacity knows them, else nodes. ``capped`` marks buckets whose
    allocated CPUs exceeded the configured CPUs (capped at 100%, counted in the insight).
    """
    ran = loaded.filter(pl.col("run_start").is_not_null())
    edges = bucket_edges(period)
    widths = np.diff(edges)
    merged = intervals.merged
    node_busy = np.diff(
        busy_integral(
            merged["run_start"].to_numpy().astype(np.int64),
            merged["run_end"].to_numpy().astype(np.int64),
            np.ones(merged.height, dtype=np.int64),
            edges,
        )
    )
    cpu_busy = np.diff(
        busy_integral(
            ran["run_start"].to_numpy().astype(np.int64),
            ran["run_end"].to_numpy().astype(np.int64),
            ran["ncpus"].fill_null(0).to_numpy().astype(np.int64),
            edges,
        )
    )
    busy_nodes = node_busy / widths
    alloc_cpus = cpu_busy / widths
    if capacity.cpus:
        raw = alloc_cpus / capacity.cpus
    else:
        denominator = max(capacity.nodes or 0, intervals.per_node.height)
        raw = busy_nodes / denominator if denominator else np.zeros(len(widths))
    return pl.DataFrame(
        {
            "bucket": [period.start + np.timedelta64(int(x), "s") for x in edges[:-1]],
            "busy_nodes": busy_nodes,
            "alloc_cpus": alloc_cpus,
            "utilisation": np.minimum(raw, 1.0),
            "capped": raw > 1.0 + 1e-9,
        }
    ).with_columns(pl.col("bucket").cast(pl.Datetime("us")))


def partition_utilisation(
    loaded: pl.DataFrame, period: Period, capacity: Capacity, intervals: NodeIntervals
) -> pl.DataFrame:
    """Per partition: mean busy distinct nodes and allocated CPUs over the period, and the share
    of the partition's configured nodes/CPUs (of its nodes seen when no capacity is known)."""
    merged = intervals.by_partition.with_columns(
        (pl.col("run_end") - pl.col("run_start")).alias("seconds")
    )
    nodes = merged.group_by("partition").agg(
        (pl.col("seconds").sum() / period.seconds).alias("busy_nodes"),
        pl.col("key").n_unique().alias("nodes_seen"),
    )
    ran = loaded.filter(pl.col("run_start").is_not_null())
    cpus = ran.group_by("partition").agg(
        ((pl.col("run_end") - pl.col("run_start")) * pl.col("ncpus"))
        .sum()
        .truediv(period.seconds)
        .alias("alloc_cpus")
    )
    table = nodes.join(cpus, on="partition", how="full", coalesce=True).fill_null(0)
    configured = [(p.name, p.nodes, p.cpus) for p in capacity.partitions]
    conf = pl.DataFrame(
        configured,
        schema={"partition": pl.String, "nodes": pl.Int64, "cpus": pl.Int64},
        orient="row",
    )
    table = table.join(conf, on="partition", how="left")
    by_cpu = pl.col("cpus").is_not_null() & (pl.col("cpus") > 0)
    node_base = pl.max_horizontal(pl.col("nodes").fill_null(0), pl.col("nodes_seen"))
    share = (
        pl.when(by_cpu)
        .then(pl.col("alloc_cpus") / pl.col("cpus"))
        .otherwise(pl.col("busy_nodes") / node_base)
    )
    return table.with_columns(
        (100 * pl.min_horizontal(share, pl.lit(1.0))).round(1).alias("utilisation_pct"),
        pl.when(by_cpu)
        .then(pl.lit("CPUs"))
        .when(pl.col("nodes").is_not_null())
        .then(pl.lit("nodes"))
        .otherwise(pl.lit("nodes seen (fallback)"))
        .alias("basis"),
    ).sort("partition")


def bucket_edges(period: Period) -> np.ndarray:
    """Bucket edges in seconds from the period start; the last bucket may be shorter."""
    step = _bucket_seconds(period.bucket)
    return np.append(np.arange(0, period.seconds, step, dtype=np.int64), period.seconds)


def _bucket_seconds(bucket: str) -> int:
    return {"1m": 60, "10m": 600, "1h": 3600, "1d": 86400, "1w": 7 * 86400}[bucket]


_COMPLEX = r"\][^,]|\[[^\]]*\[|\][^,\[]*\["
"""A hostlist item with text after its bracket group or two groups (``c[1-2]n[01-02]``,
``gpu-a[1-2]-b``), which the vectorised (prefix, range) reading cannot hold."""


def _expand_complex_lists(frame: pl.DataFrame) -> pl.DataFrame:
    """Rewrite the few node lists the range reading cannot hold as the plain names Slurm means
    (each distinct list expanded once by :func:`wass_chat.slurm.hostlist.expand`)."""
    complex_rows = pl.col("node_list").str.contains(_COMPLEX)
    lists = frame.filter(complex_rows)["node_list"].unique().to_list()
    if not lists:
        return frame
    plain = {text: ",".join(expand(text)) for text in lists}
    return frame.with_columns(
        pl.when(complex_rows)
        .then(pl.col("node_list").replace_strict(plain, default=None))
        .otherwise(pl.col("node_list"))
        .alias("node_list")
    )


def host_ranges(frame: pl.DataFrame) -> pl.DataFrame:
    """Rows with ``node_list`` -> rows (prefix, width, lo, hi, + the other columns).

    Unnumbered hosts get ``lo = hi = -1``; a hostlist of several groups gives several rows.
    """
    frame = _expand_complex_lists(frame.filter(pl.col("node_list").is_not_null()))
    others = [c for c in frame.columns if c != "node_list"]
    # Most hostlists are one group ("nid000514", "nid[000080-000143]"): only the others pay
    # for the regex split at top-level commas.
    several = pl.col("node_list").str.contains(",", literal=True)
    groups = pl.concat(
        [
            frame.filter(~several).select(pl.col("node_list").alias("group"), *others),
            frame.filter(several)
            .select(pl.col("node_list").str.extract_all(_HOST_GROUP).alias("group"), *others)
            .explode("group"),
        ]
    )
    split = pl.col("group").str.split_exact("[", 1)
    parts = groups.with_columns(
        split.struct.field("field_0").alias("base"),
        split.struct.field("field_1").str.strip_chars_end("]").alias("ranges"),
    )
    if parts["ranges"].str.contains(",", literal=True).any():
        parts = parts.with_columns(pl.col("ranges").str.split(",")).explode("ranges")
    bounds = pl.col("ranges").str.split_exact("-", 1)
    lo_text = bounds.struct.field("field_0")
    hi_text = pl.coalesce(bounds.struct.field("field_1"), lo_text)
    plain = pl.col("ranges").is_null()
    digits = pl.col("base").str.extract(r"^(.*?)(\d+)$", 2)
    return parts.select(
        pl.when(plain)
        .then(pl.col("base").str.extract(r"^(.*?)(\d*)$", 1))
        .otherwise("base")
        .alias("prefix"),
        pl.when(plain)
        .then(digits.str.len_chars())
        .otherwise(lo_text.str.len_chars())
        .fill_null(0)
        .alias("width"),
        pl.when(plain)
        .then(digits.str.to_integer(strict=False))
        .otherwise(lo_text.str.to_integer(strict=False))
        .fill_null(-1)
        .alias("lo"),
        pl.when(plain)
        .then(digits.str.to_integer(strict=False))
        .otherwise(hi_text.str.to_integer(strict=False))
        .fill_null(-1)
        .alias("hi"),
        *others,
    )


def node_intervals(loaded: pl.DataFrame) -> NodeIntervals:
    """Every (job, node) busy interval inside the period, merged per distinct node."""
    ran = loaded.filter(pl.col("run_start").is_not_null() & pl.col("node_list").is_not_null())
    ranges = host_ranges(ran.select("node_list", "partition", "run_start", "run_end"))
    families = ranges.select("prefix", "width").unique(maintain_order=True).with_row_index("family")
    ranges = ranges.join(families, on=["prefix", "width"], how="left")
    unnumbered = (pl.col("width") == 0) | (pl.col("lo") < 0)
    rows = (
        ranges.with_columns(
            pl.when(unnumbered).then(0).otherwise(pl.col("lo")).alias("lo"),
            pl.when(unnumbered).then(0).otherwise(pl.col("hi")).alias("hi"),
        )
        .select(
            pl.int_ranges("lo", pl.col("hi") + 1).alias("index"),
            "family",
            "partition",
            pl.col("run_start").cast(pl.Int64),
            pl.col("run_end").cast(pl.Int64),
        )
        .explode("index")
    )
    rows = rows.with_columns(
        (pl.col("family").cast(pl.Int64) * _FAMILY_STRIDE + pl.col("index")).alias("key")
    ).drop("family", "index")
    by_partition = merge_intervals(rows, ["key", "partition"])
    merged = merge_intervals(by_partition, ["key"])  # fewer rows than merging from scratch
    jobs = rows.group_by("key").agg(pl.len().cast(pl.Int64).alias("jobs"))
    busy = merged.group_by("key").agg(
        ((pl.col("run_end") - pl.col("run_start")).sum() / 3600).alias("busy_hours")
    )
    names = families.select(
        pl.col("family").cast(pl.Int64), "prefix", pl.col("width").cast(pl.Int64)
    )
    per_node = (
        busy.join(jobs, on="key")
        .with_columns(
            (pl.col("key") // _FAMILY_STRIDE).alias("family"),
            (pl.col("key") % _FAMILY_STRIDE).alias("index"),
        )
        .join(names, on="family")
        .select(
            pl.when(pl.col("width") == 0)
            .then(pl.col("prefix"))
            .otherwise(
                pl.concat_str(
                    [pl.col("prefix"), pl.col("index").cast(pl.String).str.zfill(pl.col("width"))]
                )
            )
            .alias("node"),
            "busy_hours",
            "jobs",
        )
        .sort(["busy_hours", "node"], descending=[True, False])
    )
    return NodeIntervals(merged, by_partition, per_node)


def merge_intervals(rows: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Union of [run_start, run_end) per ``by`` (``key``, optionally with ``partition``):
    overlapping or touching intervals become one, so concurrent jobs on a shared node count
    it once.

    Sorted by (group, start) (one int64 key when it fits), a running maximum of the ends tells
    where a new piece begins (its start lies after every earlier end of its group). Shifting
    each group's times by ``group rank x (latest end + 1)`` lets one global running maximum
    serve every group.
    """
    rows = rows.filter(pl.col("run_end") > pl.col("run_start"))
    if rows.is_empty():
        return rows.select(*by, "run_start", "run_end")
    combined = rows["key"].to_numpy().astype(np.int64)
    if "partition" in by:
        codes = rows["partition"].fill_null("").cast(pl.Categorical).to_physical().to_numpy()
        combined = combined * (int(codes.max()) + 1) + codes.astype(np.int64)
    starts = rows["run_start"].to_numpy().astype(np.int64)
    ends = rows["run_end"].to_numpy().astype(np.int64)
    low = int(starts.min())
    span = int(starts.max()) - low + 1
    if int(combined.max()) < 2**62 // span:  # one int64 key: a stable argsort, several times
        order = np.argsort(combined * span + (starts - low), kind="stable")  # cheaper than
    else:  # lexsort, and nearly free on the second merge, whose input is already in order
        order = np.lexsort((starts, combined))
    keys = combined[order]
    new_group = np.ones(len(keys), dtype=bool)
    new_group[1:] = keys[1:] != keys[:-1]
    rank = np.cumsum(new_group) - 1
    shift = rank * (int(ends.max()) - min(int(starts.min()), 0) + 1)
    s, e = starts[order] + shift, ends[order] + shift
    reach = np.maximum.accumulate(e)
    fresh = np.ones(len(s), dtype=bool)
    fresh[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(fresh)
    pieces = rows[order[first]].select(*by)
    return pieces.with_columns(
        pl.Series("run_start", starts[order[first]]),
        pl.Series("run_end", np.maximum.reduceat(e, first) - shift[first]),
    )


def node_usage(loaded: pl.DataFrame) -> pl.DataFrame:
    """Per node seen in the period: distinct busy hours and jobs that touched it (busiest first)."""
    return node_intervals(loaded).per_node
