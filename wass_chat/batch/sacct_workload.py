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

from sim.batch.model import UNLIMITED, Workload, WorkloadError, dependency_arrays
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
        pl.coalesce(_gpus("alloc_tres"), _gpus("req_tres"), pl.lit(0)).cast(pl.Int64).alias("gpus"),
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
    ptr, parents = _dependencies(cols["raw"].to_list(), cols["dependency"].to_list())
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


def _gpus(column: str) -> pl.Expr:
    return pl.col(column).str.extract(r"gres/gpu(?::[^=,]*)?=(\d+)").cast(pl.Int64)


def _codes(column: pl.Series) -> tuple[tuple[str, ...], np.ndarray]:
    names, codes = np.unique(column.to_numpy().astype(str), return_inverse=True)
    return tuple(str(n) for n in names), codes.astype(np.int64)


_PARENT = re.compile(r"after(?:ok|any|notok|corr|burstbuffer)?:([\d:_+]+)")


def _dependencies(raw_ids: list[int | None], deps: list[str]) -> tuple[np.ndarray, np.ndarray]:
    if not any(deps):
        return np.zeros(1, np.int64), np.zeros(0, np.int64)
    row_of = {r: i for i, r in enumerate(raw_ids) if r is not None}
    parents: list[list[int]] = []
    for i, text in enumerate(deps):
        found = []
        for group in _PARENT.findall(text or ""):
            for item in group.split(":"):
                head = item.split("+")[0].split("_")[0]
                if head.isdigit() and int(head) in row_of and row_of[int(head)] < i:
                    found.append(row_of[int(head)])
        parents.append(sorted(set(found)))
    return dependency_arrays(parents)
