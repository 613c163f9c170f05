"""How every number in the report is computed, in words; rendered as the report's last section."""

from __future__ import annotations

from wass_chat.analytics.anomalies import RULES as _ANOMALY_RULES
from wass_chat.analytics.efficiency import LOW_MEMORY_EFFICIENCY

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
        "period count only towards utilisation and node usage (their busy time inside the "
        "period). Without --start/--end the period is the span of submissions: from the first "
        "submission to just after the last submission or start (not the last end, whose empty "
        "tail would pull every mean down). --user, --account and --partition keep only "
        "matching jobs.",
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
        "Allocated CPUs (the sum of NCPUS of the jobs running, each job's [start, end) clipped "
        "to the period) over the configured CPUs when those are known; otherwise busy distinct "
        "nodes over the configured nodes: each job's NodeList is expanded, and per node the "
        "busy intervals of its jobs are merged, so a node shared by several jobs at once counts "
        "once. Capacity comes from --capacity-cpus/--capacity-nodes, else the live controller "
        "(scontrol show nodes/partitions), else $SLURM_CONF; when none is available the "
        "distinct nodes seen in accounting stand in, and a note at the top says the capacity was "
        "guessed. Utilisation "
        "never exceeds 100%: CPU intervals above the capacity are shown as 100% and counted. "
        "Per partition, the same over the partition's configured nodes/CPUs.",
    ),
    (
        "Waits by partition, QOS and size",
        "Started jobs submitted in the period, grouped by Partition, QOS or NNodes class "
        "(1, 2-4, 5-16, 17-64, >64); jobs, median, p90 and maximum wait in hours, backfill "
        "share in percent. An insight names a group as the worst only when it holds at least "
        "30 jobs (half the jobs on tiny data) and 1% of them.",
    ),
    (
        "Pending queue",
        "Jobs submitted in the period that had neither started nor ended at its end; their "
        "age is end - submit. Reason is the last reason Slurm recorded for the job.",
    ),
    (
        "GPU-hours and efficiency",
        "GPU-hours: Elapsed x the GPUs in AllocTRES (gres/gpu=N, else gres/gpu:type=N) / 3600, "
        "per partition, user and account.",
    ),
    (
        "CPU and memory efficiency",
        "Finished jobs submitted in the period that ran > 0 s, with their usage recorded (a "
        "job with TotalCPU 0, no steps and no TRES usage was not measured by accounting and is "
        "left out). CPU time used: the allocation row's TotalCPU with its fractions of a "
        "second, else the sum over its steps of TotalCPU (else the cpu= part of "
        "TRESUsageInTot). CPU efficiency = CPU time used / (Elapsed x NCPUS); per group, used "
        "over allocated core-hours of its jobs together. Wasted core-hours (the 'top wasters' "
        "ranking) = Elapsed x NCPUS - CPU time used, at least 0, / 3600: idle allocated CPU "
        "time, so a large job at a good efficiency can waste more than a small idle one. "
        "Memory used: the largest step's memory summed over its tasks (the mem= of "
        "TRESUsageInTot, as seff reads it; else MaxRSS x NTasks, as reportseff bounds it; else "
        "one task's MaxRSS, a lower bound). Memory efficiency = memory used / the job's whole "
        "memory (the mem= of AllocTRES, else ReqMem with a per-node 'n' or per-CPU 'c' suffix "
        f"multiplied out). Heavy over-requesters use under {100 * LOW_MEMORY_EFFICIENCY:.0f}% "
        "of it. Jobs imported before these fields were fetched have no usage and are not "
        "measured. `wass-chat sacct efficiency JOBID` gives one job's figures by the same "
        "rules.",
    ),
    (
        "Previous period",
        "The same summary over the period of equal length just before this one.",
    ),
    (
        "Findings and recommendations",
        "Deterministic rules over the tables above (wass_chat.analytics.findings); every "
        "number they quote is taken from those tables.",
    ),
    (
        "Units",
        "Shares and rates are percentages with one decimal; durations are written in s, min, h "
        "or d, whichever reads best; counts have thousands separators. The CSV files next to "
        "the report keep raw values (hours, shares in percent) under their column code names.",
    ),
    (
        "Charts",
        "Bar and line charts are drawn from aggregates of all qualifying jobs. The two "
        "scatter plots show a deterministic sample (fixed seed over the cache's stable row "
        "order) whose size is stated on the chart. Logarithmic axes say so in their title "
        "and tick only at powers of ten.",
    ),
    (
        "Anomalies",
        " ".join(f"{name}: {rule}" for name, rule in _ANOMALY_RULES)
        + " Every matching row is written to a CSV file next to the report.",
    ),
    (
        "Malformed lines",
        "A sacct line with the wrong number of fields or no JobID is dropped and "
        "counted; a value that cannot be read (an unknown timestamp format, say) becomes empty and "
        "is counted per column while the rest of its line is kept.",
    ),
    (
        "Workflow runs",
        "The site's runs from the wass-chat decision log created in the period (never the "
        "demo's runs, which live in the demo's own data home): one row each with its Slurm jobs, "
        "the planned makespan (a scaled run's plan times its scale) and the actual one (first "
        "real start to last real end, once every task has both), then each placement decision "
        "with the alternatives the scheduler compared and its evidence.",
    ),
    (
        "Policy vs classic schedulers",
        "Each run's workflow and platform re-simulated with the "
        "simulator (fair-share network model) under the default comparison: HEFT, CPOP, "
        "PEFT, Min-Min, the WASS heuristic, the Slurm-like baseline, the learned policy and "
        "its guarded form (seeded ones with seed 0; the lookahead and sampling variants are "
        "left out, at seconds per plan); makespans in simulated seconds.",
    ),
)
