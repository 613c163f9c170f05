"""Facts for the assistant's efficiency questions, from the code the report and
`wass-chat sacct efficiency` use: "how efficient was job 42?", "which users wasted the most
core-hours last month?", "what was the CPU efficiency in January?", "how well did job 42 use
its GPUs?", "who wasted the most GPU hours last month?" (the GPU lines and ``gpu_wasters``).

Each function returns a JSON-safe dict of kind ``efficiency`` with a one- or two-sentence
``verdict`` computed from its own numbers (so the answer cannot contradict its facts).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

import polars as pl

from wass_chat.analytics import efficiency as eff
from wass_chat.analytics.gpu_usage import NOT_RECORDED
from wass_chat.analytics.gpu_waste import gpu_waste_by, period_gpu_table, summarize_gpu_use
from wass_chat.analytics.insights import NEGLIGIBLE_CORE_HOURS, amount
from wass_chat.analytics.job_efficiency import JobEfficiency, describe_job, jobs_efficiency
from wass_chat.analytics.period import Period, load_period, period_of, submission_span

WASTE_DEFINITION = (
    "wasted core-hours are allocated CPU time left idle (Elapsed x CPUs - CPU time used), so a "
    "big job at a good efficiency can waste more than a small idle one"
)


class EfficiencyFacts(TypedDict):
    """What the ``efficiency`` tool returns (kind ``efficiency``)."""

    kind: str
    scope: str
    """``job`` (figures of the asked jobs) or ``period`` (a period's totals and top wasters)."""
    verdict: str
    period: str
    user: str | None
    jobs: list[dict[str, Any]]
    summary: dict[str, Any]
    top_wasters: list[dict[str, Any]]
    lines: list[str]
    """The answer's body, one line each (the renderer prints them after the verdict)."""
    note: str
    gpu_wasters: list[dict[str, Any]]
    """Users by wasted GPU-hours (held - used, over jobs whose GPU use was recorded)."""


def job_facts(jobs: pl.LazyFrame, job_ids: list[str], note: str = "") -> EfficiencyFacts:
    """The figures of the asked jobs (an array's id: its tasks)."""
    found = jobs_efficiency(jobs, job_ids)
    lines: list[str] = []
    for job in found:
        head, *body = describe_job(job.to_dict()).splitlines()
        if len(found) > 1:
            lines.append(head)
        lines += ["- " + line.strip().removeprefix("- ") for line in body]
    return EfficiencyFacts(
        kind="efficiency",
        scope="job",
        verdict=_job_verdict(found, job_ids),
        period="",
        user=None,
        jobs=[job.to_dict() for job in found],
        summary={},
        top_wasters=[],
        lines=lines,
        note=note,
        gpu_wasters=[],
    )


def _job_verdict(found: list[JobEfficiency], asked: list[str]) -> str:
    if not found:
        return (
            f"Job {', '.join(asked)} is not in the accounting data: import it with "
            "`wass-chat sacct import` (or ask when Slurm answers)."
        )
    if len(found) > 1:
        measured = [j for j in found if j.usage_recorded and j.cpu_efficiency_pct is not None]
        if not measured:
            return f"{len(found)} jobs match; accounting recorded no usage for any of them."
        worst = min(measured, key=lambda j: j.cpu_efficiency_pct or 0.0)
        return (
            f"{len(found)} jobs match; the least CPU-efficient is {worst.job_id} at "
            f"{worst.cpu_efficiency_pct:.1f}%."
        )
    job = found[0]
    if job.state in ("PENDING", "RUNNING"):
        return f"Job {job.job_id} is {job.state.lower()}: efficiency is known once it ends."
    if not job.usage_recorded:
        return (
            f"Job {job.job_id} ({(job.state or 'ended').lower()}) ran, but accounting recorded "
            "no usage for it, so its efficiency cannot be told."
        )
    words = f"Job {job.job_id} ({(job.state or 'ended').lower()})"
    parts = []
    if job.cpu_efficiency_pct is not None:
        of = "its CPUs" if job.ncpus is None else f"its {job.ncpus:,} CPUs"
        parts.append(f"kept {job.cpu_efficiency_pct:.1f}% of {of} busy")
    if job.memory_efficiency_pct is not None:
        bound = "at least " if job.memory_basis == eff.MEMORY_BASES[-1] else ""
        parts.append(f"used {bound}{job.memory_efficiency_pct:.1f}% of its memory")
    if job.time_efficiency_pct is not None:
        parts.append(f"ran for {job.time_efficiency_pct:.1f}% of its time limit")
    if not parts:
        return words + ": no usage figure was recorded." + _gpu_sentence(job)
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return f"{words} {listed}." + _gpu_sentence(job)


def _gpu_sentence(job: JobEfficiency) -> str:
    """The verdict's GPU sentence ("Its 4 a100 GPUs ran at 12.5% ..."; "not recorded" when no
    source measured them), from the same figures as ``wass-chat sacct efficiency``."""
    g = job.gpu
    if not g:
        return ""
    held = f"{g['gpus']} {g['gpu_type'] + ' ' if g['gpu_type'] else ''}GPU"
    held += "s" if g["gpus"] != 1 else ""
    if not g["recorded"]:
        return f" It held {held}; {NOT_RECORDED}."
    return (
        f" Its {held} ran at {g['utilisation_pct']:.1f}% on average "
        f"({g['gpu_hours_used']:,.2f} of {g['gpu_hours_held']:,.2f} GPU-hours used)."
    )


def period_facts(
    jobs: pl.LazyFrame,
    start: datetime | None,
    end: datetime | None,
    period_words: str,
    user: str | None = None,
    count: int = 5,
    note: str = "",
    whole_cache: pl.LazyFrame | None = None,
) -> EfficiencyFacts:
    """A period's CPU and memory efficiency and its top wasters (most idle core-hours).

    ``whole_cache``: every job the cache holds, when ``jobs`` is only its scan up to the
    period's end; an empty period's answer says where the jobs are (default: ``jobs``)."""
    period = period_of(jobs, start, end)
    loaded = load_period(jobs, period, user)
    per_job = eff.job_efficiency(loaded, eff.step_usage(jobs, period.start).collect())
    summary = eff.summarize_efficiency(per_job)
    ranked = eff.efficiency_by(per_job, "user", count) if per_job.height else None
    wasters = [] if ranked is None else ranked.filter(pl.col("wasted_core_hours") > 0).to_dicts()
    lines = []
    if summary.measured_jobs:
        lines.append(
            f"- CPU: {summary.cpu_efficiency_pct:.1f}% of {summary.allocated_core_hours:,.1f} "
            f"allocated core-hours were used (median job {summary.median_cpu_efficiency_pct:.1f}%);"
            f" {summary.wasted_core_hours:,.1f} core-hours sat idle."
        )
    if summary.memory_jobs and summary.median_memory_efficiency_pct is not None:
        lines.append(
            f"- Memory: the median job peaked at {summary.median_memory_efficiency_pct:.1f}% of "
            f"its memory; {summary.low_memory_jobs_pct:.1f}% of {summary.memory_jobs:,} jobs "
            f"stayed under {100 * eff.LOW_MEMORY_EFFICIENCY:.0f}%."
        )
    for rank, row in enumerate(wasters, start=1):
        lines.append(
            f"{rank}. {row['user']}: {core_hours(row['wasted_core_hours'])} idle core-hours of "
            f"{core_hours(row['core_hours'])} ({row['cpu_eff_pct']:.1f}% CPU efficiency, "
            f"{row['jobs']:,} job{'s' if row['jobs'] != 1 else ''})"
        )
    if wasters:
        lines += ["", f"Top wasters: {WASTE_DEFINITION}."]
    gpu_wasters, gpu_lines = _gpu_period(loaded, jobs, period, count)
    lines += gpu_lines
    return EfficiencyFacts(
        kind="efficiency",
        scope="period",
        verdict=_period_verdict(
            summary,
            wasters,
            pretty_period(period_words),
            user,
            None if loaded.height else (jobs if whole_cache is None else whole_cache),
        ),
        period=pretty_period(period_words),
        user=user,
        jobs=[],
        summary=vars(summary),
        top_wasters=wasters,
        lines=lines,
        note=note,
        gpu_wasters=gpu_wasters,
    )


def _gpu_period(
    loaded: pl.DataFrame, jobs: pl.LazyFrame, period: Period, count: int
) -> tuple[list[dict[str, Any]], list[str]]:
    """The period's GPU-hours held, used and wasted, and the users who wasted the most (the
    report's GPU section's numbers); nothing when no job held a GPU."""
    per_job = period_gpu_table(loaded, jobs, period)
    g = summarize_gpu_use(per_job)
    if g is None:
        return [], []
    if not g.recorded_jobs:
        return [], [f"- GPUs: {g.gpu_jobs:,} jobs held {g.gpu_hours_held:,.1f} GPU-hours; "
                    f"{g.not_recorded_note()}"]  # fmt: skip
    ranked = gpu_waste_by(per_job, "user").filter(pl.col("wasted_gpu_hours") > 0).head(count)
    lines = [
        f"- GPUs: {g.used_gpu_hours:,.1f} of {g.recorded_gpu_hours:,.1f} GPU-hours with use "
        f"recorded were used ({g.utilisation_pct or 0:.1f}%); {g.wasted_gpu_hours:,.1f} wasted, "
        f"{g.idle_gpu_hours:,.1f} on GPUs at 0% ({g.idle_jobs:,} jobs)."
    ]
    lines += [
        f"{rank}. {row['user']}: {row['wasted_gpu_hours']:,.1f} wasted GPU-hours of "
        f"{row['recorded_gpu_hours']:,.1f} ({row['gpu_util_pct']:.1f}% GPU utilisation)"
        for rank, row in enumerate(ranked.iter_rows(named=True), start=1)
    ]
    note = g.not_recorded_note()
    return ranked.to_dicts(), lines + ([f"- {note}"] if note else [])


def pretty_period(words: str) -> str:
    """``2024-04`` -> ``April 2024``; other period words as they are."""
    try:
        return datetime.strptime(words, "%Y-%m").strftime("%B %Y")
    except ValueError:
        return words


def _period_verdict(
    s: eff.EfficiencySummary,
    wasters: list[dict[str, Any]],
    period: str,
    user: str | None,
    empty_period_of: pl.LazyFrame | None = None,
) -> str:
    """The answer's first sentence; ``empty_period_of``: the whole cache when the period held
    no job at all (None otherwise), to say where its jobs are instead of asking for an import."""
    who = f" of {user}" if user else ""
    if not s.measured_jobs:
        if empty_period_of is not None:
            first, last, count = submission_span(empty_period_of)
            if count and first is not None and last is not None:
                return (
                    f"No job{who} ran in {period}, so there is no efficiency to report; the "
                    f"accounting cache holds {count:,} jobs submitted {first:%Y-%m-%d} to "
                    f"{last:%Y-%m-%d}: ask about that period."
                )
        return (
            f"No finished job{who} in {period} has its usage recorded, so there is no "
            "efficiency to report (import accounting with `wass-chat sacct import`)."
        )
    words = (
        f"In {period}, {s.cpu_efficiency_pct:.1f}% of the {s.allocated_core_hours:,.1f} "
        f"core-hours allocated to {s.measured_jobs:,} finished jobs{who} were used."
    )
    if wasters and not user:
        top = wasters[0]
        tied = [w["user"] for w in wasters if w["wasted_core_hours"] == top["wasted_core_hours"]]
        if top["wasted_core_hours"] < NEGLIGIBLE_CORE_HOURS:
            words += f" No user left more than {NEGLIGIBLE_CORE_HOURS:g} core-hours idle."
        elif len(tied) > 1:
            words += (
                f" {', '.join(tied[:-1])} and {tied[-1]} tied for the most idle: "
                f"{core_hours(top['wasted_core_hours'])} core-hours each."
            )
        else:
            words += (
                f" {top['user']} left the most idle: {core_hours(top['wasted_core_hours'])} "
                f"core-hours at {top['cpu_eff_pct']:.1f}% CPU efficiency."
            )
    return words


def core_hours(value: float) -> str:
    """``12.3``, ``1,234.5``; under 0.05 the digits that make it non-zero (``0.03``)."""
    return f"{value:,.1f}" if value >= 0.05 else amount(value)
