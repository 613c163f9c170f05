"""The batch simulator against a real Slurm: a recorded stream of short jobs, then its replay.

``make_stream`` draws a few hundred jobs of mixed sizes (1-2 nodes, 1-8 CPUs per node),
memory, time limits (1-3 min; a few run past theirs and are killed) and partitions, arriving
in bursts so that a queue forms, some waiting for an earlier job (``afterany``).
``record_stream`` submits them to the cluster in real time, waits for the last to end and
keeps everything the replay needs: the stream, the job ids, sacct's text, and the cluster's
``scontrol show nodes/partitions/config``. ``replay_recording`` rebuilds the cluster and its
scheduler settings from that text, replays the jobs (their real submission times and
elapsed times) and compares each simulated start with the real one
(:func:`sim.batch.metrics.agreement`). A recording is JSON, so the comparison can be re-run
anywhere without Slurm.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.batch.config import SchedulerConfig
from sim.batch.engine import simulate_batch
from sim.batch.metrics import agreement
from sim.batch.model import BatchCluster, Workload
from sim.batch.result import BatchResult
from sim.errors import InputError
from wass_chat.batch.sacct_workload import workload_from_jobs
from wass_chat.sacct.fetch import supported_fields
from wass_chat.sacct.parse import parse_sacct_text
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.scontrol_cluster import cluster_from_records, records, scheduler_from_config

FINAL_STATES = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL")
JOB_NAME = "wass-batch-validate"


@dataclass(frozen=True, slots=True)
class StreamJob:
    """One job of the stream: when it is submitted (seconds after the first) and what it asks."""

    offset_s: float
    sleep_s: int
    nodes: int
    cpus: int
    mem_mb: int
    limit_min: int
    partition: str
    after: int | None = None

    def sbatch_argv(self, parent_id: str | None) -> list[str]:
        argv = [
            "-J",
            JOB_NAME,
            "-p",
            self.partition,
            "-N",
            str(self.nodes),
            "--ntasks-per-node=1",
            "-c",
            str(self.cpus),
            f"--mem={self.mem_mb}M",
            "-t",
            str(self.limit_min),
            "-o",
            "/dev/null",
        ]
        if parent_id is not None:
            argv.append(f"--dependency=afterany:{parent_id}")
        return [*argv, "--wrap", f"sleep {self.sleep_s}"]


def make_stream(
    n_jobs: int,
    seed: int = 0,
    mean_gap_s: float = 1.0,
    max_sleep_s: int = 30,
    killed_share: float = 0.02,
) -> list[StreamJob]:
    """A deterministic stream for the local cluster (debug: n1-n4 with 2, 2, 4, 8 CPUs;
    small: n1-n2): bursts every 50 jobs, ``killed_share`` of the jobs sleeping 75 s under a
    1-minute limit (killed)."""
    rng = np.random.default_rng(seed)
    jobs: list[StreamJob] = []
    offset = 0.0
    for k in range(n_jobs):
        burst = k % 50 < 12
        offset += float(rng.exponential(0.15 if burst else mean_gap_s)) if k else 0.0
        small = rng.random() < 0.25
        nodes = 2 if rng.random() < (0.1 if small else 0.15) else 1
        if small or nodes == 2:
            cpus = int(rng.choice([1, 2]))
        else:
            cpus = int(rng.choice([1, 1, 2, 2, 4, 8]))
        sleep = int(np.clip(rng.lognormal(np.log(8), 0.6), 2, max_sleep_s))
        limit = int(rng.choice([1, 2, 3]))
        if rng.random() < killed_share:
            sleep, limit = 75, 1
        after = k - int(rng.integers(1, 6)) if k >= 5 and rng.random() < 0.05 else None
        mem = int(rng.choice([100, 200, 400]))
        jobs.append(
            StreamJob(
                round(offset, 2),
                sleep,
                nodes,
                cpus,
                mem,
                limit,
                "small" if small else "debug",
                after,
            )
        )
    return jobs


def record_stream(
    stream: list[StreamJob],
    commands: SlurmCommands | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    timeout_s: float = 3600.0,
) -> dict[str, Any]:
    """Run ``stream`` on the live cluster and return the recording (JSON-ready)."""
    commands = commands or SlurmCommands()
    commands.ping()
    recording: dict[str, Any] = {
        "stream": [asdict(j) for j in stream],
        "nodes": commands.run(["scontrol", "--oneliner", "show", "nodes"]),
        "partitions": commands.run(["scontrol", "--oneliner", "show", "partitions"]),
        "config": commands.run(["scontrol", "show", "config"]),
    }
    ids: list[str] = []
    began = time.monotonic()
    for k, job in enumerate(stream):
        delay = began + job.offset_s - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        parent = ids[job.after] if job.after is not None else None
        ids.append(commands.sbatch(job.sbatch_argv(parent)))
        if progress:
            progress("submitted", k + 1, len(stream))
    recording["job_ids"] = ids
    recording["sacct"] = _wait_for_accounting(commands, ids, began + timeout_s, progress)
    return recording


def _wait_for_accounting(
    commands: SlurmCommands,
    ids: list[str],
    deadline: float,
    progress: Callable[[str, int, int], None] | None,
) -> str:
    fields = supported_fields(commands.run(["sacct", "--helpformat"]))
    argv = ["sacct", "-a", "-P", "-X", "-j", ",".join(ids), f"--format={','.join(fields)}"]
    while True:
        text = commands.run(argv)
        jobs = parse_sacct_text(text).jobs
        done = int((jobs["state"].is_in(FINAL_STATES) & jobs["end"].is_not_null()).sum())
        if progress:
            progress("finished", done, len(ids))
        if done >= len(ids):
            return text
        if time.monotonic() > deadline:
            raise InputError("validation stream", [f"only {done} of {len(ids)} jobs ended in time"])
        time.sleep(2.0)


@dataclass(frozen=True)
class Replay:
    """A recording replayed: the inputs rebuilt from it, the simulation, the comparison."""

    cluster: BatchCluster
    scheduler: SchedulerConfig
    workload: Workload
    result: BatchResult
    agreement: dict[str, Any]

    def per_job(self) -> list[dict[str, Any]]:
        w, r = self.workload, self.result
        return [
            {
                "job": w.job_ids[i],
                "submit_s": int(w.submit_s[i] - w.submit_s.min()),
                "real_wait_s": int(w.recorded_start_s[i] - w.submit_s[i]),
                "sim_wait_s": int(r.start_s[i] - w.submit_s[i]) if r.start_s[i] >= 0 else None,
                "error_s": int(r.start_s[i] - w.recorded_start_s[i]) if r.start_s[i] >= 0 else None,
            }
            for i in range(len(w))
        ]


COMPLETING_S = 1
"""Seconds between a job's end and the next start on its node on the local cluster (the
median gap in the first 40-job recording): Slurm's COMPLETING state."""


def kill_grace(jobs: pl.DataFrame) -> int:
    """How long past their limit the recording's TIMEOUT jobs ran (median; 0 if none): Slurm
    notices an expired limit on a periodic check, not at the second."""
    over = jobs.filter(pl.col("state") == "TIMEOUT").select(
        pl.col("elapsed_s") - pl.col("timelimit_s")
    )
    return int(over.to_series().median() or 0) if over.height else 0


def replay_recording(recording: dict[str, Any], scheduler: SchedulerConfig | None = None) -> Replay:
    """Replay a recording with the scheduler settings it captured (or ``scheduler``), plus
    the two delays Slurm adds that a configuration does not state: :data:`COMPLETING_S` and
    the kill grace its TIMEOUT jobs show."""
    missing = [
        k
        for k in ("stream", "job_ids", "sacct", "nodes", "partitions", "config")
        if k not in recording
    ]
    if missing:
        raise InputError("recording", [f"missing {', '.join(missing)}"])
    cluster = cluster_from_records(records(recording["nodes"]), records(recording["partitions"]))
    jobs = parse_sacct_text(recording["sacct"]).jobs
    config = scheduler or replace(
        scheduler_from_config(recording["config"]),
        completing_s=COMPLETING_S,
        kill_grace_s=kill_grace(jobs),
    )
    ids, stream = recording["job_ids"], recording["stream"]
    depends = {
        ids[k]: f"afterany:{ids[s['after']]}"
        for k, s in enumerate(stream)
        if s.get("after") is not None
    }
    jobs = jobs.with_columns(
        pl.col("job_id")
        .replace_strict(depends, default=None, return_dtype=pl.String)
        .alias("dependency")
    )
    workload = workload_from_jobs(jobs).workload
    result = simulate_batch(cluster, workload, config)
    return Replay(cluster, config, workload, result, agreement(workload, result))


def load_recording(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(str(path), [f"not a readable recording: {exc}"]) from exc
    if not isinstance(data, dict):
        raise InputError(str(path), ["not a recording (expected a JSON object)"])
    return data


def scheduler_variants(base: SchedulerConfig) -> dict[str, SchedulerConfig]:
    """The captured configuration and the simplifications worth comparing against it."""
    return {
        "as configured": base,
        "EASY (one reservation)": replace(base, reservation_depth=1),
        "no backfill": replace(base, backfill=False),
        "fifo": replace(base, order="fifo"),
    }
