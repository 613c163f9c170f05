"""Bulk learning from the accounting cache: past runs of the product's own submissions.

Every job ``wass-chat submit`` makes carries its run in its comment
(``wass:v1:run=RUN;task=TASK;node=NODE``) and its name (``wass-RUN-TASK``), and the cache
(``wass-chat sacct import``) keeps both, with each job's node, start, end and state. So the runs a
site made before it learned from them are still there: :func:`sacct_runs` groups the cached jobs
by run, and :func:`learn_from_sacct` turns each run the decision log knows (it holds the graph,
the platform and the plan) into a case exactly as live learning does, same case id included, so
a run learned both ways is stored once. A run must have ended in the cache (every task's job in a
final state with its end); one that has not, or that the decision log lacks, is reported with
the reason and left for later.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import polars as pl

from wass_chat.learn.learner import Learned, learn_finished
from wass_chat.learn.run_cases import run_ended
from wass_chat.runlog import RunLog, RunRecord
from wass_chat.sacct.cache import SacctCache
from wass_chat.slurm.runs import TaskStatus
from wass_chat.slurm.submission import TOKEN_PREFIX, token_value

if TYPE_CHECKING:
    from kb.store import KnowledgeBase

_TOKEN_RUN = re.compile(re.escape(TOKEN_PREFIX) + r"run=([A-Za-z0-9_.\-]+);task=([^;]*)")
_NAME_RUN = re.compile(r"^wass-(\d{8}-\d{6}-[0-9a-f]{4})-(.+)$")
"""Job names ``wass-RUN-TASK`` (run ids are ``YYYYMMDD-HHMMSS-xxxx``, :func:`new_run_id`)."""
_COLUMNS = ("job_id", "job_name", "comment", "state", "node_list", "start", "end")


@dataclass(frozen=True)
class SacctLearning:
    """What one bulk learning found and did."""

    learned: list[Learned] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """Run id -> why it was not learned (not in the decision log, not ended in the cache)."""
    jobs: int = 0
    """The product's jobs found in the cache."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs,
            "learned": [x.to_dict() for x in self.learned],
            "skipped": dict(sorted(self.skipped.items())),
        }


def run_of(comment: str | None, name: str | None) -> tuple[str, str] | None:
    """(run id, task as written) of one of the product's jobs, from its placement comment or,
    failing that, its job name; None for anyone else's job."""
    found = _TOKEN_RUN.search(comment or "")
    if found:
        return found.group(1), found.group(2)
    named = _NAME_RUN.match(name or "")
    return (named.group(1), named.group(2)) if named else None


def sacct_runs(cache: SacctCache) -> dict[str, list[dict[str, Any]]]:
    """Run id -> the cached rows of its jobs (allocations, not steps), for every run the
    product submitted that the cache holds."""
    product = pl.col("comment").str.contains(TOKEN_PREFIX, literal=True).fill_null(False) | (
        pl.col("job_name").str.starts_with("wass-").fill_null(False)
    )
    rows = cache.scan().filter(~pl.col("is_step") & product).select(_COLUMNS).collect()
    runs: dict[str, list[dict[str, Any]]] = {}
    for row in rows.iter_rows(named=True):
        found = run_of(row["comment"], row["job_name"])
        if found is not None:
            runs.setdefault(found[0], []).append({**row, "task": found[1]})
    return runs


def statuses_from_cache(record: RunRecord, rows: list[dict[str, Any]]) -> list[TaskStatus]:
    """The run's task statuses as the cache saw its jobs (matched by job id, else by task)."""
    by_job = {str(r["job_id"]): r for r in rows}
    by_task = {str(r["task"]): r for r in rows}
    statuses = []
    for d in record.decisions:
        row = by_job.get(d.job_id or "") or by_task.get(token_value(d.task))
        if row is None:
            continue
        statuses.append(
            TaskStatus(
                task=d.task,
                job_id=d.job_id or str(row["job_id"]),
                planned_node=d.node,
                state=str(row["state"] or ""),
                node=str(row["node_list"] or ""),
                start=_iso(row["start"]),
                end=_iso(row["end"]),
                reason="",
            )
        )
    return statuses


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""


def learn_from_sacct(
    cache: SacctCache, runlog: RunLog, kb: KnowledgeBase, only: str | None = None
) -> SacctLearning:
    """Learn every ended run of the product's found in ``cache`` (or only run ``only``)."""
    runs = sacct_runs(cache)
    result = SacctLearning(jobs=sum(len(rows) for rows in runs.values()))
    chosen: Mapping[str, list[dict[str, Any]]] = (
        {only: runs.get(only, [])} if only is not None else runs
    )
    for run_id, rows in sorted(chosen.items()):
        if not rows:
            result.skipped[run_id] = "no job of this run in the accounting cache"
            continue
        if not runlog.path(run_id).is_file():
            result.skipped[run_id] = (
                f"{len(rows)} jobs in the cache, but the run is not in the decision log "
                f"({runlog.runs_dir}): its graph and plan are unknown"
            )
            continue
        record = runlog.get(run_id)
        statuses = statuses_from_cache(record, rows)
        if len(statuses) < len(record.job_ids) or not run_ended(record, statuses):
            result.skipped[run_id] = (
                f"not ended in the cache ({len(statuses)} of {len(record.job_ids)} jobs, "
                "some without an end): import a later period first"
            )
            continue
        result.learned.append(learn_finished(record, statuses, kb, runlog))
    return result
