"""One job's efficiency, as ``seff JOBID`` and reportseff show it, with advice on its requests.

:func:`jobs_efficiency` picks jobs from the accounting cache (by id, user, account, period) and
computes each one's figures with :func:`~wass_chat.analytics.efficiency.efficiency_table`, the
same code the report aggregates. :func:`advice` turns a job's own figures into suggestions for
its next request; each is checked against what the job used, so it never asks for less than
that (with a margin), and none is given where the figure is only a lower bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from sim.errors import InputError, UserFacingError
from wass_chat.analytics.efficiency import MEMORY_BASES, efficiency_table, step_usage
from wass_chat.analytics.gpu_usage import GpuFigures, gpu_advice, gpu_table, job_gpu_figures
from wass_chat.analytics.period import ACTIVE_STATES
from wass_chat.sacct.fetch import fetch_jobs, sacct_version
from wass_chat.sacct.parse import parse_sacct_text

WASTEFUL_CPU = 0.5
"""Below this CPU efficiency (and with more than one CPU) a job asked for too many CPUs."""
WASTEFUL_MEMORY = 0.5
"""Below this memory efficiency a job asked for too much memory..."""
MEMORY_SLACK_BYTES = 2**30
"""...when, besides, more than this much of its request went unused."""
WASTEFUL_TIME = 0.25
"""Below this share of its time limit a completed job asked for too much time..."""
TIME_SLACK_S = 3600
"""...when, besides, more than this much of its limit went unused."""
MARGIN = 1.25
"""Headroom over what a job used in a suggested request (memory, CPUs); time gets 1.5."""


@dataclass(frozen=True)
class JobEfficiency:
    """One job's usage against its requests; percentages are None where not measurable."""

    job_id: str
    job_id_raw: str | None
    user: str | None
    account: str | None
    partition: str | None
    state: str | None
    nnodes: int | None
    ncpus: int | None
    elapsed_s: int | None
    timelimit_s: int | None
    cpu_used_s: float | None
    cpu_efficiency_pct: float | None
    mem_used_bytes: float | None
    mem_request_bytes: float | None
    memory_efficiency_pct: float | None
    memory_basis: str | None
    """How memory used was measured (:data:`MEMORY_BASES`); the last is a lower bound."""
    time_efficiency_pct: float | None
    wasted_core_hours: float | None
    usage_recorded: bool
    """False when the job ran but accounting gathered nothing (TotalCPU 0, no steps)."""
    start: str | None = None
    end: str | None = None
    gpu: dict[str, Any] | None = None
    """The GPU figures (:class:`~wass_chat.analytics.gpu_usage.GpuFigures`) of a job that held
    GPUs, else None."""
    suggestions: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "suggestions": list(self.suggestions)}


def jobs_efficiency(
    jobs: pl.LazyFrame,
    job_ids: Sequence[str] = (),
    user: str | None = None,
    account: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
) -> list[JobEfficiency]:
    """The efficiency of the chosen jobs, in the order of ``job_ids`` (else most waste first).

    A job id matches sacct's JobID (``123``, ``123_4``) or JobIDRaw; an array's id (``123``)
    matches all its tasks. With no ids, the finished jobs submitted in ``[start, end)`` of
    ``user`` / ``account`` are taken (ended, and started or with an Elapsed time). Steps are
    never listed: their usage is their job's.
    """
    allocations = jobs.filter(~pl.col("is_step"))
    if job_ids:
        wanted = [str(j) for j in job_ids]
        numeric = [int(j) for j in wanted if j.isdigit()]
        allocations = allocations.filter(
            pl.col("job_id").is_in(wanted)
            | pl.col("job_id_raw").is_in(wanted)
            | pl.col("array_job_id").is_in(numeric)
        )
    else:  # jobs that ran and ended (exports may lack Start/End: Elapsed tells then)
        ran = pl.col("start").is_not_null() | (pl.col("elapsed_s").fill_null(0) > 0)
        allocations = allocations.filter(ran & ~pl.col("state").is_in(ACTIVE_STATES))
    for column, value in (("user", user), ("account", account)):
        if value is not None:
            allocations = allocations.filter(pl.col(column) == value)
    if start is not None:
        allocations = allocations.filter(pl.col("submit") >= start)
    if end is not None:
        allocations = allocations.filter(pl.col("submit") < end)
    chosen = allocations.collect()
    if chosen.is_empty():
        return []
    parents = chosen["job_id"].to_list()
    step_rows = jobs.filter(
        pl.col("is_step") & pl.col("job_id").str.split(".").list.first().is_in(parents)
    ).collect()
    steps = step_usage(step_rows.lazy()).collect()
    table = efficiency_table(chosen, steps)
    gpu_of = _gpu_figures(chosen, step_rows)
    if job_ids:
        order = {j: i for i, j in enumerate(job_ids)}
        table = table.with_columns(
            pl.coalesce(
                pl.col("job_id").replace_strict(order, default=None, return_dtype=pl.Int64),
                pl.col("job_id_raw").replace_strict(order, default=None, return_dtype=pl.Int64),
                pl.col("array_job_id")
                .cast(pl.String)
                .replace_strict(order, default=None, return_dtype=pl.Int64),
            ).alias("__order")
        ).sort("__order", "job_id")
    else:  # most waste first; jobs without recorded usage last (their waste is not known)
        table = table.sort(
            "usage_recorded",
            "wasted_core_hours",
            "job_id",
            descending=[True, True, False],
            nulls_last=True,
        )
    return [_job(row, gpu_of.get(row["job_id"])) for row in table.iter_rows(named=True)]


def _gpu_figures(chosen: pl.DataFrame, step_rows: pl.DataFrame) -> dict[str, GpuFigures]:
    """Job id -> GPU figures of the chosen allocations that held GPUs (by any source): the
    rows of :func:`~wass_chat.analytics.gpu_usage.gpu_table`, the report's numbers."""
    table = gpu_table(chosen, step_rows)
    return {row["job_id"]: job_gpu_figures(row) for row in table.iter_rows(named=True)}


def _job(row: dict[str, Any], gpu: GpuFigures | None = None) -> JobEfficiency:
    def pct(value: float | None) -> float | None:
        return None if value is None else round(100 * value, 2)

    job = JobEfficiency(
        job_id=row["job_id"],
        job_id_raw=row["job_id_raw"],
        user=row["user"],
        account=row["account"],
        partition=row["partition"],
        state=row["state"],
        nnodes=row["nnodes"],
        ncpus=row["ncpus"],
        elapsed_s=row["elapsed_s"],
        timelimit_s=row["timelimit_s"],
        cpu_used_s=row["cpu_used_s"],
        cpu_efficiency_pct=pct(row["cpu_efficiency"]),
        mem_used_bytes=row["mem_used_bytes"],
        mem_request_bytes=row["mem_request_bytes"],
        memory_efficiency_pct=pct(row["memory_efficiency"]),
        memory_basis=row["memory_basis"],
        time_efficiency_pct=pct(row["time_efficiency"]),
        wasted_core_hours=(
            None if row["wasted_core_hours"] is None else round(row["wasted_core_hours"], 4)
        ),
        usage_recorded=bool(row["usage_recorded"]),
        start=row["start"].isoformat() if row["start"] else None,
        end=row["end"].isoformat() if row["end"] else None,
        gpu=asdict(gpu) if gpu else None,
    )
    tips = advice(job) + (gpu_advice(gpu, job.state, job.partition) if gpu else [])
    return JobEfficiency(**{**asdict(job), "suggestions": tuple(tips)})


def advice(job: JobEfficiency) -> list[str]:
    """Suggestions for the next request of a job like ``job``, from its own figures.

    Only a finished job's figures are used; a request is called too big only when it is both
    proportionally and absolutely oversized, and every suggested value covers what the job
    used with a margin (:data:`MARGIN`).
    """
    if job.state in (None, "PENDING", "RUNNING", "REQUEUED", "SUSPENDED"):
        return []
    tips: list[str] = []
    if job.state == "OUT_OF_MEMORY":
        used = f", and it had reached {size(job.mem_used_bytes)}" if job.mem_used_bytes else ""
        tips.append(
            f"It ran out of memory: its {request_size(job.mem_request_bytes or 0)} were too few"
            f"{used}. "
            "Ask for more memory (--mem) or reduce what one task holds."
        )
    if job.state == "TIMEOUT" and job.timelimit_s:
        tips.append(
            f"It reached its time limit of {clock(job.timelimit_s)}: ask for more time "
            "(--time) or let it checkpoint and resume."
        )
    if job.state == "COMPLETED" and job.usage_recorded:
        tips.extend(t for t in (_cpu_tip(job), _memory_tip(job), _time_tip(job)) if t)
    return tips


def _cpu_tip(job: JobEfficiency) -> str | None:
    if not (job.ncpus and job.ncpus > 1 and job.elapsed_s and job.elapsed_s >= 60):
        return None
    if job.cpu_used_s is None or job.cpu_efficiency_pct is None:
        return None
    if job.cpu_efficiency_pct >= 100 * WASTEFUL_CPU:
        return None
    busy = job.cpu_used_s / job.elapsed_s
    need = max(1, math.ceil(busy * MARGIN))
    if need >= job.ncpus:
        return None
    nodes = job.nnodes or 1
    if nodes > 1:  # --cpus-per-task cannot span nodes: fewer tasks, or fewer of its nodes
        per_node = math.ceil(job.ncpus / nodes)
        fewer = math.ceil(need / per_node)
        how = f"e.g. --ntasks={need}" + (
            f", or {fewer} of its {per_node}-CPU nodes instead of {nodes}" if fewer < nodes else ""
        )
    else:
        how = f"e.g. --cpus-per-task={need} for one multi-threaded task, or --ntasks={need}"
    return (
        f"CPU: it kept {busy:,.1f} of its {job.ncpus:,} CPUs busy on average "
        f"({job.cpu_efficiency_pct:.1f}%); {need:,} CPU{'s' if need > 1 else ''} would do "
        f"({how})."
    )


def _memory_tip(job: JobEfficiency) -> str | None:
    used, request = job.mem_used_bytes, job.mem_request_bytes
    if used is None or not request or job.memory_efficiency_pct is None:
        return None
    if job.memory_basis == MEMORY_BASES[-1]:
        return None  # one task's peak: the job may have used more
    if used / request >= WASTEFUL_MEMORY or request - used <= MEMORY_SLACK_BYTES:
        return None
    need = round_memory_up(max(used * MARGIN, 256 * 2**20))
    flag = f"--mem={request_size(need)}"
    if (job.nnodes or 1) > 1 and job.ncpus:
        # --mem is per node: on several nodes, ask per CPU so every node gets its share
        per_cpu = math.ceil(used * MARGIN / job.ncpus / 2**26) * 2**26
        need = per_cpu * job.ncpus
        flag = f"--mem-per-cpu={request_size(per_cpu)}"
    if need >= request:
        return None
    return (
        f"Memory: it used at most {size(used)} of the {request_size(request)} it was given "
        f"({job.memory_efficiency_pct:.1f}%); {flag} would still leave a 25% margin."
    )


def _time_tip(job: JobEfficiency) -> str | None:
    if not (job.timelimit_s and job.elapsed_s is not None):
        return None
    if job.elapsed_s / job.timelimit_s >= WASTEFUL_TIME:
        return None
    if job.timelimit_s - job.elapsed_s <= TIME_SLACK_S:
        return None
    need = math.ceil(max(job.elapsed_s * 1.5, 900) / 900) * 900
    if need >= job.timelimit_s:
        return None
    return (
        f"Time: it ran {clock(job.elapsed_s)} of its {clock(job.timelimit_s)} limit; "
        f"--time={clock(need)} would still leave a 50% margin, and shorter jobs start sooner "
        "through backfill."
    )


def round_memory_up(num_bytes: float) -> float:
    """Up to a request people type: a multiple of 256 MiB below 4 GiB, of 1 GiB from there."""
    step = 256 * 2**20 if num_bytes < 4 * 2**30 else 2**30
    return float(math.ceil(num_bytes / step) * step)


def request_size(num_bytes: float) -> str:
    """Bytes as Slurm takes them in ``--mem`` (whole numbers only): ``768M``, ``5G``, ``64T``."""
    if num_bytes >= 2**40 and num_bytes % 2**40 == 0:
        return f"{int(num_bytes // 2**40)}T"
    if num_bytes >= 2**30 and num_bytes % 2**30 == 0:
        return f"{int(num_bytes // 2**30)}G"
    return f"{math.ceil(num_bytes / 2**20)}M"


def size(num_bytes: float | None) -> str:
    """Bytes as sacct-style units: ``768M``, ``1.5G``, ``12G``."""
    if num_bytes is None:
        return "an unknown amount"
    if num_bytes >= 2**40:
        return f"{num_bytes / 2**40:.3g}T"
    if num_bytes >= 2**30:
        return f"{num_bytes / 2**30:.3g}G"
    if num_bytes >= 2**20:
        return f"{num_bytes / 2**20:.0f}M"
    return f"{num_bytes / 2**10:.0f}K"


def cpu_time(seconds: float) -> str:
    """CPU seconds: ``2.617 s`` below a minute (the fraction matters there), else a clock."""
    return f"{seconds:.3f} s" if seconds < 60 else clock(seconds)


def clock(seconds: float) -> str:
    """Seconds as Slurm prints a duration: ``HH:MM:SS`` or ``D-HH:MM:SS``."""
    whole = round(seconds)
    days, rest = divmod(whole, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


def find_jobs(
    sacct_dir: Path,
    job_ids: Sequence[str],
    user: str | None = None,
    account: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    live: bool = True,
) -> list[JobEfficiency]:
    """:func:`jobs_efficiency` on the accounting cache; ids it lacks are asked of ``sacct``.

    Raises :class:`~sim.errors.InputError` naming the ids found nowhere (a one-line error, exit
    2), :class:`~sim.errors.NoSuchName` for a user or account the cache never saw, and
    :class:`~sim.errors.ServiceUnavailable` when they had to be asked and Slurm did not answer.
    """
    from wass_chat.sacct.cache import SacctCache
    from wass_chat.sacct.cache_names import check_filter_names

    cached = SacctCache(sacct_dir).scan()
    if not job_ids:  # named ids may be asked of sacct: their users need not be cached
        check_filter_names(cached, user=user, account=account)
    found = jobs_efficiency(cached, job_ids, user, account, start, end)
    missing = [j for j in job_ids if not any(_matches(job, j) for job in found)]
    if missing and live:
        fetched = parse_sacct_text(fetch_jobs(missing), subject="sacct -j").jobs
        fetched = fetched.with_columns(pl.lit(sacct_version(), pl.String).alias("slurm_version"))
        found += jobs_efficiency(fetched.lazy(), missing, user, account, start, end)
        missing = [j for j in job_ids if not any(_matches(job, j) for job in found)]
    if missing:
        where = "the accounting cache" + (" nor sacct" if live else " (--no-live)")
        raise InputError("job ids", [f"not found in {where}: {', '.join(missing)}"])
    return found


def efficiency_suggestions(job_id: str) -> list[str]:
    """The suggestions for the job's next request (asked of sacct, as ``wass-chat sacct
    efficiency JOBID`` does); none when Slurm's accounting does not answer. What the
    explanation of a completed job advises (:func:`wass_chat.slurm.explain.explain_job`'s
    ``suggestions``)."""
    try:
        frame = parse_sacct_text(fetch_jobs([job_id]), subject="sacct -j").jobs
    except UserFacingError:
        return []
    found = jobs_efficiency(frame.lazy(), [job_id])
    return list(found[0].suggestions) if found else []


def _matches(job: JobEfficiency, wanted: str) -> bool:
    return job.job_id == wanted or job.job_id.split("_")[0] == wanted or job.job_id_raw == wanted


def describe_job(row: dict[str, Any]) -> str:
    """A job's figures as a short block, seff's order: state, CPU, memory, time, advice."""
    job = JobEfficiency(**{**row, "suggestions": tuple(row.get("suggestions", ()))})
    who = ", ".join(x for x in (job.user, job.account, job.partition) if x)
    lines = [f"Job {job.job_id}" + (f" ({who})" if who else "") + f": {job.state or 'unknown'}"]
    cpus = "its CPUs" if job.ncpus is None else f"{job.ncpus:,} CPU{'s' if job.ncpus != 1 else ''}"
    if not job.usage_recorded:
        lines.append(
            f"  CPU and memory: not measured: accounting recorded no usage for this job "
            f"(TotalCPU 0 and no job steps) while it held {cpus} for "
            f"{clock(job.elapsed_s or 0)}."
        )
    elif job.cpu_efficiency_pct is not None and job.cpu_used_s is not None:
        lines.append(
            f"  CPU: {job.cpu_efficiency_pct:.1f}% ({cpu_time(job.cpu_used_s)} of CPU time over "
            f"{clock(job.elapsed_s or 0)} x {cpus}; "
            f"{job.wasted_core_hours or 0:,.2f} core-hours idle)"
        )
    if job.usage_recorded and job.memory_efficiency_pct is not None:
        bound = "at least " if job.memory_basis == MEMORY_BASES[-1] else ""
        lines.append(
            f"  Memory: {bound}{job.memory_efficiency_pct:.1f}% ({bound}{size(job.mem_used_bytes)}"
            f" of {request_size(job.mem_request_bytes or 0)}; from {job.memory_basis})"
        )
    elif job.usage_recorded and job.mem_request_bytes:
        lines.append(
            f"  Memory: not measured (no MaxRSS or TRESUsageInTot; "
            f"{request_size(job.mem_request_bytes)} requested)"
        )
    if job.time_efficiency_pct is not None and job.timelimit_s:
        lines.append(
            f"  Time: {job.time_efficiency_pct:.1f}% ({clock(job.elapsed_s or 0)} of "
            f"{clock(job.timelimit_s)})"
        )
    if job.gpu:
        lines.extend(describe_gpu(job.gpu))
    lines.extend(f"  - {tip}" for tip in job.suggestions)
    return "\n".join(lines)


def describe_gpu(g: dict[str, Any]) -> list[str]:
    """A job's GPU figures as lines, each with the field it was read from."""
    kind = f" {g['gpu_type']}" if g.get("gpu_type") else ""
    lines = [
        f"  GPUs held: {g['gpus']}{kind} ({g['held_source']}); {g['gpu_hours_held']:,.2f} GPU-hours"
    ]
    if not g["recorded"]:
        lines.append(f"  GPU use: {g['not_recorded_why']}.")
        return lines
    util = f"{g['utilisation_pct']:.1f}%"
    if g.get("other_reading_pct") is not None:
        util += f" (or {g['other_reading_pct']:.1f}% if Slurm is older than 24.05.1)"
    lines.append(f"  GPU utilisation: {util} per GPU (from {g['source']})")
    if g.get("rule"):
        lines.append(f"    read as: {g['rule']}")
    if g.get("per_gpu_pct") and len(g["per_gpu_pct"]) > 1:
        each = ", ".join(f"{name} {pct:.1f}%" for name, pct in g["per_gpu_pct"])
        lines.append(f"    per GPU: {each}")
    if g.get("peak_utilisation_pct") is not None:
        lines.append(
            f"    busiest task: {g['peak_utilisation_pct']:.0f}% (TRESUsageInMax gres/gpuutil)"
        )
    if g.get("memory_peak_bytes") is not None:
        share = g.get("memory_share_pct")
        of = (
            f" = {share:.1f}% of {g['memory_per_gpu_bytes'] / 2**30:.0f} GiB per GPU"
            if share is not None and g.get("memory_per_gpu_bytes")
            else " (GPU memory size unknown)"
        )
        lines.append(
            f"  GPU memory peak: {size(g['memory_peak_bytes'])}{of} (from {g['memory_source']})"
        )
    used, idle = g.get("gpu_hours_used"), g.get("gpu_hours_idle")
    if used is not None:
        lines.append(
            f"  GPU-hours: {g['gpu_hours_held']:,.2f} held, {used:,.2f} used, "
            f"{idle or 0:,.2f} at 0%"
        )
    return lines
