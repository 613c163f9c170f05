"""Slurm's pending reasons and job end states: one table, read by the explainer and the docs.

Each :class:`Reason` names a code Slurm prints (``squeue %r``, ``scontrol show job`` Reason,
sacct State), the class an answer reports, what it means in plain words and what a user can do.
:func:`classify` maps a raw code to its entry (prefix families such as ``AssocGrp*Limit`` and
``ReqNodeNotAvail, UnavailableNodes:n1`` included); a code not in the table gets the ``unknown``
entry, so an answer quotes the raw code and says it is not explained yet instead of guessing.
docs/slurm.md carries this table (:func:`markdown_table`; a test keeps the two equal).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reason:
    """One reason code (or family), its class, meaning and advice."""

    code: str
    """Slurm's code; a trailing ``*`` matches any code with that prefix."""
    klass: str
    """The answer's reason class (``resources``, ``priority``, ``dependency``...)."""
    meaning: str
    advice: str


REASONS: tuple[Reason, ...] = (
    Reason("Resources", "resources",
           "the CPUs, memory, GPUs or nodes it asks for are in use by running jobs",
           "ask for fewer CPUs or nodes, or a shorter --time so backfill can fit it into a "
           "gap; or another partition with free nodes (each checked with sbatch --test-only)"),
    Reason("Priority", "priority",
           "jobs of higher priority in the same partition are ahead of it",
           "a shorter --time lets backfill start it in a gap; another partition; priority "
           "itself grows with age and falls with your recent usage (fairshare)"),
    Reason("Dependency", "dependency",
           "it waits for the jobs it depends on (--dependency) to reach the required state",
           "nothing to change: it becomes eligible when those jobs finish"),
    Reason("DependencyNeverSatisfied", "dependency_never",
           "a job it depends on ended in a way that can never satisfy the dependency "
           "(afterok on a failed or cancelled job)",
           "cancel it (scancel) or remove the dependency (scontrol update JobId=N Dependency=)"),
    Reason("BeginTime", "begin_time",
           "it asked not to start before a given time (--begin)",
           "move the begin time: scontrol update JobId=N StartTime=now"),
    Reason("JobHeldUser", "held_user", "its owner put it on hold (sbatch --hold, scontrol hold)",
           "release it: scontrol release N"),
    Reason("JobHeldAdmin", "held_admin", "an administrator put it on hold",
           "ask an administrator to release it (scontrol release N)"),
    Reason("launch failed requeued held", "launch_failure",
           "Slurm could not launch it on its node, requeued it and held it",
           "look at the node's reason (sinfo -R); ask an administrator to release it"),
    Reason("PartitionConfig", "partition_limit",
           "it asks for more than the partition has (CPUs, nodes, memory) or is not allowed "
           "there (account, QOS)",
           "fit the request to the partition, or use another partition"),
    Reason("PartitionNodeLimit", "partition_limit",
           "it asks for more nodes than the partition has, or more or fewer than it allows "
           "per job (MaxNodes, MinNodes)",
           "ask for a node count within the limit, or use another partition"),
    Reason("PartitionTimeLimit", "partition_limit",
           "its --time exceeds the partition's MaxTime",
           "ask for a --time within MaxTime, or use a partition that allows it"),
    Reason("PartitionDown", "partition_limit", "its partition is down",
           "use another partition, or wait for an administrator"),
    Reason("PartitionInactive", "partition_limit", "its partition is inactive",
           "use another partition, or wait for an administrator"),
    Reason("ReqNodeNotAvail*", "node_unavailable",
           "a node it asked for (or needs) is drained, down or reserved",
           "drop the node request (--nodelist) or exclude the node; or wait for it to return"),
    Reason("Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
           "partitions", "node_unavailable",
           "the nodes it could use are down, drained, or held for jobs of higher-priority "
           "partitions", "exclude those nodes, use another partition, or wait for them"),
    Reason("NodeDown", "node_unavailable", "a node it needs is down",
           "exclude that node (--exclude), or wait for it to return"),
    Reason("Reservation", "reservation",
           "it runs in a reservation that has not started yet or has no room",
           "run outside the reservation, or wait for its start"),
    Reason("QOSMax*", "qos_limit",
           "a per-job or per-user limit of its QOS would be exceeded (set with sacctmgr)",
           "wait for your other jobs to finish, shrink the request, or use another QOS"),
    Reason("QOSGrp*", "qos_limit",
           "the QOS's group limit (all its jobs together) would be exceeded",
           "wait for jobs in that QOS to finish, or use another QOS"),
    Reason("QOSJobLimit", "qos_limit", "its QOS's job limit is reached",
           "wait for jobs in that QOS to finish, or use another QOS"),
    Reason("AssocGrp*", "assoc_limit",
           "the group limit of its association (user/account, set with sacctmgr) would be "
           "exceeded by this job together with the association's running jobs",
           "wait for the association's running jobs to finish, or ask for less"),
    Reason("AssocMax*", "assoc_limit",
           "a per-job limit of its association (set with sacctmgr) is exceeded",
           "ask for less than the limit"),
    Reason("BadConstraints", "constraints",
           "no node can satisfy its constraints (features, node count, memory together)",
           "drop or change --constraint, or ask for less"),
    Reason("Licenses", "licenses", "the licences it asks for (-L) are all in use",
           "wait for the holding jobs, or ask for fewer licences"),
    Reason("InvalidAccount", "invalid", "its account is not valid", "use a valid --account"),
    Reason("InvalidQOS", "invalid", "its QOS is not valid", "use a valid --qos"),
    Reason("None", "running", "nothing holds it back", ""),
    Reason("RUNNING", "running", "it has its resources and runs", ""),
    Reason("COMPLETING", "running", "it has ended and Slurm is cleaning up its nodes", ""),
    Reason("SUSPENDED", "running", "it was started and then suspended", ""),
    Reason("CONFIGURING", "running", "its nodes are being prepared (booted)", ""),
    # end states (sacct State)
    Reason("COMPLETED", "completed", "it ran to the end and exited with status 0", ""),
    Reason("FAILED", "failed", "its script exited with a non-zero status or a signal",
           "read the job's output file; the exit code and signal say how it ended"),
    Reason("TIMEOUT", "timeout", "it reached its time limit and was killed",
           "ask for more --time (checked with sbatch --test-only)"),
    Reason("OUT_OF_MEMORY", "out_of_memory", "it used more memory than it asked for",
           "ask for more --mem than its peak use (MaxRSS)"),
    Reason("NODE_FAIL", "node_fail", "a node it ran on failed", "resubmit; --requeue "
           "resubmits automatically; exclude the node if it keeps failing"),
    Reason("CANCELLED", "cancelled", "it was cancelled (scancel)", ""),
    Reason("PREEMPTED", "preempted", "a higher-priority job preempted it", "resubmit"),
    Reason("BOOT_FAIL", "node_fail", "its node failed to boot", "resubmit"),
    Reason("DEADLINE", "timeout", "it reached its --deadline", "move the deadline"),
)  # fmt: skip

UNKNOWN = Reason("(any other)", "unknown", "a code wass-chat does not explain yet", "")


def classify(code: str) -> Reason:
    """The table entry for a raw reason or state code (``unknown`` for codes not in it)."""
    text = code.strip()
    key = text.split(",")[0].strip() if text.startswith("ReqNodeNotAvail") else text
    for reason in REASONS:
        if reason.code.endswith("*"):
            if key.startswith(reason.code[:-1]):
                return reason
        elif key == reason.code or key.upper() == reason.code:
            return reason
    return UNKNOWN


def markdown_table() -> str:
    """The reason table as Markdown, as docs/slurm.md carries it."""
    lines = ["| code | class | what it means | what helps |", "| --- | --- | --- | --- |"]
    for r in (*REASONS, UNKNOWN):
        lines.append(f"| `{r.code}` | {r.klass} | {r.meaning} | {r.advice or '-'} |")
    return "\n".join(lines)
