"""Busy time over time and per node: interval arithmetic on sorted arrays, no loop over jobs.

*Utilisation over time*: for bucket edges ``t_k`` the busy node-seconds up to ``t`` are
``F(t) = sum_j w_j * clamp(t - s_j, 0, e_j - s_j)``, which splits into two prefix sums over the
sorted starts and the sorted ends; each bucket's busy time is ``F(t_k+1) - F(t_k)``.

*Per-node usage*: Slurm hostlists (``nid[000080-000143,000200]``) are expanded into index ranges;
per (prefix, digit width) a difference array adds each job's busy seconds to its range in O(1).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from wass_chat.analytics.period import Period

_MAX_DENSE_INDEX = 2_000_000
"""Above this index span a host family is expanded row by row instead of with a dense array."""
_HOST_GROUP = r"[^,\[]+(?:\[[^\]]*\])?"


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


def utilisation_over_time(loaded: pl.DataFrame, period: Period, nodes_seen: int) -> pl.DataFrame:
    """Per bucket: mean busy nodes, mean busy cores, and busy nodes / nodes seen."""
    ran = loaded.filter(pl.col("run_start").is_not_null())
    starts = ran["run_start"].to_numpy().astype(np.int64)
    ends = ran["run_end"].to_numpy().astype(np.int64)
    step = _bucket_seconds(period.bucket)
    edges = np.append(np.arange(0, period.seconds, step, dtype=np.int64), period.seconds)
    widths = np.diff(edges)
    node_busy = np.diff(
        busy_integral(starts, ends, ran["nnodes"].to_numpy().astype(np.int64), edges)
    )
    core_busy = np.diff(
        busy_integral(starts, ends, ran["ncpus"].to_numpy().astype(np.int64), edges)
    )
    busy_nodes = node_busy / widths
    return pl.DataFrame(
        {
            "bucket": [period.start + np.timedelta64(int(x), "s") for x in edges[:-1]],
            "busy_nodes": busy_nodes,
            "busy_cores": core_busy / widths,
            "utilisation": busy_nodes / nodes_seen if nodes_seen else np.full(len(widths), np.nan),
        }
    ).with_columns(pl.col("bucket").cast(pl.Datetime("us")))


def _bucket_seconds(bucket: str) -> int:
    return {"1m": 60, "10m": 600, "1h": 3600, "1d": 86400, "1w": 7 * 86400}[bucket]


def host_ranges(node_lists: pl.Series, busy: pl.Series) -> pl.DataFrame:
    """Hostlists -> rows (prefix, width, lo, hi, busy_s); unnumbered hosts get lo = hi = -1."""
    frame = pl.DataFrame({"node_list": node_lists, "busy_s": busy}).filter(
        pl.col("node_list").is_not_null()
    )
    # Most hostlists are one group ("nid000514", "nid[000080-000143]"): only the others pay
    # for the regex split at top-level commas.
    several = pl.col("node_list").str.contains(",", literal=True)
    groups = pl.concat(
        [
            frame.filter(~several).select(pl.col("node_list").alias("group"), "busy_s"),
            frame.filter(several)
            .select(pl.col("node_list").str.extract_all(_HOST_GROUP).alias("group"), "busy_s")
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
        pl.col("busy_s"),
    )


def node_usage(loaded: pl.DataFrame) -> pl.DataFrame:
    """Per node seen in the period: busy hours and jobs that touched it (busiest first)."""
    ran = loaded.filter(pl.col("run_start").is_not_null())
    busy = (ran["run_end"] - ran["run_start"]).cast(pl.Int64)
    ranges = host_ranges(ran["node_list"], busy)
    pieces: list[pl.DataFrame] = []
    for (prefix, width), group in ranges.partition_by(["prefix", "width"], as_dict=True).items():
        pieces.append(_expand_group(str(prefix), int(width), group))  # one per host family
    if not pieces:
        return pl.DataFrame(schema={"node": pl.String, "busy_hours": pl.Float64, "jobs": pl.Int64})
    return pl.concat(pieces).sort(["busy_hours", "node"], descending=[True, False])


def _expand_group(prefix: str, width: int, group: pl.DataFrame) -> pl.DataFrame:
    lo = group["lo"].to_numpy()
    if width == 0 or lo.min() < 0:
        names = group.select(pl.lit(prefix).alias("node"), "busy_s")
        return names.group_by("node").agg(
            (pl.col("busy_s").sum() / 3600).alias("busy_hours"),
            pl.len().cast(pl.Int64).alias("jobs"),
        )
    hi = group["hi"].to_numpy()
    if int(hi.max()) - int(lo.min()) > _MAX_DENSE_INDEX:
        return _expand_sparse(prefix, width, group)
    weights = group["busy_s"].to_numpy().astype(np.int64)
    base = int(lo.min())
    size = int(hi.max()) - base + 2
    busy = np.zeros(size, dtype=np.int64)
    jobs = np.zeros(size, dtype=np.int64)
    np.add.at(busy, lo - base, weights)
    np.add.at(busy, hi - base + 1, -weights)
    np.add.at(jobs, lo - base, 1)
    np.add.at(jobs, hi - base + 1, -1)
    jobs_per = np.cumsum(jobs)[:-1]
    seen = np.nonzero(jobs_per > 0)[0]
    return pl.DataFrame(
        {
            "index": seen + base,
            "busy_hours": np.cumsum(busy)[:-1][seen] / 3600,
            "jobs": jobs_per[seen],
        }
    ).select(
        pl.concat_str([pl.lit(prefix), pl.col("index").cast(pl.String).str.zfill(width)]).alias(
            "node"
        ),
        "busy_hours",
        "jobs",
    )


def _expand_sparse(prefix: str, width: int, group: pl.DataFrame) -> pl.DataFrame:
    """Row-wise expansion for host families with huge, sparse index ranges."""
    exploded = group.select(pl.int_ranges("lo", pl.col("hi") + 1).alias("index"), "busy_s").explode(
        "index"
    )
    return (
        exploded.group_by("index")
        .agg(
            (pl.col("busy_s").sum() / 3600).alias("busy_hours"),
            pl.len().cast(pl.Int64).alias("jobs"),
        )
        .select(
            pl.concat_str([pl.lit(prefix), pl.col("index").cast(pl.String).str.zfill(width)]).alias(
                "node"
            ),
            "busy_hours",
            "jobs",
        )
    )
