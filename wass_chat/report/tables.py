"""The report's own tables (summary, data quality, workflow runs), shared by HTML and Markdown.

Each is a :class:`~wass_chat.report.columns.Table`: its headers come from the columns table.
"""

from __future__ import annotations

from collections.abc import Callable

from wass_chat.analytics.insights import human_duration, percent, plural
from wass_chat.analytics.summary import PeriodSummary
from wass_chat.report.build import ReportData
from wass_chat.report.columns import Table, table, written_table
from wass_chat.report.runs import RunSection, local_time

Rows = list[tuple[str, ...]]


def summary_table(
    s: PeriodSummary, nodes_seen: int, previous: PeriodSummary | None = None
) -> Table:
    """The period summary, measure by measure; with ``previous``, a column for that period."""
    rows: Rows = [(label, value(s)) for label, value in _SUMMARY]
    rows.append(("Nodes seen", f"{nodes_seen:,}"))
    if previous is None:
        return written_table(["measure", "this_period"], rows)
    return written_table(
        ["measure", "this_period", "previous_period"],
        [
            (label, value, _SUMMARY_BY_LABEL[label](previous) if label in _SUMMARY_BY_LABEL else "")
            for label, value in rows
        ],
    )


def _waits(s: PeriodSummary) -> str:
    return " / ".join(
        human_duration(v) for v in (s.wait_mean_s, s.wait_median_s, s.wait_p90_s, s.wait_max_s)
    )


_SUMMARY: tuple[tuple[str, Callable[[PeriodSummary], str]], ...] = (
    ("Jobs submitted", lambda s: f"{s.jobs:,}"),
    (
        "Users / accounts / partitions",
        lambda s: f"{s.users:,} / {s.accounts:,} / {s.partitions:,}",
    ),
    ("Finished (as last recorded)", lambda s: f"{s.finished:,}"),
    ("Running / pending at the period's end", lambda s: f"{s.running:,} / {s.pending:,}"),
    ("Refused by Slurm at submission (never ran)", lambda s: f"{s.refused:,}"),
    (
        "Failure / timeout / cancellation rate",
        lambda s: (
            f"{percent(s.failure_rate)} / {percent(s.timeout_rate)} / {percent(s.cancel_rate)}"
        ),
    ),
    ("Queue wait mean / median / p90 / max", _waits),
    (
        "Walltime requested / used (sum, median job)",
        lambda s: (
            f"{_ratio(s.over_request_ratio)} / {_ratio(s.over_request_median)} "
            f"over {plural(s.over_request_jobs, 'completed job')}"
        ),
    ),
    ("Used less than half of the request", lambda s: percent(s.under_half_share)),
    ("Backfill share of started jobs", lambda s: percent(s.backfill_share)),
    ("Node-hours / core-hours", lambda s: f"{s.node_hours:,.0f} / {s.core_hours:,.0f}"),
    (
        "Final states",
        lambda s: ", ".join(f"{k} {v:,}" for k, v in s.state_counts.items()) or "none",
    ),
)
_SUMMARY_BY_LABEL = dict(_SUMMARY)


def comparison_table(runs: tuple[RunSection, ...]) -> Table:
    """Each run's workflow under every scheduler of the comparison, fastest first per run."""
    rows = []
    for r in runs:
        best = min(r.makespans.values()) if r.makespans else None
        for name, makespan in sorted(r.makespans.items(), key=lambda kv: (kv[1], kv[0])):
            notes = (("fastest", makespan == best), ("the run's scheduler", name == r.scheduler))
            remark = ", ".join(note for note, applies in notes if applies)
            rows.append((r.run_id, r.workflow, name, makespan, remark))
    return table(["run_id", "workflow", "scheduler", "makespan_s", "remark"], rows)


def runs_table(runs: tuple[RunSection, ...]) -> Table:
    """One row per run: what ran, how many Slurm jobs, planned against actual makespan, state.

    The planned makespan is in real seconds: a ``--scale`` run's simulated plan times its scale.
    The actual one is missing until every task has a real start and end."""
    rows = [
        (
            r.run_id,
            local_time(r.created).strftime("%Y-%m-%d %H:%M"),
            r.workflow,
            r.scheduler,
            len(r.decisions),
            r.jobs,
            None if r.planned_makespan is None else r.planned_makespan * (r.scale or 1.0),
            r.actual_makespan,
            r.state,
        )
        for r in runs
    ]
    codes = [
        "run_id",
        "created",
        "workflow",
        "scheduler",
        "tasks",
        "jobs",
        "planned_makespan_s",
        "actual_makespan_s",
        "state",
    ]
    return table(codes, rows)


def decision_table(run: RunSection) -> Table:
    """One row per placement decision of ``run``."""
    return written_table(
        ["task", "node", "job_id", "planned", "state", "alternatives", "evidence"],
        [
            (d.task, d.node, d.job_id, d.planned, d.state, d.alternatives, d.evidence)
            for d in run.decisions
        ],
    )


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def data_quality_table(report: ReportData) -> Table:
    """Lines read and dropped, unreadable values per column, and the period's data sources."""
    q = report.quality
    rows: Rows = [
        ("Imports", f"{q.imports:,}"),
        ("Lines read", f"{q.lines:,}"),
        ("Malformed lines (dropped)", f"{q.malformed:,}"),
    ]
    rows += [
        (f"Unreadable {name} values (kept as empty)", f"{n:,}")
        for name, n in sorted(q.bad_values.items())
    ]
    rows += [
        (f"Jobs of the period from {_source(source)}", f"{n:,}")
        for source, n in report.analysis.sources.items()
    ]
    return written_table(["measure", "count"], rows)


def _source(source: str) -> str:
    """``sacct``, ``file:<name>`` or ``synthetic`` (a row's ``source``) in words."""
    if source.startswith("file:"):
        return f"the file {source.removeprefix('file:')}"
    return {"sacct": "sacct", "synthetic": "synthetic data"}.get(source, source)


def mixed_sources_note(sources: dict[str, int]) -> str | None:
    """A warning when the period's jobs come from more than one source, or from synthetic data:
    a report never mixes them silently."""
    if not sources:
        return None
    listed = ", ".join(f"{source}: {n:,} jobs" for source, n in sources.items())
    if len(sources) > 1:
        return (
            f"This period mixes accounting data from {len(sources)} sources ({listed}); "
            "every figure counts them together."
        )
    if "synthetic" in sources:
        return "Every job of this period is synthetic (wass-chat sacct synth), not a cluster's."
    return None
