"""Jobs from the sacct cache (the parsed table of :mod:`wass_chat.sacct.parse`) as a workload.

Allocation rows that started are replayed (steps are part of their job; jobs that never
started consumed nothing and are counted, not replayed). Per job: submission, Eligible
(the earliest start for a job without a dependency; a dependent job waits for its parents
in the replay instead), recorded Elapsed as the run time (a job still running: the time so
far), Timelimit (UNLIMITED and Partition_Limit: the partition's MaxTime), the first of its
partitions, NNodes, and per node ``ceil(NCPUS / NNodes)`` CPUs, ReqMem / NNodes bytes and the
GPUs of AllocTRES (else ReqTRES) over NNodes. Dependencies (``afterok:12``, ``afterany:12:13``,
``after...``) name parents by JobIDRaw; parents outside the replayed set are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import polars as pl

from sim.batch.model import UNLIMITED, Workload, WorkloadError
from sim.errors import raise_if


@dataclass(frozen=True)
class SacctWorkload:
    """The workload and what was left out of it."""

    workload: Workload
    never_started: int
    still_running: int
    start: datetime | None
    end: datetime | None


def workload_from_jobs(
    jobs: pl.DataFrame | pl.LazyFrame, start: datetime | None = None, end: datetime | None = None
) -> SacctWorkload:
    """The replayable jobs submitted in ``[start, end)`` (all when unset)."""
    frame = jobs.lazy().filter(~pl.col("is_step"))
    if start is not None:
        frame = frame.filter(pl.col("submit") >= start)
    if end is not None:
        frame = frame.filter(pl.col("submit") < end)
    table = frame.filter(pl.col("submit").is_not_null()).collect()
    never = int(table.filter(pl.col("start").is_null()).height)
    ran = table.filter(pl.col("start").is_not_null() & pl.col("elapsed_s").is_not_null())
    raise_if(
        ["no job that started in the period"] if ran.is_empty() else [],
        WorkloadError,
        "sacct cache",
    )
    ran = ran.with_columns(pl.col("job_id_raw").cast(pl.Int64, strict=False).alias("__raw")).sort(
        "submit", "__raw"
    )
    running = int((ran["state"] == "RUNNING").sum())
    return SacctWorkload(_workload(ran), never, running, start, end)


def _seconds(column: str) -> pl.Expr:
    return pl.col(column).dt.epoch("s")


def _workload(t: pl.DataFrame) -> Workload:
    has_dep = pl.col("dependency").is_not_null() & (pl.col("dependency") != "")
    cols = t.select(
        _seconds("submit").alias("submit"),
        pl.when(has_dep)
        .then(_seconds("submit"))
        .otherwise(
            pl.max_horizontal(
                _seconds("submit"), pl.coalesce(_seconds("eligible"), _seconds("submit"))
            )
        )
        .alias("earliest"),
        pl.col("elapsed_s").cast(pl.Int64).clip(0).alias("runtime"),
        pl.when(pl.col("timelimit_unlimited") | pl.col("timelimit_s").is_null())
        .then(UNLIMITED)
        .otherwise(pl.col("timelimit_s"))
        .cast(pl.Int64)
        .alias("limit"),
        pl.col("nnodes").fill_null(1).clip(1).cast(pl.Int64).alias("nnodes"),
        pl.col("ncpus").fill_null(1).clip(1).cast(pl.Int64).alias("ncpus"),
        pl.col("req_mem_bytes").fill_null(0).cast(pl.Int64).alias("mem"),
        pl.coalesce(gpus("alloc_tres"), gpus("req_tres"), pl.lit(0)).cast(pl.Int64).alias("gpus"),
        pl.col("partition").fill_null("unknown").str.split(",").list.first().alias("partition"),
        pl.col("user").fill_null("unknown").alias("user"),
        pl.col("qos").fill_null("normal").alias("qos"),
        _seconds("start").alias("start"),
        pl.col("job_id").alias("job_id"),
        pl.col("__raw").alias("raw"),
        pl.col("dependency").fill_null("").alias("dependency"),
    )
    nnodes = cols["nnodes"].to_numpy()
    partitions, part_idx = _codes(cols["partition"])
    users, user_idx = _codes(cols["user"])
    qos_names, qos_idx = _codes(cols["qos"])
    limit = cols["limit"].to_numpy()
    ptr, parents = _dependencies(cols["raw"], cols["dependency"])
    return Workload(
        job_ids=tuple(cols["job_id"].to_list()),
        submit_s=cols["submit"].to_numpy(),
        earliest_s=cols["earliest"].to_numpy(),
        runtime_s=cols["runtime"].to_numpy(),
        limit_s=limit,
        estimate_s=limit.copy(),
        nnodes=nnodes,
        cpus_per_node=-(-cols["ncpus"].to_numpy() // nnodes),
        mem_per_node=cols["mem"].to_numpy() // nnodes,
        gpus_per_node=-(-cols["gpus"].to_numpy() // nnodes),
        partition=part_idx,
        user=user_idx,
        qos=qos_idx,
        recorded_start_s=cols["start"].to_numpy(),
        partitions=partitions,
        users=users,
        qos_names=qos_names,
        dep_ptr=ptr,
        dep_parent=parents,
    )


def gpus(column: str) -> pl.Expr:
    """The GPU count of a TRES column (``gres/gpu=4`` or ``gres/gpu:a100=4``), null if none."""
    return pl.col(column).str.extract(r"gres/gpu(?::[^=,]*)?=(\d+)").cast(pl.Int64)


def _codes(column: pl.Series) -> tuple[tuple[str, ...], np.ndarray]:
    """Sorted distinct names and each row's index among them (as ``np.unique`` gives, UTF-8
    byte order being code point order, without converting millions of strings)."""
    names = column.unique().sort()
    codes = column.rank("dense").cast(pl.Int64).to_numpy() - 1
    return tuple(names.to_list()), codes


_PARENT = re.compile(r"after(?:ok|any|notok|corr|burstbuffer)?:([\d:_+]+)")


def _dependencies(raw_ids: pl.Series, deps: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """(``dep_ptr``, ``dep_parent``) from JobIDRaw and Dependency: only the jobs that name a
    dependency are parsed (a tenth of a large site's jobs), parents found by binary search."""
    dependent = np.flatnonzero(deps.fill_null("").ne("").to_numpy())
    if not len(dependent):
        return np.zeros(1, np.int64), np.zeros(0, np.int64)
    raw = raw_ids.fill_null(-1).to_numpy().astype(np.int64)
    order = np.argsort(raw, kind="stable")
    sorted_raw = raw[order]
    texts = deps.gather(dependent).to_list()
    counts = np.zeros(len(raw), np.int64)
    parents: list[int] = []
    for i, text in zip(dependent.tolist(), texts, strict=True):
        found = set()
        for group in _PARENT.findall(text):
            for item in group.split(":"):
                head = item.split("+")[0].split("_")[0]
                if not head.isdigit():
                    continue
                at = int(np.searchsorted(sorted_raw, int(head), side="right")) - 1
                if at >= 0 and sorted_raw[at] == int(head) and order[at] < i:
                    found.add(int(order[at]))  # the last row with that id, as a dict keeps
        parents += sorted(found)
        counts[i] = len(found)
    ptr = np.zeros(len(raw) + 1, np.int64)
    ptr[1:] = np.cumsum(counts)
    return ptr, np.asarray(parents, np.int64)
