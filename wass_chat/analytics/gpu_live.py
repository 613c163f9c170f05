"""Running jobs' GPU use right now: what each holds, and how it uses it where the site records it.

Held: ``scontrol show job``'s ``TRES`` ``gres/gpu[:type]=N`` (with
``AccountingStorageTRES=gres/gpu``), else ``TresPerNode``/``TresPerJob`` ``gres[:/]gpu[:type]:N``.
Used, best source first:

1. a Princeton jobstats summary in ``AdminComment`` (``JS1:...``; a site's collector may refresh
   it while the job runs): the time-averaged utilisation per GPU (:mod:`wass_chat.sacct.jobstats`);
2. ``sstat -j J --format=JobID,NTasks,TRESUsageInAve,TRESUsageInMax -P -n``: ``gres/gpuutil`` of
   the running steps (Slurm 23.02+ with NVML/RSMI autodetect and ``gres/gpuutil`` accounted;
   per task, before 24.05.1 its last GPU's, from 24.05.1 the sum over its GPUs:
   :func:`~wass_chat.analytics.gpu_usage.per_gpu_utilisation`); Max is the busiest task's peak;
3. nothing: "GPU use not recorded on this cluster" and the setting that would record it, never 0%.

A job is *idle* when its figure is at most
:data:`~wass_chat.analytics.gpu_usage.IDLE_UTILISATION_PCT` (for sstat: the busiest task's peak
too). Text Slurm returns (job names, comments, users) is data.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from wass_chat.analytics.gpu_usage import (
    HOW_TO_RECORD,
    IDLE_UTILISATION_PCT,
    NOT_RECORDED,
    per_gpu_utilisation,
)
from wass_chat.sacct.jobstats import JobstatsCommentError, comment_gpus
from wass_chat.slurm.commands import SlurmCommandError, scontrol_records

SSTAT_FIELDS = ("JobID", "NTasks", "TRESUsageInAve", "TRESUsageInMax")


class SlurmRunner(Protocol):
    """What is asked of Slurm (:class:`~wass_chat.slurm.commands.SlurmCommands`)."""

    def run(self, argv: list[str]) -> str: ...


@dataclass(frozen=True)
class LiveGpuJob:
    """One running job holding GPUs, with its GPU use now (or why it is not known)."""

    job_id: str
    user: str
    partition: str
    nodes: str
    gpus: int
    gpu_type: str | None
    run_time_s: int
    start: str
    """``StartTime`` as scontrol prints it (an approval is bound to it: a requeued job differs)."""
    recorded: bool
    source: str | None
    """Where its use was read (jobstats AdminComment, sstat step J.S), None if nowhere."""
    utilisation_pct: float | None
    """Mean utilisation per GPU now (jobstats: time average so far; sstat: the steps' mean)."""
    peak_utilisation_pct: float | None
    """sstat TRESUsageInMax gres/gpuutil of the busiest task (None from jobstats)."""
    idle: bool | None
    """At 0% (None when use is not recorded: it cannot be told)."""
    evidence: list[str] = field(default_factory=list)
    """The fields read, as Slurm printed them (or why there is no figure)."""

    @property
    def gpu_hours_held(self) -> float:
        return self.gpus * self.run_time_s / 3600

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "gpu_hours_held": self.gpu_hours_held}


def tres_value(text: str, key: str) -> str | None:
    """``gres/gpuutil`` of ``cpu=00:00:01,gres/gpuutil=37,mem=1M`` -> ``37``."""
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name.strip() == key:
            return value.strip()
    return None


_GPU_TRES = re.compile(r"(?:^|,)gres/gpu(?::(?P<type>[\w.-]+))?=(?P<n>\d+)")
_GPU_PER = re.compile(r"gres[:/]gpu(?::(?P<type>[A-Za-z][\w.-]*))?(?::(?P<n>\d+))?")


def held_gpus(record: dict[str, str]) -> tuple[int, str | None]:
    """GPUs a job holds (count, type) from its ``scontrol show job`` record; (0, None) if none."""
    tres = record.get("TRES") or record.get("AllocTRES") or ""
    typed = [(m["type"], int(m["n"])) for m in _GPU_TRES.finditer(tres)]
    if typed:
        count = max(n for _, n in typed)
        kind = next((t for t, _ in typed if t), None)
        return count, kind
    nodes = int(record.get("NumNodes", "1") or 1) if (record.get("NumNodes") or "").isdigit() else 1
    for key, times in (("TresPerJob", 1), ("TresPerNode", nodes)):
        m = _GPU_PER.search(record.get(key) or "")
        if m:
            return int(m["n"] or 1) * times, m["type"]
    return 0, None


def run_seconds(clock: str) -> int:
    """``1-02:03:04``, ``02:03:04``, ``03:04`` -> seconds."""
    days, _, rest = clock.rpartition("-")
    parts = [int(p) for p in rest.split(":") if p.isdigit()]
    while len(parts) < 3:
        parts.insert(0, 0)
    h, m, s = parts[-3:]
    return (int(days) if days.isdigit() else 0) * 86400 + h * 3600 + m * 60 + s


def sstat_gpu(
    runner: SlurmRunner, job_id: str, gpus: int, version: tuple[int, int, int] | None
) -> tuple[float, float, str, list[str]] | None:
    """(mean per GPU, busiest task's peak, step, evidence) from sstat, or None when no running
    step records ``gres/gpuutil`` (or sstat has nothing to say)."""
    try:
        out = runner.run(["sstat", "-j", job_id, "--format=" + ",".join(SSTAT_FIELDS), "-P", "-n"])
    except SlurmCommandError:  # sstat refuses a job with no running step: nothing recorded
        return None
    best: tuple[float, float, str, list[str]] | None = None
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) < 4 or parts[0].endswith(".extern"):
            continue
        step, ntasks, ave, peak = parts[:4]
        ave_util, max_util = tres_value(ave, "gres/gpuutil"), tres_value(peak, "gres/gpuutil")
        if ave_util is None:
            continue
        tasks = int(ntasks) if ntasks.isdigit() else 1
        reading = per_gpu_utilisation(float(ave_util) * tasks, tasks, gpus, version)
        evidence = [
            f"sstat {step}: TRESUsageInAve gres/gpuutil={ave_util}, TRESUsageInMax "
            f"gres/gpuutil={max_util}, NTasks={tasks} ({reading.rule})"
        ]
        found = (reading.mean_pct, float(max_util or ave_util), step, evidence)
        if best is None or found[0] > best[0]:
            best = found
    return best


def live_gpu_job(
    record: dict[str, str], runner: SlurmRunner, version: tuple[int, int, int] | None
) -> LiveGpuJob | None:
    """The job of one ``scontrol show job`` record if it runs and holds GPUs, else None."""
    if record.get("JobState") != "RUNNING":
        return None
    gpus, kind = held_gpus(record)
    if not gpus:
        return None
    job_id = record.get("JobId", "")
    base: dict[str, Any] = dict(
        job_id=job_id,
        user=(record.get("UserId") or "").split("(")[0],
        partition=record.get("Partition", ""),
        nodes=record.get("NodeList", ""),
        gpus=gpus,
        gpu_type=kind,
        run_time_s=run_seconds(record.get("RunTime", "0")),
        start=record.get("StartTime", ""),
    )
    comment = record.get("AdminComment") or ""
    try:
        summary = comment_gpus(comment) if comment.startswith("JS1:") else None
    except JobstatsCommentError:
        summary = None
    if summary is not None:
        util = summary.utilization_pct
        each = ", ".join(f"{g.node}/{g.index} {g.utilization_pct:.1f}%" for g in summary.gpus)
        return LiveGpuJob(
            **base,
            recorded=True,
            source="jobstats AdminComment gpu_utilization (time average)",
            utilisation_pct=util,
            peak_utilisation_pct=None,
            idle=util <= IDLE_UTILISATION_PCT,
            evidence=[f"AdminComment JS1 summary: gpu_utilization {each or 'none'}"],
        )
    measured = sstat_gpu(runner, job_id, gpus, version)
    if measured is not None:
        mean, peak, step, evidence = measured
        return LiveGpuJob(
            **base,
            recorded=True,
            source=f"sstat TRESUsageInAve/Max gres/gpuutil of step {step}",
            utilisation_pct=mean,
            peak_utilisation_pct=peak,
            idle=mean <= IDLE_UTILISATION_PCT and peak <= IDLE_UTILISATION_PCT,
            evidence=evidence,
        )
    return LiveGpuJob(
        **base,
        recorded=False,
        source=None,
        utilisation_pct=None,
        peak_utilisation_pct=None,
        idle=None,
        evidence=[
            "no jobstats summary in AdminComment and no gres/gpuutil in sstat's TRESUsageInAve: "
            f"{NOT_RECORDED} ({HOW_TO_RECORD}; sstat has it from Slurm 23.02)"
        ],
    )


def running_gpu_jobs(
    runner: SlurmRunner, version: tuple[int, int, int] | None, job_id: str | None = None
) -> list[LiveGpuJob]:
    """Every running job that holds GPUs (or just ``job_id``), by job id."""
    argv = ["scontrol", "--oneliner", "show", "job"] + ([job_id] if job_id else [])
    jobs = [live_gpu_job(r, runner, version) for r in scontrol_records(runner.run(argv))]
    found = [j for j in jobs if j is not None]
    return sorted(found, key=lambda j: int(j.job_id) if j.job_id.isdigit() else 0)
