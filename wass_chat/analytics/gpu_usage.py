"""How jobs used the GPUs they held, from whatever the site records, with every figure's source.

Sources, best first (docs/analytics.md "GPU usage"):

1. **Princeton jobstats** (``AdminComment`` ``JS1:...``): per GPU, time-averaged utilisation and
   peak memory over the GPU's total. The job figure is reportseff's: the mean over nodes of each
   node's mean over its GPUs (:mod:`wass_chat.sacct.jobstats`).
2. **sacct TRES usage** (Slurm 23.02+ with ``AutoDetect=nvml|rsmi`` and ``gres/gpuutil``,
   ``gres/gpumem`` in ``AccountingStorageTRES``): on step rows only (the allocation row has
   none; ``.extern`` shows 0). A task's ``gres/gpuutil`` is, before Slurm 24.05.1, the
   utilisation of its *last* GPU only; from 24.05.1 the *sum* over its GPUs (so it can pass 100).
   TRESUsageInTot sums the tasks. :func:`per_gpu_utilisation` turns it into a mean per GPU.
   These values behave like sampled peaks, not time averages.
3. **Nothing**: the job held GPUs (AllocTRES ``gres/gpu``) but no source measured them. The answer
   is then "GPU use not recorded on this cluster" (:data:`NOT_RECORDED`) with the settings that
   would record it (:data:`HOW_TO_RECORD`), never 0%.

A job's sacct figure is its busiest step's (the highest mean per GPU): a batch script that only
launches ``srun`` steps shows 0 on its ``.batch`` step while the steps do the work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import polars as pl

SUM_OVER_GPUS_FROM = (24, 5, 1)
"""From this Slurm version a task's gres/gpuutil and gres/gpumem sum over all its GPUs;
before it they are its last GPU's."""
NOT_RECORDED = "GPU use not recorded on this cluster"
HOW_TO_RECORD = (
    "sacct records it with AccountingStorageTRES=gres/gpu,gres/gpumem,gres/gpuutil in "
    "slurm.conf and AutoDetect=nvml (NVIDIA) or AutoDetect=rsmi (AMD) in gres.conf; "
    "Princeton jobstats records it in AdminComment"
)
"""What would record GPU use (sacct's gres/gpuutil exists from Slurm 23.02)."""
LARGE_GPU_BYTES = 40 * 2**30
"""A GPU with at least this much memory is "large" (A100, H100, A40, L40S, MI250...)."""
SMALL_MEMORY_SHARE = 0.10
"""A job on large GPUs that peaked under this share of their memory could use smaller ones."""
LOW_UTILISATION_PCT = 25.0
"""Below this mean utilisation per GPU a multi-GPU job would do with fewer GPUs."""
IDLE_UTILISATION_PCT = 1.0
"""At or below this the job is counted as "at 0%" (sampling noise of an idle GPU)."""
GIB = 2**30
GPU_MEMORY_GIB: dict[str, tuple[int, ...]] = {
    "k80": (12,),
    "p100": (12, 16),
    "v100": (16, 32),
    "v100s": (32,),
    "t4": (16,),
    "a10": (24,),
    "a30": (24,),
    "a40": (48,),
    "a100": (40, 80),
    "a6000": (48,),
    "rtx6000": (24,),
    "rtx8000": (48,),
    "l4": (24,),
    "l40": (48,),
    "l40s": (48,),
    "h100": (80, 94),
    "h200": (141,),
    "gh200": (96,),
    "b200": (180,),
    "mi100": (32,),
    "mi210": (64,),
    "mi250": (128,),
    "mi250x": (128,),
    "mi300x": (192,),
}
"""Memory per GPU of each model a GPU type name may denote (GiB, vendors' data sheets): sacct
gives no GPU's size, so the smallest model that holds what the job used is assumed."""


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    """``slurm 24.11.5`` / ``24.05.1`` / ``22.05`` -> (24, 11, 5); None when not a version."""
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not match:
        return None
    return int(match[1]), int(match[2]), int(match[3] or 0)


RULES = (
    "one GPU per task (any Slurm version)",
    "sum over each task's GPUs (Slurm 24.05.1 or newer)",
    "each task's last GPU only (Slurm before 24.05.1)",
    "sum over each task's GPUs (Slurm version unknown; a figure above 100% per task is a sum)",
    "Slurm version unknown: assumed 24.05.1 or newer (sum over each task's GPUs)",
)
"""How a step's gres/gpuutil total was read, by the code :func:`gpu_table` gives it."""


@dataclass(frozen=True, slots=True)
class UtilisationReading:
    """A step's gres/gpuutil total as a mean per GPU, and how it was read."""

    mean_pct: float
    gpus_seen: int
    """GPUs the figure covers (before 24.05.1 one per task)."""
    rule: str
    other_reading_pct: float | None = None
    """With the Slurm version unknown and a task on several GPUs: the other rule's reading."""


def per_gpu_utilisation(
    total_pct: float, ntasks: int, gpus: int, version: tuple[int, int, int] | None
) -> UtilisationReading:
    """Mean utilisation per GPU of a step from its TRESUsageInTot ``gres/gpuutil``.

    From Slurm 24.05.1 each task reports the sum over its GPUs, so the step's total covers every
    GPU: total / max(tasks, GPUs). Before, each task reports its last GPU only: total / tasks,
    covering min(tasks, GPUs) GPUs. With one GPU per task (or fewer) both rules agree. With the
    version unknown and a task on several GPUs, a total above 100% per task can only be a sum;
    otherwise the 24.05.1 rule is assumed and the other reading kept.
    """
    tasks = max(ntasks, 1)
    gpus = max(gpus, 1)
    summed, last = total_pct / max(tasks, gpus), total_pct / tasks
    if gpus <= tasks:
        return UtilisationReading(summed, gpus, RULES[0])
    if version is not None and version >= SUM_OVER_GPUS_FROM:
        return UtilisationReading(summed, gpus, RULES[1])
    if version is not None:
        return UtilisationReading(last, min(tasks, gpus), RULES[2])
    if last > 100:
        return UtilisationReading(summed, gpus, RULES[3])
    return UtilisationReading(summed, gpus, RULES[4], other_reading_pct=last)


def gpu_memory_bytes(gpu_type: str | None, used_per_gpu: float) -> int | None:
    """Memory of one GPU of ``gpu_type``: the smallest model that holds ``used_per_gpu``."""
    sizes = GPU_MEMORY_GIB.get((gpu_type or "").lower())
    if not sizes:
        return None
    fitting = [s for s in sizes if s * GIB >= used_per_gpu]
    return (min(fitting) if fitting else max(sizes)) * GIB


@dataclass(frozen=True)
class GpuFigures:
    """One job's GPU use; ``recorded`` False means no source measured it (never read as 0%)."""

    gpus: int
    gpu_type: str | None
    held_source: str
    gpu_hours_held: float
    recorded: bool
    source: str | None
    """Where the use figures come from (field names), or None when not recorded."""
    utilisation_pct: float | None
    peak_utilisation_pct: float | None
    """TRESUsageInMax: the busiest task's figure (sacct only)."""
    memory_peak_bytes: float | None
    """Peak GPU memory: of one GPU (jobstats), summed over the job's tasks (sacct)."""
    memory_per_gpu_bytes: int | None
    memory_share_pct: float | None
    memory_source: str | None
    gpu_hours_used: float | None
    gpu_hours_idle: float | None
    """GPU-hours of GPUs at 0% (a GPU's own figure where known, else the job's)."""
    rule: str | None = None
    """How sacct's per-task figure became a per-GPU one (:func:`per_gpu_utilisation`)."""
    other_reading_pct: float | None = None
    per_gpu_pct: tuple[tuple[str, float], ...] = ()
    """(node/GPU index, utilisation) per GPU where the source tells them apart (jobstats)."""
    not_recorded_why: str | None = None


def step_gpu_usage(steps: pl.DataFrame) -> pl.DataFrame:
    """Per parent job id, the busiest GPU step: its total gres/gpuutil, tasks, GPUs and the
    largest gres/gpumem total over the job's steps (``.extern`` left out: it shows 0). An
    allocation row given here counts as its own step."""
    parent = pl.col("job_id").str.split(".").list.first()
    measured = steps.filter(
        ~pl.col("job_id").str.ends_with(".extern") & pl.col("gpu_util_tot_pct").is_not_null()
    )
    tasks = pl.col("ntasks").fill_null(1).clip(lower_bound=1)
    per_gpu = pl.col("gpu_util_tot_pct") / pl.max_horizontal(tasks, pl.col("gpus").clip(1))
    return (
        measured.with_columns(parent.alias("__parent"), per_gpu.alias("__rank"))
        .sort("__rank", descending=True)
        .group_by("__parent", maintain_order=True)
        .agg(
            pl.col("job_id").first().alias("gpu_step"),
            pl.col("gpu_util_tot_pct").first().alias("step_util_tot_pct"),
            pl.col("gpu_util_max_pct").max().alias("step_util_max_pct"),
            tasks.first().alias("step_ntasks"),
            pl.col("gpus").first().alias("step_gpus"),
            pl.col("gpu_mem_tot_bytes").max().alias("step_mem_tot_bytes"),
        )
        .rename({"__parent": "job_id"})
    )


def _version_code() -> pl.Expr:
    """slurm_version ``24.05.1`` -> 240501 (null when unknown)."""
    parts = pl.col("slurm_version").str.extract_groups(r"(\d+)\.(\d+)(?:\.(\d+))?")
    number = [parts.struct.field(str(i)).cast(pl.Int64, strict=False) for i in (1, 2, 3)]
    return number[0] * 10000 + number[1] * 100 + number[2].fill_null(0)


def _memory_size(gpu_type: pl.Expr, used_per_gpu: pl.Expr) -> pl.Expr:
    """:func:`gpu_memory_bytes` over columns: the smallest model of the type that holds what
    one GPU used."""
    kind = gpu_type.str.to_lowercase()
    size: pl.Expr = pl.lit(None, pl.Int64)
    for name in reversed(GPU_MEMORY_GIB):
        sizes = GPU_MEMORY_GIB[name]
        pick: pl.Expr = pl.lit(max(sizes) * GIB)
        for gib in sorted(sizes, reverse=True):
            pick = pl.when(used_per_gpu <= gib * GIB).then(pl.lit(gib * GIB)).otherwise(pick)
        size = pl.when(kind == name).then(pick).otherwise(size)
    return size


def gpu_table(allocations: pl.DataFrame, step_rows: pl.DataFrame) -> pl.DataFrame:
    """One row per allocation that held GPUs (AllocTRES, else jobstats), with its GPU figures.

    Columns: identity (job_id, user, account, partition, state, submit, start, end), held
    (``gpus``, ``gpu_type``, ``held_from_alloc``, ``gpu_hours_held``), ``source``
    (``jobstats``, ``sacct`` or null: not recorded), ``util_pct`` (mean per GPU),
    ``other_reading_pct``, ``rule`` (index into :data:`RULES`), ``peak_util_pct``,
    ``mem_peak_bytes``, ``mem_per_gpu_bytes``, ``mem_share_pct``, ``gpu_hours_used``,
    ``gpu_hours_idle``, ``gpu_step``. Vectorised: a year's GPU jobs take well under a second.
    """
    held = allocations.filter((pl.col("gpus") > 0) | (pl.col("js_gpus").fill_null(0) > 0))
    # an export (or the synthetic data without steps) may carry usage on the allocation row
    own = held.filter(pl.col("gpu_util_tot_pct").is_not_null()).select(step_rows.columns)
    busiest = step_gpu_usage(pl.concat([step_rows, own]) if own.height else step_rows)
    table = held.join(busiest, on="job_id", how="left")
    tasks = pl.col("step_ntasks").fill_null(1).clip(lower_bound=1).cast(pl.Float64)
    gpus = pl.when(pl.col("gpus") > 0).then(pl.col("gpus")).otherwise(pl.col("js_gpus"))
    step_gpus = pl.coalesce(pl.when(pl.col("step_gpus") > 0).then(pl.col("step_gpus")), gpus).cast(
        pl.Float64
    )
    held_s = pl.coalesce(  # an export without Elapsed (jobstats') has Start and End
        pl.col("elapsed_s"), (pl.col("end") - pl.col("start")).dt.total_seconds()
    )
    tot = pl.col("step_util_tot_pct")
    summed = tot / pl.max_horizontal(tasks, step_gpus)
    last = tot / tasks
    version = _version_code()
    sum_from = SUM_OVER_GPUS_FROM[0] * 10000 + SUM_OVER_GPUS_FROM[1] * 100 + SUM_OVER_GPUS_FROM[2]
    rule = (
        pl.when(tot.is_null())
        .then(None)
        .when(step_gpus <= tasks)
        .then(0)
        .when(version >= sum_from)
        .then(1)
        .when(version < sum_from)
        .then(2)
        .when(last > 100)
        .then(3)
        .otherwise(4)
    )
    table = table.with_columns(
        gpus.alias("gpus"),
        (pl.col("gpus") > 0).alias("held_from_alloc"),
        (held_s.fill_null(0) * gpus / 3600).alias("gpu_hours_held"),
        rule.alias("rule"),
    )
    sacct_util = pl.when(pl.col("rule") == 2).then(last).otherwise(summed)
    seen = (
        pl.when(pl.col("rule") == 2).then(pl.min_horizontal(tasks, step_gpus)).otherwise(step_gpus)
    )
    js = pl.col("js_gpu_util_pct").is_not_null()
    source = pl.when(js).then(pl.lit("jobstats")).when(tot.is_not_null()).then(pl.lit("sacct"))
    mem = pl.col("step_mem_tot_bytes").cast(pl.Float64)
    capacity = _memory_size(pl.col("gpu_type"), mem / seen)
    table = table.with_columns(
        source.alias("source"),
        pl.when(js).then(pl.col("js_gpu_util_pct")).otherwise(sacct_util).alias("util_pct"),
        pl.when(~js & (pl.col("rule") == 4)).then(last).alias("other_reading_pct"),
        pl.when(~js).then(pl.col("step_util_max_pct")).alias("peak_util_pct"),
        pl.when(js)
        .then(pl.col("js_gpu_mem_peak_bytes").cast(pl.Float64))
        .otherwise(mem)
        .alias("mem_peak_bytes"),
        pl.when(js)
        .then(pl.col("js_gpu_mem_total_bytes"))
        .otherwise(capacity)
        .alias("mem_per_gpu_bytes"),
        pl.when(js)
        .then(pl.col("js_gpu_mem_pct"))
        .otherwise(100 * mem / (capacity * seen))
        .alias("mem_share_pct"),
        pl.when(js)
        .then(pl.col("js_gpus_idle") / pl.col("js_gpus").clip(1))
        .when(tot.is_not_null())
        .then((sacct_util <= IDLE_UTILISATION_PCT).cast(pl.Float64))
        .alias("__idle_share"),
    )
    return table.select(
        "job_id",
        "user",
        "account",
        "partition",
        "state",
        "submit",
        "start",
        "end",
        "gpus",
        "gpu_type",
        "held_from_alloc",
        "gpu_hours_held",
        "source",
        "util_pct",
        "other_reading_pct",
        "rule",
        "peak_util_pct",
        "mem_peak_bytes",
        "mem_per_gpu_bytes",
        "mem_share_pct",
        (pl.col("gpu_hours_held") * pl.col("util_pct").clip(upper_bound=100) / 100).alias(
            "gpu_hours_used"
        ),
        (pl.col("gpu_hours_held") * pl.col("__idle_share")).alias("gpu_hours_idle"),
        "gpu_step",
        "admin_comment",
    )


def job_gpu_figures(row: dict[str, Any]) -> GpuFigures:
    """The :class:`GpuFigures` of one :func:`gpu_table` row, each figure with its source."""
    base: dict[str, Any] = dict(
        gpus=int(row["gpus"]),
        gpu_type=row["gpu_type"],
        held_source="AllocTRES gres/gpu"
        if row["held_from_alloc"]
        else "jobstats AdminComment (the GPUs it measured)",
        gpu_hours_held=float(row["gpu_hours_held"]),
    )
    if row["source"] is None:
        return GpuFigures(
            **base,
            recorded=False,
            source=None,
            utilisation_pct=None,
            peak_utilisation_pct=None,
            memory_peak_bytes=None,
            memory_per_gpu_bytes=None,
            memory_share_pct=None,
            memory_source=None,
            gpu_hours_used=None,
            gpu_hours_idle=None,
            not_recorded_why=f"{NOT_RECORDED}: {HOW_TO_RECORD}",
        )
    figures = dict(
        recorded=True,
        utilisation_pct=row["util_pct"],
        peak_utilisation_pct=row["peak_util_pct"],
        memory_peak_bytes=row["mem_peak_bytes"],
        memory_per_gpu_bytes=row["mem_per_gpu_bytes"],
        memory_share_pct=row["mem_share_pct"],
        gpu_hours_used=row["gpu_hours_used"],
        gpu_hours_idle=row["gpu_hours_idle"],
    )
    if row["source"] == "jobstats":
        from wass_chat.sacct.jobstats import comment_gpus

        summary = comment_gpus(row["admin_comment"])
        each = (
            tuple((f"{g.node}/{g.index}", g.utilization_pct) for g in summary.gpus)
            if summary
            else ()
        )
        return GpuFigures(
            **base,
            **figures,
            source="jobstats AdminComment gpu_utilization (time average; mean over nodes of "
            "each node's mean over its GPUs, as reportseff)",
            memory_source="jobstats AdminComment gpu_used_memory / gpu_total_memory (peak)",
            per_gpu_pct=each,
        )
    assumed = (
        f"; {row['gpu_type']} memory size assumed from its models"
        if row["mem_per_gpu_bytes"]
        else ""
    )
    return GpuFigures(
        **base,
        **figures,
        source=f"sacct TRESUsageInTot gres/gpuutil of step {row['gpu_step']} (sampled)",
        memory_source="sacct TRESUsageInTot gres/gpumem (peak, summed over tasks)" + assumed,
        rule=RULES[row["rule"]],
        other_reading_pct=row["other_reading_pct"],
    )


def gpu_advice(g: GpuFigures, state: str | None, partition: str | None) -> list[str]:
    """Suggestions for the next request of a finished job like this one, from its GPU use."""
    if not g.recorded or g.utilisation_pct is None or state in (None, "PENDING", "RUNNING"):
        return []
    tips: list[str] = []
    util = g.utilisation_pct
    where = f" (partition {partition})" if partition else ""
    if util <= IDLE_UTILISATION_PCT:
        tips.append(
            f"GPU: its {g.gpus} GPU{'s' if g.gpus > 1 else ''} stayed at 0%{where}: if it does "
            "not use GPUs, submit it to a CPU-only partition (no --gres/--gpus)."
        )
        return tips
    if g.gpus > 1 and util < LOW_UTILISATION_PCT:
        need = max(1, round(g.gpus * util / 50))
        if need < g.gpus:
            tips.append(
                f"GPU: {util:.1f}% per GPU on average over {g.gpus} GPUs; {need} GPU"
                f"{'s' if need > 1 else ''} would do (--gpus={need}), or check that the code "
                "spreads its work over all of them."
            )
    if (
        g.memory_share_pct is not None
        and g.memory_per_gpu_bytes
        and g.memory_per_gpu_bytes >= LARGE_GPU_BYTES
        and g.memory_share_pct < 100 * SMALL_MEMORY_SHARE
    ):
        tips.append(
            f"GPU memory: it peaked at {g.memory_share_pct:.1f}% of "
            f"{g.memory_per_gpu_bytes / GIB:.0f} GiB per GPU; a smaller GPU type (or a MIG "
            "slice) would do and leaves the large GPUs to jobs that need them."
        )
    return tips
