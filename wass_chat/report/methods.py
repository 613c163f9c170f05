"""How every number in the report is computed, in words; rendered as the report's last section."""

from __future__ import annotations

from wass_chat.analytics.anomalies import __doc__ as _anomaly_rules

METHODS: tuple[tuple[str, str], ...] = (
    (
        "Source",
        "Slurm accounting (sacct -P, fields in wass_chat.sacct.fields) cached as Parquet, "
        "one row per JobID (the latest import wins). Job steps (123.batch, 123.0) are excluded: "
        "every statistic counts allocations. Times are the cluster's local time as sacct "
        "prints them.",
    ),
    (
        "Period membership",
        "A job belongs to the period [start, end) when it was submitted in it, so "
        "each job is counted in exactly one period. Jobs submitted earlier that ran during the "
        "period "
        "count only towards utilisation and node usage (their busy time inside the period).",
    ),
    (
        "Finished jobs",
        "Jobs with an end time whose state is not PENDING, RUNNING, REQUEUED, "
        "RESIZING or SUSPENDED. Rates divide by the number of finished jobs.",
    ),
    (
        "Failure rate",
        "Finished jobs ending FAILED, OUT_OF_MEMORY, NODE_FAIL or BOOT_FAIL over "
        "finished jobs. Timeout rate: TIMEOUT; cancellation rate: CANCELLED (any 'by <uid>').",
    ),
    (
        "Queue wait",
        "start - eligible (submit when eligible is unknown), in seconds, clipped at 0, "
        "for jobs that started. Jobs cancelled before starting have no wait. Mean, median, p90 "
        "and per-state quantiles use linear interpolation (numpy's default).",
    ),
    (
        "Walltime over-request",
        "Over completed jobs submitted in the period with a finite Timelimit "
        "and Elapsed > 0: ratio = sum(Timelimit) / sum(Elapsed); median = median of per-job "
        "Timelimit / Elapsed; 'used less than half' = share with Timelimit / Elapsed > 2.",
    ),
    ("Backfill share", "Started jobs whose Flags contain SchedBackfill over started jobs."),
    (
        "Node-hours",
        "Per job Elapsed x NNodes / 3600, summed over jobs submitted in the period "
        "(top users and accounts, summary).",
    ),
    (
        "Utilisation",
        "Busy node-seconds inside each time bucket (each job's [start, end) clipped to "
        "the period, weighted by NNodes) / (bucket length x nodes seen). Nodes seen: distinct "
        "nodes in the NodeList of jobs that ran during the period (Slurm hostlists "
        "expanded). Buckets are hourly up to 2 days, daily up to 92 days, weekly beyond.",
    ),
    (
        "Charts",
        "Bar and line charts are drawn from aggregates of all qualifying jobs. The two "
        "scatter plots show a deterministic sample (fixed seed over the cache's stable row "
        "order) whose size "
        "is stated on the chart.",
    ),
    (
        "Anomalies",
        " ".join(line.strip() for line in (_anomaly_rules or "").splitlines()[2:]).strip(),
    ),
    (
        "Malformed lines",
        "A sacct line with the wrong number of fields or no JobID is dropped and "
        "counted; a value that cannot be read (an unknown timestamp format, say) becomes empty and "
        "is counted per column while the rest of its line is kept.",
    ),
    (
        "Workflow runs",
        "Runs from the wass-chat decision log created in the period, each placement "
        "decision with the alternatives the scheduler compared and its evidence.",
    ),
    (
        "Policy vs classic schedulers",
        "Each run's workflow and platform re-simulated with the "
        "simulator (fair-share network model) under every registered scheduler (seeded ones "
        "with seed 0); makespans in simulated seconds.",
    ),
)
