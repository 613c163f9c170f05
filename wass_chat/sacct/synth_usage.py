"""Synthetic resource usage for synthetic jobs: TotalCPU, MaxRSS and TRESUsageInTot.

The efficiency view needs what jobs *used*, not only what they were given. These figures are
invented, shaped after what jobstats/reportseff reports from sites commonly show (the shapes are
our assumption, not measurements of any cluster):

* CPU efficiency is a per-user habit: most users keep their cores fairly busy (Beta(4, 1.6),
  mean 0.71), while one user in eight runs serial code on every core of its single-node jobs
  (efficiency about 1 / NCPUS); GPU jobs keep their CPUs half as busy, failed jobs 0.6x as busy;
* memory is over-requested: a job's peak resident set is a per-user fraction of its per-node
  request (Beta(1.3, 3.5), mean 0.27) times lognormal noise, capped at 98%; OUT_OF_MEMORY jobs
  peak at 100-105% of it (the kill is not instantaneous);
* jobs that never started used nothing: TotalCPU ``00:00:00`` and no MaxRSS, as sacct prints;
* GPU jobs (partition ``gpu``) record ``gres/gpuutil`` and ``gres/gpumem`` as Slurm 24.05.1+
  does for one task holding all its GPUs (the sum over them): one GPU user in six leaves its
  GPUs at 0%, the others keep them Beta(2, 2.5)-busy (mean 44%), and peak GPU memory is a
  per-user Beta(1.2, 4) share (mean 23%) of an 80 GiB GPU.

Draws come from their own generator (seeded from the table's seed and a fixed stream number), so
adding usage left every other synthetic column as it was for a given seed. Without steps the
usage sits on the job's row; :func:`~wass_chat.sacct.steps.with_job_steps` moves MaxRSS and
TRESUsageInTot to the ``.batch`` step, where sacct records them.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from wass_chat.sacct.render import format_duration

USAGE_STREAM = 1
"""Second seed word of the usage generator (the main draws use the bare seed)."""
SERIAL_USER_SHARE = 0.125
GPU_CPU_FACTOR = 0.5
FAILED_CPU_FACTOR = 0.6
MAX_MEMORY_FRACTION = 0.98
IDLE_GPU_USER_SHARE = 1 / 6
GPU_MEMORY_KIB = 80 * 2**20
GPUS_PER_NODE = 8
"""GPUs of a node of the synthetic ``gpu`` partition."""


def with_usage(table: pl.DataFrame, seed: int) -> pl.DataFrame:
    """``table`` (synthetic jobs, no steps) with TotalCPU, MaxRSS and TRESUsageInTot filled."""
    rng = np.random.default_rng([seed, USAGE_STREAM])
    n = table.height
    user = table["user"].str.slice(4).cast(pl.Int64).to_numpy()
    n_users = int(user.max()) + 1 if n else 0
    cpu_habit = rng.beta(4.0, 1.6, n_users)
    serial = rng.random(n_users) < SERIAL_USER_SHARE
    memory_habit = rng.beta(1.3, 3.5, n_users)

    ncpus = np.maximum(table["ncpus"].to_numpy(), 1)
    elapsed = table["elapsed_s"].fill_null(0).to_numpy()
    state = table["state"].to_numpy()
    started = table["start"].is_not_null().to_numpy()
    gpu = (table["partition"] == "gpu").to_numpy()

    one_node = table["nnodes"].to_numpy() == 1
    serial_job = serial[user] & one_node
    efficiency = np.where(serial_job, rng.uniform(0.8, 1.0, n) / ncpus, cpu_habit[user])
    efficiency = efficiency * rng.lognormal(0.0, 0.15, n)
    efficiency = np.where(gpu, efficiency * GPU_CPU_FACTOR, efficiency)
    efficiency = np.where(state == "FAILED", efficiency * FAILED_CPU_FACTOR, efficiency)
    efficiency = np.clip(efficiency, 0.005, 1.0)
    total_cpu = np.where(started, np.round(elapsed * ncpus * efficiency), 0).astype(np.int64)

    per_node = table["req_mem_bytes"].to_numpy() / np.maximum(table["nnodes"].to_numpy(), 1)
    fraction = np.minimum(memory_habit[user] * rng.lognormal(0.0, 0.35, n), MAX_MEMORY_FRACTION)
    fraction = np.where(state == "OUT_OF_MEMORY", rng.uniform(1.0, 1.05, n), fraction)
    kib = np.round(per_node * np.maximum(fraction, 0.001) / 2**10).astype(np.int64)
    usage = table.with_columns(
        pl.Series("total_cpu_s", total_cpu.astype(np.float64)),
        pl.when(pl.col("start").is_not_null())
        .then(pl.Series(kib * 2**10))
        .cast(pl.Int64)
        .alias("max_rss_bytes"),
    )
    tres = pl.concat_str(
        [
            pl.lit("cpu="),
            format_duration(pl.col("total_cpu_s").cast(pl.Int64)),
            pl.lit(",energy=0,mem="),
            (pl.col("max_rss_bytes") * pl.col("nnodes") // 2**10).cast(pl.String),
            pl.lit("K,pages=0"),
        ]
    )
    gpu_util, gpu_kib = _gpu_use(rng, user, n_users, gpu & started, n)
    gpus = table["nnodes"].to_numpy() * GPUS_PER_NODE
    gpu_part = pl.concat_str(
        [
            pl.lit(",gres/gpumem="),
            pl.Series(gpu_kib * gpus).cast(pl.String),
            pl.lit("K,gres/gpuutil="),
            pl.Series(np.round(gpu_util * gpus).astype(np.int64)).cast(pl.String),
        ]
    )
    with_gpu = pl.Series(gpu & started)
    tres = pl.concat_str(
        [
            pl.lit("cpu="),
            format_duration(pl.col("total_cpu_s").cast(pl.Int64)),
            pl.lit(",energy=0"),
            pl.when(with_gpu).then(gpu_part).otherwise(pl.lit("")),
            pl.lit(",mem="),
            (pl.col("max_rss_bytes") * pl.col("nnodes") // 2**10).cast(pl.String),
            pl.lit("K,pages=0"),
        ]
    )
    recorded = pl.col("max_rss_bytes").is_not_null()
    return usage.with_columns(
        pl.when(recorded).then(tres).alias("tres_usage_in_tot"),
        pl.when(recorded & with_gpu).then(tres).alias("tres_usage_in_max"),  # one task
    )


def _gpu_use(
    rng: np.random.Generator, user: np.ndarray, n_users: int, gpu: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per job: mean utilisation per GPU (percent) and peak memory per GPU (KiB)."""
    idle_user = rng.random(n_users) < IDLE_GPU_USER_SHARE
    busy = rng.beta(2.0, 2.5, n_users)
    memory = rng.beta(1.2, 4.0, n_users)
    util = np.where(idle_user[user], 0.0, busy[user] * rng.lognormal(0.0, 0.2, n) * 100)
    kib = np.round(memory[user] * rng.lognormal(0.0, 0.3, n) * GPU_MEMORY_KIB)
    kib = np.clip(kib, 2**10, GPU_MEMORY_KIB).astype(np.int64)
    return np.where(gpu, np.clip(util, 0, 100), 0.0), np.where(gpu, kib, 0)
