"""The curated list of sacct fields wass-chat reads, and the typed columns they become.

One source of truth: :data:`FIELDS` fixes the ``--format`` list passed to ``sacct`` (and so the
column order of ``sacct -P -n`` output), and each field names the column it becomes in the
parsed table and the kind of value it holds. Field names are Slurm's own (``sacct
--helpformat``); column names are snake_case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wass_chat.sacct.gpu_columns import GPU_COLUMN_DOCS

ValueKind = Literal[
    "text", "timestamp", "duration", "cpu_time", "int", "state", "exit_code", "memory"
]


@dataclass(frozen=True, slots=True)
class SacctField:
    """One sacct field: its Slurm name, the column it becomes and how its text is read."""

    name: str
    column: str
    kind: ValueKind
    doc: str


FIELDS: tuple[SacctField, ...] = (
    SacctField("JobID", "job_id", "text", "job id as shown: 123, 45_1 (array task), 123.batch"),
    SacctField("JobIDRaw", "job_id_raw", "text", "numeric id, unique per array task and step"),
    SacctField("JobName", "job_name", "text", "name given at submission"),
    SacctField("User", "user", "text", "submitting user"),
    SacctField("Account", "account", "text", "charged account"),
    SacctField("Partition", "partition", "text", "partition the job ran in"),
    SacctField("QOS", "qos", "text", "quality of service"),
    SacctField("Submit", "submit", "timestamp", "submission time (cluster local time)"),
    SacctField("Eligible", "eligible", "timestamp", "time the job became eligible to run"),
    SacctField("Start", "start", "timestamp", "start time; null when it never started"),
    SacctField("End", "end", "timestamp", "end time; null while pending or running"),
    SacctField("Elapsed", "elapsed_s", "duration", "wall-clock run time, seconds"),
    SacctField(
        "Timelimit", "timelimit_s", "duration", "requested walltime, seconds; null if unlimited"
    ),
    SacctField("State", "state", "state", "final state without its 'by <uid>' suffix"),
    SacctField("ExitCode", "exit_code", "exit_code", "exit status of the batch script"),
    SacctField("NNodes", "nnodes", "int", "allocated (or requested, if pending) nodes"),
    SacctField("NCPUS", "ncpus", "int", "allocated (or requested) CPUs"),
    SacctField("ReqMem", "req_mem_bytes", "memory", "requested memory for the whole job, bytes"),
    SacctField("ReqTRES", "req_tres", "text", "requested trackable resources"),
    SacctField("AllocTRES", "alloc_tres", "text", "allocated trackable resources"),
    SacctField("NodeList", "node_list", "text", "Slurm hostlist of allocated nodes"),
    SacctField("Flags", "flags", "text", "scheduling flags: SchedMain, SchedBackfill, SchedSubmit"),
    SacctField("Reason", "reason", "text", "last reason the job waited"),
    SacctField("Priority", "priority", "int", "scheduling priority"),
    SacctField("Comment", "comment", "text", "admin/user comment (wass-chat placement tokens)"),
    SacctField("Dependency", "dependency", "text", "dependency expression at submission"),
    # Usage fields, appended so that older headerless exports (the fields above) stay a prefix.
    SacctField(
        "TotalCPU",
        "total_cpu_s",
        "cpu_time",
        "CPU time used (user + system), seconds with their fractions (``00:38.500``); on an "
        "allocation row the sum over its steps",
    ),
    SacctField(
        "MaxRSS",
        "max_rss_bytes",
        "memory",
        "largest resident set of any task, bytes; "
        "filled on step rows (empty on the allocation row)",
    ),
    SacctField(
        "TRESUsageInTot",
        "tres_usage_in_tot",
        "text",
        "TRES used, summed over tasks (cpu=HH:MM:SS,mem=...,gres/gpuutil=...)",
    ),
    SacctField(
        "NTasks",
        "ntasks",
        "int",
        "tasks of a step (MaxRSS x NTasks bounds the step's memory when TRESUsageInTot is absent)",
    ),
    # GPU usage (docs/analytics.md "GPU usage"), appended after NTasks for the same reason.
    SacctField(
        "TRESUsageInMax",
        "tres_usage_in_max",
        "text",
        "TRES used by the step's busiest task (gres/gpuutil=percent, gres/gpumem=bytes)",
    ),
    SacctField(
        "TRESUsageInAve",
        "tres_usage_in_ave",
        "text",
        "TRES used, mean over the step's tasks",
    ),
    SacctField(
        "AdminComment",
        "admin_comment",
        "text",
        "site's comment; Princeton jobstats stores its summary there (JS1:base64(gzip(JSON)))",
    ),
)

HEADERLESS_LAYOUTS: tuple[tuple[SacctField, ...], ...] = (
    FIELDS,
    FIELDS[:30],
    FIELDS[:29],
    FIELDS[:26],
)
"""Column layouts of the product's own headerless ``sacct -P -n`` files, newest first: each
release appended fields (the usage fields at 29, NTasks at 30, the GPU usage fields at 33), so
every older layout is a prefix, told apart by its field count."""

FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
FORMAT_ARGUMENT = ",".join(FIELD_NAMES)
"""The value of ``sacct --format``."""

FIELD_BY_NAME: dict[str, SacctField] = {f.name.lower(): f for f in FIELDS}
"""Lookup by Slurm name, case-insensitive (sacct headers are not case-stable across sites)."""

DERIVED_COLUMNS: dict[str, str] = {
    "is_step": "true for job steps (123.batch, 123.0): analytics count allocations only",
    "array_job_id": "array master id for array tasks (45 in 45_1), else null",
    "cancelled_by": "uid from 'CANCELLED by <uid>', else null",
    "exit_status": "exit status from ExitCode 'status:signal'",
    "exit_signal": "signal from ExitCode 'status:signal'",
    "backfilled": "Flags contains SchedBackfill",
    "timelimit_unlimited": "Timelimit was UNLIMITED or Partition_Limit",
    "het_job_id": "heterogeneous job leader id (123 in 123+1), else null",
    "source": "where the row came from: 'sacct' (live), 'file:<name>' or 'synthetic'",
    "slurm_version": "version of the sacct that printed the row (live imports), else null",
    **GPU_COLUMN_DOCS,
}
