"""Realistic synthetic Slurm accounting data, for benchmarks and tests at any scale.

The generator draws whole columns with one ``numpy.random.Generator`` (no loop over jobs), so
1.5 million jobs take a few seconds and the same seed always gives the same table. It reproduces
what makes real accounting data hard to summarise:

* a few users submit most jobs (Zipf activity), users belong to accounts;
* heavy-tailed runtimes (lognormal) and queue waits (lognormal, longer for wide jobs);
* walltime over-requests: users ask for a round limit a few times above the runtime, and jobs
  that run past it end in TIMEOUT;
* backfill: short jobs are often started by the backfill scheduler (``SchedBackfill``);
* a state mix with some users failing far more than others, cancellations before and after
  start, and jobs still pending or running at the end of the window;
* optional job arrays (``45_3``) and steps (``123.batch``, ``123.extern``);
* CPU time, peak memory, TRES usage and GPU use (:mod:`.synth_usage`, invented shapes, stated
  there).

The output has exactly the schema of :func:`wass_chat.sacct.parse.schema`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import polars as pl

from wass_chat.sacct.gpu_columns import sacct_gpu_columns
from wass_chat.sacct.parse import schema
from wass_chat.sacct.render import format_memory
from wass_chat.sacct.steps import with_job_steps
from wass_chat.sacct.synth_usage import GPUS_PER_NODE, with_usage

CORES_PER_NODE = 64
GPU_TYPE = "a100"
NODE_PREFIX = "nid"
NODE_DIGITS = 6
STANDARD_LIMITS_S = np.array(
    [900, 1800, 3600, 7200, 14400, 21600, 43200, 86400, 172800, 259200, 604800]
)
"""Walltime requests people actually type: 15 min, 30 min, 1 h ... 7 days."""


@dataclass(frozen=True, slots=True)
class PartitionProfile:
    """One synthetic partition: share of jobs, walltime cap, width cap, share of the nodes."""

    name: str
    share: float
    max_limit_s: int
    max_nodes: int
    node_share: float


PARTITIONS: tuple[PartitionProfile, ...] = (
    PartitionProfile("batch", 0.70, 86400, 512, 0.78),
    PartitionProfile("debug", 0.12, 7200, 8, 0.04),
    PartitionProfile("gpu", 0.12, 86400, 64, 0.12),
    PartitionProfile("bigmem", 0.03, 172800, 4, 0.02),
    PartitionProfile("extended", 0.03, 604800, 64, 0.04),
)
JOB_NAMES = (
    "lammps",
    "gromacs",
    "vasp",
    "python",
    "train",
    "sim",
    "postproc",
    "namd",
    "wrf",
    "cp2k",
    "mpi_app",
    "analysis",
    "bash",
    "jupyter",
    "montage",
    "blast",
)
OTHER_END_STATES = (
    ("CANCELLED", 0.07),
    ("OUT_OF_MEMORY", 0.015),
    ("NODE_FAIL", 0.003),
    ("PREEMPTED", 0.005),
)
"""Shares of the end states other than COMPLETED, FAILED (per user) and TIMEOUT (from limits)."""
PENDING_REASONS = (
    ("Priority", 0.50),
    ("Resources", 0.35),
    ("QOSMaxJobsPerUserLimit", 0.08),
    ("ReqNodeNotAvail", 0.04),
    ("AssocGrpCPUMinutesLimit", 0.03),
)
"""Reasons of jobs still pending at the window's end (held jobs wait on a Dependency)."""
ACCOUNT_PREFIXES = ("csc", "bif", "chm", "phy", "geo", "mat", "cli", "nuc")


@dataclass(frozen=True)
class SynthConfig:
    """What to generate. Defaults describe a busy mid-size centre."""

    n_jobs: int
    seed: int = 0
    start: datetime = datetime(2024, 1, 1)
    days: float = 30.0
    """Length of the submission window."""
    utilisation: float = 0.7
    """Target mean node utilisation; sets the number of nodes."""
    array_fraction: float = 0.1
    """Share of jobs that are array tasks (blocks of 10 consecutive jobs)."""
    with_steps: bool = False
    """Also emit ``.batch`` and ``.extern`` steps for every started job."""
    first_job_id: int = 1_000_000


def synthesize(n_jobs: int, seed: int = 0, **options: object) -> pl.DataFrame:
    """``n_jobs`` synthetic jobs (see :class:`SynthConfig` for ``options``)."""
    return synthesize_config(SynthConfig(n_jobs, seed, **options))  # type: ignore[arg-type]


def synthesize_config(cfg: SynthConfig) -> pl.DataFrame:
    """The synthetic jobs table for ``cfg``; deterministic in ``cfg.seed``."""
    rng = np.random.default_rng(cfg.seed)
    n = cfg.n_jobs
    window = int(cfg.days * 86400)
    t0 = int(np.datetime64(cfg.start, "s").astype(np.int64))
    raw_id = cfg.first_job_id + np.arange(n, dtype=np.int64)

    # --- who: users (Zipf activity), their accounts and failure propensities -------------
    n_users = int(min(3000, max(8, 1.5 * np.sqrt(n))))
    weights = 1.0 / np.arange(1, n_users + 1) ** 1.1
    user = rng.choice(n_users, size=n, p=weights / weights.sum())
    n_accounts = max(3, n_users // 10)
    account_of_user = rng.integers(0, n_accounts, n_users)
    failure_of_user = rng.beta(1.0, 14.0, n_users)
    careless = rng.random(n_users) < 0.04
    failure_of_user[careless] = rng.uniform(0.35, 0.7, careless.sum())
    overask_of_user = rng.lognormal(np.log(2.0), 0.6, n_users)
    is_array = np.repeat(rng.random(n // 10 + 1) < cfg.array_fraction, 10)[:n]
    block_first = (np.arange(n) // 10) * 10
    user = np.where(is_array, user[block_first], user)

    # --- what: partition, width, runtime, requested limit -------------------------------
    shares = np.array([p.share for p in PARTITIONS])
    part = rng.choice(len(PARTITIONS), size=n, p=shares / shares.sum())
    max_nodes = np.array([p.max_nodes for p in PARTITIONS])[part]
    wide = rng.random(n) < 0.4
    nnodes = np.where(wide, 2 ** rng.geometric(0.45, n), 1)
    nnodes = np.minimum(nnodes, max_nodes).astype(np.int64)
    partial = (nnodes == 1) & (rng.random(n) < 0.5)
    ncpus = np.where(partial, 2 ** rng.integers(0, 6, n), nnodes * CORES_PER_NODE)
    runtime = np.maximum(1, rng.lognormal(np.log(900), 1.6, n)).astype(np.int64)
    wanted = runtime * overask_of_user[user] * rng.lognormal(0.0, 0.3, n)
    limit_idx = np.minimum(np.searchsorted(STANDARD_LIMITS_S, wanted), len(STANDARD_LIMITS_S) - 1)
    cap = np.array([p.max_limit_s for p in PARTITIONS])[part]
    timelimit = np.minimum(STANDARD_LIMITS_S[limit_idx], cap)
    timed_out = runtime > timelimit

    # --- when: diurnal, weekday-heavy submission; heavy-tailed waits; backfill ----------
    submit = t0 + _submission_offsets(rng, n, window)
    held = rng.random(n) < 0.08
    eligible = submit + np.where(held, rng.lognormal(np.log(1800), 1.2, n), 0).astype(np.int64)
    backfilled = rng.random(n) < np.where(timelimit <= 7200, 0.55, 0.25)
    wait = rng.lognormal(np.log(150) + 0.35 * np.log2(nnodes), 1.9, n)
    wait = np.where(backfilled, wait * 0.5, wait)
    immediate = (~backfilled) & (rng.random(n) < 0.12)
    wait = np.where(immediate, 0, wait).astype(np.int64)
    start = eligible + wait

    # --- how it ended --------------------------------------------------------------------
    u = rng.random(n)
    fail_p = failure_of_user[user]
    state = np.full(n, "COMPLETED", dtype=object)
    state[u < fail_p] = "FAILED"
    lower = fail_p
    for name, share in OTHER_END_STATES:
        upper = lower + share
        state[(u >= lower) & (u < upper)] = name
        lower = upper
    state[timed_out & (state == "COMPLETED")] = "TIMEOUT"
    elapsed = np.minimum(runtime, timelimit + rng.integers(0, 60, n))
    shortened = np.isin(state, ["FAILED", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "CANCELLED"])
    elapsed = np.where(shortened, (elapsed * rng.random(n)).astype(np.int64), elapsed)
    never_started = (state == "CANCELLED") & (rng.random(n) < 0.5)
    horizon = t0 + window
    pending = start >= horizon
    state[pending] = "PENDING"
    never_started |= pending
    end = start + elapsed
    running = ~never_started & (end >= horizon)
    state[running] = "RUNNING"
    elapsed = np.where(running, horizon - start, elapsed)
    cancel_end = submit + ((start - submit) * rng.random(n)).astype(np.int64)
    elapsed = np.where(never_started, 0, elapsed)
    cancelled = state == "CANCELLED"
    by_admin = rng.random(n) < 0.1

    # --- where: contiguous node ranges inside each partition's share of the cluster -------
    busy_node_s = float(np.sum(np.where(never_started, 0, elapsed) * nnodes))
    n_nodes = busy_node_s / (window * cfg.utilisation)
    part_width = np.array([p.max_nodes for p in PARTITIONS])
    node_share = np.array([p.node_share for p in PARTITIONS])
    size = np.maximum(np.ceil(node_share * n_nodes), part_width).astype(np.int64)
    first = np.concatenate([[0], np.cumsum(size)[:-1]])
    offset = (rng.random(n) * np.maximum(size[part] - nnodes + 1, 1)).astype(np.int64)
    lo = first[part] + offset

    columns = {
        "job_id_raw": raw_id,
        "array_master": np.where(is_array, raw_id[block_first], -1),
        "array_index": np.arange(n) % 10,
        "user_idx": user,
        "account_idx": account_of_user[user],
        "part_idx": part,
        "name_idx": rng.integers(0, len(JOB_NAMES), n),
        "qos_u": rng.random(n),
        "submit": submit,
        "eligible": eligible,
        "start": np.where(never_started, -1, start),
        "end": np.where(never_started & cancelled, cancel_end, np.where(running, -1, end)),
        "end_pending": never_started & ~cancelled,
        "elapsed_s": elapsed,
        "timelimit_s": timelimit,
        "state": state.astype(str),
        "cancelled_by": np.where(cancelled, np.where(by_admin, 0, 10000 + user), -1),
        "exit_status": np.where(state == "FAILED", rng.choice([1, 1, 1, 2, 127, 139], n), 0),
        "nnodes": nnodes,
        "ncpus": ncpus,
        "mem_gib_per_cpu": 2 ** rng.integers(0, 3, n),
        "node_lo": lo,
        "started": ~never_started,
        "backfilled": backfilled & ~never_started,
        "immediate": immediate & ~never_started,
        "held": held,
        "priority": rng.integers(1000, 100000, n),
        "reason_u": rng.random(n),  # drawn last: earlier columns stay as they were per seed
    }
    table = with_usage(_assemble(pl.DataFrame(columns)), cfg.seed)
    if cfg.with_steps:
        table = with_job_steps(table)
    return table.with_columns(sacct_gpu_columns())  # as the import derives them


def _pending_reason_bounds() -> list[tuple[str, float]]:
    """(reason, cumulative share) pairs, last first, for a chain of ``when`` over one draw."""
    bounds, total = [], 0.0
    for name, share in PENDING_REASONS:
        total += share
        bounds.append((name, total))
    return bounds[::-1]


def _submission_offsets(rng: np.random.Generator, n: int, window: int) -> np.ndarray:
    """Seconds into the window, sorted: busier on weekdays and in working hours."""
    days = max(1, window // 86400)
    weekday = (np.arange(days) % 7) < 5
    day_p = np.where(weekday, 1.0, 0.45)
    day = rng.choice(days, size=n, p=day_p / day_p.sum())
    office = rng.random(n) < 0.7
    second = np.where(
        office, rng.normal(14 * 3600, 3.5 * 3600, n) % 86400, rng.integers(0, 86400, n)
    )
    return np.sort(np.minimum(day * 86400 + second.astype(np.int64), window - 1))


def _assemble(c: pl.DataFrame) -> pl.DataFrame:
    """Turn the numeric draws into the parsed-table schema (strings via column expressions)."""
    raw = pl.col("job_id_raw").cast(pl.String)
    is_array = pl.col("array_master") >= 0
    ts = {
        name: pl.when(pl.col(name) >= 0)
        .then(pl.from_epoch(pl.col(name), "s"))
        .cast(pl.Datetime("us"))
        for name in ("submit", "eligible", "start", "end")
    }
    part = pl.col("part_idx").replace_strict(
        dict(enumerate(p.name for p in PARTITIONS)), return_dtype=pl.String
    )
    width = NODE_DIGITS
    lo_s = pl.col("node_lo").cast(pl.String).str.zfill(width)
    hi_s = (pl.col("node_lo") + pl.col("nnodes") - 1).cast(pl.String).str.zfill(width)
    node_list = (
        pl.when(~pl.col("started"))
        .then(None)
        .when(pl.col("nnodes") == 1)
        .then(pl.concat_str([pl.lit(NODE_PREFIX), lo_s]))
        .otherwise(pl.concat_str([pl.lit(NODE_PREFIX + "["), lo_s, pl.lit("-"), hi_s, pl.lit("]")]))
    )
    mem = pl.col("ncpus") * pl.col("mem_gib_per_cpu") * 2**30
    count = (pl.col("nnodes") * GPUS_PER_NODE).cast(pl.String)
    gpus = pl.when(part == "gpu").then(
        pl.concat_str([pl.lit(f",gres/gpu:{GPU_TYPE}="), count, pl.lit(",gres/gpu="), count])
    )
    tres = pl.concat_str(
        [
            pl.lit("billing="),
            pl.col("ncpus").cast(pl.String),
            pl.lit(",cpu="),
            pl.col("ncpus").cast(pl.String),
            pl.lit(",mem="),
            format_memory(mem),
            pl.lit(",node="),
            pl.col("nnodes").cast(pl.String),
            gpus.fill_null(""),
        ]
    )
    qos = (
        pl.when(part == "debug")
        .then(pl.lit("debug"))
        .when(pl.col("qos_u") < 0.05)
        .then(pl.lit("high"))
        .when(pl.col("qos_u") < 0.15)
        .then(pl.lit("low"))
        .otherwise(pl.lit("normal"))
    )
    waiting = pl.lit(None, pl.String)
    for name, upper in _pending_reason_bounds():
        waiting = pl.when(pl.col("reason_u") < upper).then(pl.lit(name)).otherwise(waiting)
    reason = (
        pl.when(pl.col("state") == "PENDING")
        .then(pl.when(pl.col("held")).then(pl.lit("Dependency")).otherwise(waiting))
        .when(~pl.col("started"))
        .then(pl.lit("Resources"))
    )
    flags = (
        pl.when(~pl.col("started"))
        .then(None)
        .when(pl.col("backfilled"))
        .then(pl.lit("SchedBackfill"))
        .when(pl.col("immediate"))
        .then(pl.lit("SchedSubmit"))
        .otherwise(pl.lit("SchedMain"))
    )
    table = c.select(
        pl.when(is_array)
        .then(
            pl.concat_str(
                [
                    pl.col("array_master").cast(pl.String),
                    pl.lit("_"),
                    pl.col("array_index").cast(pl.String),
                ]
            )
        )
        .otherwise(raw)
        .alias("job_id"),
        raw.alias("job_id_raw"),
        pl.col("name_idx")
        .replace_strict(dict(enumerate(JOB_NAMES)), return_dtype=pl.String)
        .alias("job_name"),
        pl.format("user{}", pl.col("user_idx").cast(pl.String).str.zfill(4)).alias("user"),
        pl.concat_str(
            [
                pl.col("account_idx")
                .mod(len(ACCOUNT_PREFIXES))
                .replace_strict(dict(enumerate(ACCOUNT_PREFIXES)), return_dtype=pl.String),
                (100 + pl.col("account_idx")).cast(pl.String),
            ]
        ).alias("account"),
        part.alias("partition"),
        qos.alias("qos"),
        *(expr.alias(name) for name, expr in ts.items()),
        pl.col("elapsed_s"),
        pl.col("timelimit_s"),
        pl.col("state"),
        pl.when(pl.col("cancelled_by") >= 0).then(pl.col("cancelled_by")).alias("cancelled_by"),
        pl.col("exit_status"),
        pl.when(pl.col("state").is_in(["CANCELLED", "PREEMPTED"]))
        .then(15)
        .when(pl.col("state") == "OUT_OF_MEMORY")
        .then(125)
        .otherwise(0)
        .alias("exit_signal"),
        pl.col("nnodes"),
        pl.col("ncpus"),
        mem.alias("req_mem_bytes"),
        tres.alias("req_tres"),
        pl.when(pl.col("started")).then(tres).alias("alloc_tres"),
        node_list.alias("node_list"),
        flags.alias("flags"),
        reason.alias("reason"),
        pl.col("priority"),
        pl.lit(None, pl.String).alias("comment"),
        pl.when(pl.col("held"))
        .then(pl.format("afterok:{}", pl.col("job_id_raw") - 1))
        .alias("dependency"),
        pl.lit(False).alias("is_step"),
        pl.when(is_array).then(pl.col("array_master")).alias("array_job_id"),
        pl.col("backfilled"),
        pl.lit(False).alias("timelimit_unlimited"),
    )
    return table.select(  # usage columns are filled afterwards by synth_usage
        pl.col(name).cast(dtype) if name in table.columns else pl.lit(None, dtype).alias(name)
        for name, dtype in schema().items()
    )
