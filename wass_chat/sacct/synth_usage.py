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
* jobs that never started used nothing: TotalCPU ``00:00:00`` and no MaxRSS, as sacct prints.

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
    return usage.with_columns(
        pl.when(pl.col("max_rss_bytes").is_not_null()).then(tres).alias("tres_usage_in_tot")
    )
