"""Facts for the assistant's GPU questions, from the code `wass-chat sacct efficiency`, the
report's GPU section and `wass-chat gpu idle` use: "which GPU jobs are idle right now?", "who
wasted the most GPU hours last month?", "how well did job 42 use its GPUs?".

Each function returns a JSON-safe dict of kind ``gpu_usage`` whose ``verdict`` is computed from
its own numbers. Where no source measured a job's GPUs the verdict says "GPU use not recorded on
this cluster" and which setting would record it, never 0%.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

import polars as pl

from wass_chat.analytics.gpu_live import LiveGpuJob
from wass_chat.analytics.gpu_usage import HOW_TO_RECORD, NOT_RECORDED
from wass_chat.analytics.gpu_waste import gpu_waste_by, period_gpu_table, summarize_gpu_use
from wass_chat.analytics.insights import plural
from wass_chat.analytics.job_efficiency import describe_gpu, jobs_efficiency
from wass_chat.analytics.period import Period, load_period, period_of, pretty_period


class GpuUsageFacts(TypedDict):
    """What the ``gpu_usage`` tool returns (kind ``gpu_usage``)."""

    kind: str
    scope: str
    """``now`` (running jobs), ``job`` (the asked job) or ``period`` (GPU-hours wasted by user)."""
    verdict: str
    period: str
    jobs: list[dict[str, Any]]
    """``now``: :class:`LiveGpuJob` dicts; ``job``: the job's ``gpu`` figures."""
    gpu_wasters: list[dict[str, Any]]
    lines: list[str]
    note: str
    gpu_summary: dict[str, Any]
    """``period``: the headline (GPU jobs, GPU-hours held, recorded, used, wasted, at 0%)."""
    idle_after_min: float | None
    """``now``: minutes at 0% after which cancelling a job may be proposed (the setting)."""


def _facts(
    scope: str,
    verdict: str,
    period: str = "",
    jobs: list[dict[str, Any]] | None = None,
    gpu_wasters: list[dict[str, Any]] | None = None,
    lines: list[str] | None = None,
    note: str = "",
    idle_after_min: float | None = None,
    gpu_summary: dict[str, Any] | None = None,
) -> GpuUsageFacts:
    return GpuUsageFacts(
        kind="gpu_usage",
        scope=scope,
        verdict=verdict,
        period=period,
        jobs=jobs or [],
        gpu_wasters=gpu_wasters or [],
        lines=lines or [],
        note=note,
        idle_after_min=idle_after_min,
        gpu_summary=gpu_summary or {},
    )


def _held(gpus: int, kind: str | None) -> str:
    return f"{gpus} {kind + ' ' if kind else ''}GPU{'s' if gpus != 1 else ''}"


def live_facts(jobs: list[LiveGpuJob], idle_after_min: float, note: str = "") -> GpuUsageFacts:
    """Running jobs holding GPUs, which are at 0% and for how long."""
    lines = []
    for j in jobs:
        hours = j.run_time_s / 3600
        if not j.recorded:
            use = NOT_RECORDED
        else:
            use = f"{j.utilisation_pct:.1f}% per GPU ({j.source})"
            if j.idle:
                use = f"at 0% ({j.utilisation_pct:.1f}%, {j.source})"
        lines.append(
            f"- job {j.job_id} ({j.user}, {j.partition}, {j.nodes}): {_held(j.gpus, j.gpu_type)} "
            f"for {hours:,.2f} h; {use}"
        )
    idle = [j for j in jobs if j.idle]
    unknown = [j for j in jobs if not j.recorded]
    if not jobs:
        verdict = "No running job holds a GPU right now."
    else:
        gpus = sum(j.gpus for j in jobs)
        verdict = (
            f"{len(jobs)} running job{'s hold' if len(jobs) != 1 else ' holds'} "
            f"{gpus} GPU{'s' if gpus != 1 else ''}"
        )
        if idle:
            long_idle = [j for j in idle if j.run_time_s >= 60 * idle_after_min]
            ids = ", ".join(j.job_id for j in idle)
            verdict += f"; {len(idle)} at 0%: job {ids}"
            if long_idle:
                verdict += (
                    f" ({len(long_idle)} for over {idle_after_min:g} minutes: cancelling "
                    "it can be proposed with `wass-chat gpu idle --propose-cancel`, for a "
                    "person to approve)"
                )
        elif len(unknown) < len(jobs):
            verdict += "; none is at 0%"
        verdict += "."
        if unknown:
            verdict += (
                f" For {len(unknown)} of {len(jobs)} {NOT_RECORDED}, so whether they are idle "
                f"cannot be told ({HOW_TO_RECORD}; live use comes from sstat's TRESUsageInAve "
                "gres/gpuutil)."
            )
    return _facts(
        "now",
        verdict,
        jobs=[j.to_dict() for j in jobs],
        lines=lines,
        note=note,
        idle_after_min=idle_after_min,
    )


def job_facts(jobs: pl.LazyFrame, job_id: str, note: str = "") -> GpuUsageFacts:
    """How one finished (or running) job used its GPUs, from the efficiency view's figures."""
    found = jobs_efficiency(jobs, [job_id])
    if not found:
        verdict = (
            f"Job {job_id} is not in the accounting data: import it with `wass-chat sacct "
            "import` (or ask when Slurm answers)."
        )
        return _facts("job", verdict, note=note)
    job = found[0]
    g = job.gpu
    if not g:
        return _facts("job", f"Job {job.job_id} held no GPU.", note=note)
    held = _held(g["gpus"], g["gpu_type"])
    if not g["recorded"]:
        verdict = f"Job {job.job_id} held {held}; {g['not_recorded_why']}."
    else:
        verdict = (
            f"Job {job.job_id} kept its {held} at {g['utilisation_pct']:.1f}% on average: "
            f"{g['gpu_hours_used']:,.2f} of {g['gpu_hours_held']:,.2f} GPU-hours used, "
            f"{g['gpu_hours_idle'] or 0:,.2f} at 0%."
        )
    lines = ["- " + line.strip().removeprefix("- ") for line in describe_gpu(g)]
    lines += ["- " + tip for tip in job.suggestions if tip.startswith("GPU")]
    return _facts("job", verdict, jobs=[g], lines=lines, note=note)


def gpu_period(
    loaded: pl.DataFrame, jobs: pl.LazyFrame, period: Period, count: int
) -> tuple[list[dict[str, Any]], list[str], str | None, dict[str, Any]]:
    """The period's GPU-hours held, used and wasted, the users who wasted the most (the
    report's GPU section's numbers), a verdict and the headline; nothing when no job held
    a GPU."""
    per_job = period_gpu_table(loaded, jobs, period)
    g = summarize_gpu_use(per_job)
    if g is None:
        return [], [], None, {}
    summary = {
        **vars(g),
        "wasted_gpu_hours": g.wasted_gpu_hours,
        "utilisation_pct": g.utilisation_pct,
    }
    if not g.recorded_jobs:
        note = g.not_recorded_note() or NOT_RECORDED
        line = f"- GPUs: {g.gpu_jobs:,} jobs held {g.gpu_hours_held:,.1f} GPU-hours; {note}"
        said = f"{g.gpu_jobs:,} jobs held {g.gpu_hours_held:,.1f} GPU-hours; {note}"
        return [], [line], said, summary
    ranked = gpu_waste_by(per_job, "user").filter(pl.col("wasted_gpu_hours") > 0).head(count)
    lines = [
        f"- GPUs: {g.used_gpu_hours:,.1f} of {g.recorded_gpu_hours:,.1f} GPU-hours with use "
        f"recorded were used ({g.utilisation_pct or 0:.1f}%); {g.wasted_gpu_hours:,.1f} wasted, "
        f"{g.idle_gpu_hours:,.1f} on GPUs at 0% ({plural(g.idle_jobs, 'job')})."
    ]
    rows = ranked.to_dicts()
    lines += [
        f"{rank}. {row['user']}: {row['wasted_gpu_hours']:,.1f} wasted GPU-hours of "
        f"{row['recorded_gpu_hours']:,.1f} ({row['gpu_util_pct']:.1f}% GPU utilisation)"
        for rank, row in enumerate(rows, start=1)
    ]
    verdict = (
        f"{g.wasted_gpu_hours:,.1f} of {g.recorded_gpu_hours:,.1f} GPU-hours with use recorded "
        "were wasted"
    )
    if rows:
        top = rows[0]
        verdict += (
            f"; {top['user']} wasted the most: {top['wasted_gpu_hours']:,.1f} GPU-hours at "
            f"{top['gpu_util_pct']:.1f}% GPU utilisation"
        )
    missing = g.not_recorded_note()
    return rows, lines + ([f"- {missing}"] if missing else []), verdict, summary


def period_facts(
    jobs: pl.LazyFrame,
    start: datetime | None,
    end: datetime | None,
    period_words: str,
    user: str | None = None,
    count: int = 5,
    note: str = "",
    idle_after_min: float | None = None,
    gpu_summary: dict[str, Any] | None = None,
) -> GpuUsageFacts:
    """A period's GPU-hours wasted, and the users who wasted the most."""
    period = period_of(jobs, start, end)
    loaded = load_period(jobs, period, user)
    words = pretty_period(period_words)
    wasters, lines, said, summary = gpu_period(loaded, jobs, period, count)
    who = f" of {user}" if user else ""
    verdict = f"In {words}, {said}." if said else f"No finished job{who} in {words} held a GPU."
    return _facts(
        "period",
        verdict,
        period=words,
        gpu_wasters=wasters,
        lines=lines,
        note=note,
        gpu_summary=summary,
    )
