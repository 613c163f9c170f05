"""The catalogue's reasons other than QOS and association limits, its long texts and job states.

Written from Slurm's own words: ``doc/html/job_reason_codes.shtml`` and squeue(1) "JOB REASON
CODES" (22.05, 26.05), and the slurmctld code that sets each reason or long text
(``job_mgr.c``, ``job_scheduler.c``, ``node_scheduler.c``, ``partition_mgr.c``,
``reservation.c``, the burst buffer plugins); docs/slurm.md "Pending reasons" cites the commits.
A long text is what ``squeue %r`` prints instead of the code when slurmctld left a description
(``%s`` where it puts a node, partition or reservation name).
"""

from __future__ import annotations

from wass_chat.slurm.reasons.model import Reason

R = Reason

PENDING_REASONS: tuple[Reason, ...] = (
    # --- the scheduler's own verdicts -------------------------------------------------------
    R(
        "None",
        "scheduler",
        "the scheduler has not looked at it yet in this cycle: a new job, or one whose "
        "previous reason was cleared until it is evaluated again",
        "nothing to change: ask again after the next scheduling pass (seconds to a minute)",
        "waits",
    ),
    R(
        "WaitingForScheduling",
        "scheduler",
        "no reason has been set yet: the scheduler has still to decide why it waits "
        "(squeue(1) documents it; current slurmctld shows None instead)",
        "ask again after the next scheduling pass",
        "waits",
        "doc",
    ),
    R(
        "Resources",
        "resources",
        "the CPUs, memory, GPUs or nodes it asks for are in use by running jobs",
        "ask for fewer CPUs or nodes, or a shorter --time so backfill can fit it into a gap; or "
        "another partition with free nodes (each checked with sbatch --test-only)",
        "waits",
    ),
    R(
        "Priority",
        "priority",
        "jobs of higher priority in its partition (or reservation) are ahead of it",
        "a shorter --time lets backfill start it in a gap; another partition; priority itself "
        "grows with age and falls with your recent usage (fairshare)",
        "waits",
    ),
    R(
        "SchedDefer",
        "scheduler",
        "it asks for an immediate allocation (salloc/srun --immediate) but "
        "SchedulerParameters=defer stops the scheduler from trying at submission",
        "submit without --immediate, or ask an administrator about defer",
        "waits",
    ),
    R(
        "Cleaning",
        "scheduler",
        "it was requeued and Slurm is still cleaning up after its previous run",
        "nothing to change: it becomes eligible once the cleanup ends",
        "waits",
    ),
    R(
        "Prolog",
        "scheduler",
        "its PrologSlurmctld program is still running",
        "wait; if it stays long an administrator can look for a hung prolog in slurmctld's log",
        "waits",
    ),
    R(
        "FedJobLock",
        "scheduler",
        "it waits for the clusters of the federation to agree on which one runs it (a lock)",
        "nothing to change; if it lasts, a federation cluster may be unreachable",
        "waits",
    ),
    R(
        "AccountingPolicy",
        "assoc_limit",
        "an accounting limit holds it and none of the specific limit reasons matched (Slurm's "
        "fallback)",
        "look at the limits of its QOS and association (sacctmgr show qos, sacctmgr show assoc)",
        "waits",
    ),
    # --- what it asked for ------------------------------------------------------------------
    R(
        "Dependency",
        "dependency",
        "it waits for the jobs it depends on (--dependency) to reach the required state",
        "nothing to change: it becomes eligible when those jobs finish",
        "waits",
    ),
    R(
        "DependencyNeverSatisfied",
        "dependency_never",
        "a job it depends on ended in a way that can never satisfy the dependency (afterok on "
        "a failed or cancelled job)",
        "cancel it (scancel) or remove the dependency (scontrol update JobId=N Dependency=)",
        "never",
    ),
    R(
        "BeginTime",
        "begin_time",
        "its earliest start time (--begin) has not been reached",
        "move the begin time: scontrol update JobId=N StartTime=now",
        "waits",
    ),
    R(
        "Licenses",
        "licenses",
        "the licences it asks for (-L) are all in use",
        "wait for the holding jobs, or ask for fewer licences",
        "waits",
    ),
    R(
        "JobArrayTaskLimit",
        "array_limit",
        "its job array already runs as many tasks at once as its throttle allows (the %N of "
        "--array=1-100%N)",
        "nothing is wrong: the next task starts when a running one ends; raise the throttle "
        "with scontrol update JobId=ARRAY ArrayTaskThrottle=N",
        "waits",
    ),
    R(
        "BadConstraints",
        "constraints",
        "its requirements (features, node count, memory together) can never be satisfied by "
        "the nodes of its partition",
        "drop or change --constraint, or ask for less",
        "never",
    ),
    R(
        "Constraints",
        "constraints",
        "its constraints (node features) cannot be satisfied at this time, for instance by "
        "nodes that must first change their features",
        "wait, or drop or change --constraint",
        "waits",
        "26.05",
    ),
    R(
        "MaxMemPerLimit",
        "mem_per_limit",
        "its memory request breaks the partition's or cluster's MaxMemPerCPU or MaxMemPerNode",
        "ask for memory within MaxMemPerNode (--mem) or "
        "MaxMemPerCPU (--mem-per-cpu), or use another partition",
        "never",
    ),
    R(
        "DeadLine",
        "deadline",
        "it cannot finish before its --deadline, so Slurm will not start it (and cancels it)",
        "submit again with a later --deadline or a shorter --time",
        "never",
    ),
    # --- partitions -------------------------------------------------------------------------
    R(
        "PartitionConfig",
        "partition_limit",
        "it asks for more than its partition allows (CPUs, memory, GRES or another setting); "
        "Slurm's fallback when no narrower partition reason fits",
        "fit the request to the partition (scontrol show partition), or use another partition",
        "never",
    ),
    R(
        "PartitionNodeLimit",
        "partition_limit",
        "it asks for more nodes than the partition has, or more or fewer than it allows per "
        "job (MaxNodes, MinNodes); also when the nodes it needs are down or drained",
        "ask for a node count within the limit, or use another partition",
        "never",
    ),
    R(
        "PartitionTimeLimit",
        "partition_limit",
        "its --time is longer than the partition's MaxTime",
        "ask for a --time within MaxTime, or use a partition that allows it",
        "never",
    ),
    R(
        "PartitionDown",
        "partition_state",
        "its partition is DOWN: it takes jobs but starts none until an administrator sets it UP",
        "move it to a partition that is UP (scontrol update JobId=N Partition=P), or wait",
        "admin",
    ),
    R(
        "PartitionInactive",
        "partition_state",
        "its partition is INACTIVE: it neither takes nor starts jobs",
        "move it to an active partition (scontrol update JobId=N Partition=P), or wait for an "
        "administrator to reactivate it",
        "admin",
    ),
    R(
        "AccountNotAllowed",
        "not_allowed",
        "its account may not use its partition (AllowAccounts/DenyAccounts of the partition)",
        "use a partition that allows the account, or another --account",
        "never",
    ),
    R(
        "QOSNotAllowed",
        "not_allowed",
        "its QOS may not be used by its association or in its partition (the association's "
        "QOS list, the partition's AllowQos/DenyQos)",
        "use a QOS the partition and your association allow (--qos), or another partition",
        "never",
    ),
    # --- nodes and reservations -------------------------------------------------------------
    R(
        "ReqNodeNotAvail",
        "node_unavailable",
        "a node it asked for (or needs) is not available: in use, reserved, DOWN, DRAINED or "
        "not responding",
        "drop the node request (--nodelist) or exclude the node; or wait for it to return",
        "waits",
    ),
    R(
        "NodeDown",
        "node_unavailable",
        "a node it needs is DOWN",
        "exclude that node (--exclude), or wait for an administrator to return it",
        "admin",
    ),
    R(
        "FrontEndDown",
        "node_unavailable",
        "no front end node is available to run it (front-end systems only)",
        "wait for an administrator to bring a front end node back",
        "admin",
        "22.05",
    ),
    R(
        "Reservation",
        "reservation",
        "it runs in an advanced reservation that has not started yet or has no room",
        "run outside the reservation, or wait for its start",
        "waits",
    ),
    R(
        "ReservationDeleted",
        "reservation_deleted",
        "the reservation it asked for no longer exists, so Slurm held it",
        "remove the reservation from it (scontrol update JobId=N Reservation=) and release it "
        "(scontrol release N), or cancel it",
        "release",
    ),
    R(
        "ReservationInvalid",
        "reservation_deleted",
        "the reservation it is linked to is not valid for it, so Slurm held it",
        "remove or change the reservation (scontrol update JobId=N Reservation=) and release it",
        "release",
        "26.05",
    ),
    R(
        "PowerNotAvail",
        "power",
        "the power it would draw is not available (power capping)",
        "wait, or ask for fewer nodes",
        "waits",
        "22.05",
    ),
    R(
        "PowerReserved",
        "power",
        "power is reserved for other jobs (power capping)",
        "wait, or ask for fewer nodes",
        "waits",
        "22.05",
    ),
    R(
        "MaxPoweredUpNodes",
        "power",
        "starting it would power up more nodes than MaxPoweredUpNodes allows",
        "wait for powered-up nodes, or ask for fewer nodes",
        "waits",
        "26.05",
    ),
    R(
        "MpiPortsBusy",
        "scheduler",
        "the MPI ports it needs (MpiParams=ports) are all taken by running jobs",
        "wait for running MPI jobs to end",
        "waits",
        "26.05",
    ),
    R(
        "NvidiaImexChannels",
        "scheduler",
        "it waits for a free NVIDIA IMEX channel (switch/nvidia_imex)",
        "wait for running jobs holding IMEX channels to end",
        "waits",
        "26.05",
    ),
    R(
        "BlockMaxError",
        "scheduler",
        "a block of nodes it needs has too many errors (IBM BlueGene only)",
        "use other nodes; this reason is not set on current systems",
        "admin",
        "22.05",
    ),
    R(
        "BlockFreeAction",
        "scheduler",
        "a block of nodes it needs is being freed (IBM BlueGene only)",
        "wait; this reason is not set on current systems",
        "waits",
        "22.05",
    ),
    R(
        "BurstBufferResources",
        "burst_buffer",
        "the burst buffer pool it asks for has not enough free space",
        "wait, or ask for a smaller burst buffer (--bb)",
        "waits",
    ),
    R(
        "BurstBufferStageIn",
        "burst_buffer",
        "its burst buffer is being staged in (its data copied in before it starts)",
        "nothing to change: it starts once stage-in ends",
        "waits",
    ),
    R(
        "BurstBufferOperation",
        "burst_buffer",
        "an operation on its burst buffer failed, so Slurm held it",
        "read the job's state description (scontrol show job), fix the burst buffer request, "
        "then release it",
        "release",
    ),
    # --- holds ------------------------------------------------------------------------------
    R(
        "JobHeldUser",
        "held_user",
        "it is held by its owner or an account coordinator (sbatch --hold, scontrol hold or uhold)",
        "release it: scontrol release N",
        "release",
    ),
    R(
        "JobHeldAdmin",
        "held_admin",
        "it is held by an administrator (a privileged user)",
        "ask an administrator to release it (scontrol release N)",
        "release",
    ),
    R(
        "JobHoldMaxRequeue",
        "launch_failure",
        "it was requeued MAX_BATCH_REQUEUE times (a launch or node failure each time), so Slurm "
        "held it",
        "look at why it failed (sacct, the node's reason), then release it",
        "release",
    ),
    # --- invalid settings -------------------------------------------------------------------
    R(
        "InvalidAccount",
        "invalid",
        "its account is not valid: unknown, deleted, or one its user does not belong to",
        "use an account you belong to (sacctmgr show assoc "
        "user=$USER) with scontrol update JobId=N Account=A",
        "never",
    ),
    R(
        "InvalidQOS",
        "invalid",
        "its QOS is not valid: unknown, deleted, or not one its association may use",
        "use a QOS your association allows (sacctmgr show "
        "assoc user=$USER format=QOS) with scontrol update JobId=N QOS=Q",
        "never",
    ),
    # --- older, coarser limit reasons --------------------------------------------------------
    R(
        "AssociationJobLimit",
        "assoc_limit",
        "its association has reached its maximum job count (an older, coarser code)",
        "wait for the association's running jobs to end",
        "waits",
    ),
    R(
        "AssociationResourceLimit",
        "assoc_limit",
        "its association has reached some resource limit (an older, coarser code)",
        "wait for the association's running jobs, or ask for less",
        "waits",
    ),
    R(
        "AssociationTimeLimit",
        "assoc_limit",
        "its association has reached its time limit (an older, coarser code)",
        "ask an administrator about the association's time limits",
        "waits",
    ),
    R(
        "QOSJobLimit",
        "qos_limit",
        "its QOS has reached its maximum job count (an older, coarser code)",
        "wait for jobs in that QOS to finish, or use another QOS",
        "waits",
    ),
    R(
        "QOSResourceLimit",
        "qos_limit",
        "its QOS has reached some resource limit (an older, coarser code)",
        "wait for jobs in that QOS to finish, or use another QOS",
        "waits",
    ),
    R(
        "QOSTimeLimit",
        "qos_limit",
        "its QOS has reached its time limit (an older, coarser code)",
        "use another QOS, or ask an administrator about its time limits",
        "waits",
    ),
    R(
        "QOSUsageThreshold",
        "qos_limit",
        "the fair-share usage of its association is past its QOS's UsageThreshold",
        "use another QOS, or wait for the usage to decay",
        "waits",
    ),
    # --- reasons of jobs that ended (sacct, scontrol) ----------------------------------------
    R(
        "NonZeroExitCode",
        "failed",
        "it ended with a non-zero exit code",
        "read the job's output file; the exit code says how it ended",
        "ended",
    ),
    R(
        "RaisedSignal",
        "failed",
        "it was ended by a signal",
        "read the job's output file; the signal says what stopped it",
        "ended",
        "26.05",
    ),
    R(
        "TimeLimit",
        "timeout",
        "it used up its time limit and was killed",
        "ask for more --time (checked with sbatch --test-only)",
        "ended",
    ),
    R(
        "InactiveLimit",
        "timeout",
        "its srun/salloc stopped responding for longer than InactiveLimit, so it was ended",
        "keep the submitting session alive (or use sbatch)",
        "ended",
    ),
    R(
        "OutOfMemory",
        "out_of_memory",
        "it used more memory than it asked for and was killed",
        "ask for more --mem than its peak use (MaxRSS)",
        "ended",
    ),
    R(
        "SystemFailure",
        "node_fail",
        "a failure of Slurm, a file system or the network ended it",
        "resubmit; tell an administrator if it repeats",
        "ended",
    ),
    R(
        "JobLaunchFailure",
        "launch_failure",
        "it could not be launched: a file system problem, an invalid program name or similar",
        "check the script path and working directory, then resubmit",
        "ended",
    ),
    # --- long texts squeue prints instead of a code ------------------------------------------
    R(
        "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
        "partitions",
        "node_unavailable",
        "fewer nodes of its partition are available than it needs: the others are down, "
        "drained, or held for jobs of higher-priority partitions (its reason is Resources)",
        "exclude those nodes, ask for fewer nodes, use another partition, or wait for them",
        "waits",
    ),
    R(
        "Nodes required for job are DOWN, DRAINED, REBOOTING or reserved for jobs in higher "
        "priority partitions",
        "node_unavailable",
        "fewer nodes of its partition are available than it needs: the others are down, "
        "drained, rebooting, or held for jobs of higher-priority partitions (its reason is "
        "Resources)",
        "wait for the rebooting nodes, exclude the others, or use another partition",
        "waits",
        "26.05",
    ),
    R(
        "ReqNodeNotAvail, UnavailableNodes:%s",
        "node_unavailable",
        "nodes it asked for (or needs) are down, drained, reserved or not responding; Slurm "
        "names them after UnavailableNodes",
        "drop the node request (--nodelist) or exclude those nodes; or wait for them",
        "waits",
    ),
    R(
        "ReqNodeNotAvail, May be reserved for other job",
        "node_unavailable",
        "a node it needs cannot take it now and Slurm does not say which: 24.11 and later say "
        "this for a node it asked for (--nodelist) that is drained (a down one they name, as "
        "UnavailableNodes); otherwise the nodes are held for another (higher-priority or "
        "reservation) job",
        "drop the node request (--nodelist) or exclude the unavailable node; or wait for it",
        "waits",
    ),
    R(
        "ReqNodeNotAvail, Reserved for maintenance",
        "node_unavailable",
        "its time limit would run into a maintenance reservation on the nodes it needs",
        "a shorter --time that ends before the maintenance lets it run now; otherwise it "
        "starts after the maintenance",
        "waits",
    ),
    R(
        "ReqNodeNotAvail, Reserved for other reservations",
        "node_unavailable",
        "the nodes it needs are held by other reservations for the time it would run",
        "a shorter --time, other nodes, or wait for the reservations to end",
        "waits",
        "26.05",
    ),
    R(
        "Reservation %s was deleted",
        "reservation_deleted",
        "the reservation it asked for was deleted (or ended), so Slurm held it "
        "(ReservationDeleted)",
        "remove the reservation from it (scontrol update JobId=N Reservation=) and release it "
        "(scontrol release N), or cancel it",
        "release",
    ),
    R(
        "job requeued in held state",
        "launch_failure",
        "it was requeued and held (scontrol requeuehold, or an epilog asked for it)",
        "release it when ready: scontrol release N",
        "release",
    ),
    R(
        "job requeued in special exit state",
        "launch_failure",
        "it was requeued in the SPECIAL_EXIT state (scontrol requeuehold State=SpecialExit, "
        "or its exit code matched RequeueExitHold)",
        "look at why it exited, then release it: scontrol release N",
        "release",
    ),
    R(
        "launch failed requeued held",
        "launch_failure",
        "Slurm could not launch it on its node, requeued it and held it",
        "look at the node's reason (sinfo -R); release it (scontrol release N)",
        "release",
    ),
    R(
        "launch failure limit exceeded requeued held",
        "launch_failure",
        "its launch failed too often (MaxBatchRequeue reached), so Slurm requeued and held it",
        "find why it fails to launch (sinfo -R, sacct), then release it",
        "release",
        "26.05",
    ),
    R(
        "user env retrieval failed requeued held",
        "launch_failure",
        "Slurm could not load its user's login environment (--get-user-env, or --export "
        "without a full environment) on the node, so it requeued and held it",
        "submit with --export=ALL (or fix the user's login scripts), then release it",
        "release",
        "26.05",
    ),
    R(
        "License request '%s' is no longer valid, holding job",
        "licenses",
        "a licence it asks for no longer exists in the cluster's configuration, so Slurm held it",
        "change its licences (scontrol update JobId=N Licenses=...) and release it",
        "release",
        "26.05",
    ),
    R(
        "Job's account not known, so it can't use this partition (%s allows %s)",
        "not_allowed",
        "its account is unknown to Slurm, and the partition lets only the accounts in "
        "AllowAccounts in (AccountNotAllowed)",
        "use a valid --account the partition allows",
        "never",
        "22.05",
    ),
    R(
        "Job's account not permitted to use this partition (%s allows %s not %s)",
        "not_allowed",
        "its account is not in the partition's AllowAccounts (AccountNotAllowed)",
        "use an account the partition allows, or another partition",
        "never",
        "22.05",
    ),
    R(
        "Job's account not permitted to use this partition (%s denies %s including %s)",
        "not_allowed",
        "its account is in the partition's DenyAccounts (AccountNotAllowed)",
        "use another account or partition",
        "never",
        "22.05",
    ),
    R(
        "Job's QOS not known, so it can't use this partition (%s allows %s)",
        "not_allowed",
        "its QOS is unknown to Slurm, and the partition lets only the QOS in AllowQos in "
        "(QOSNotAllowed)",
        "use a valid --qos the partition allows",
        "never",
    ),
    R(
        "Job's QOS not permitted to use this partition (%s allows %s not %s)",
        "not_allowed",
        "its QOS is not in the partition's AllowQos (QOSNotAllowed)",
        "use a QOS the partition allows (--qos), or another partition",
        "never",
    ),
    R(
        "Job's QOS not permitted to use this partition (%s denies %s including %s)",
        "not_allowed",
        "its QOS is in the partition's DenyQos (QOSNotAllowed)",
        "use another QOS or partition",
        "never",
    ),
    R(
        "%s: Invalid burst buffer spec (%s)",
        "burst_buffer",
        "its burst buffer request (#BB / #DW lines, --bb) is not valid",
        "fix the burst buffer request and resubmit",
        "never",
    ),
    R(
        "Burst buffer pre_run error",
        "burst_buffer",
        "the burst buffer's pre-run step failed, so Slurm held it",
        "look at slurmctld's log or the burst buffer script, then release it",
        "release",
    ),
    R(
        "Burst buffer create_persistent error",
        "burst_buffer",
        "creating the persistent burst buffer it asks for failed",
        "fix the #BB create_persistent request and resubmit",
        "release",
    ),
    R(
        "Could not find burst buffer record",
        "burst_buffer",
        "Slurm lost track of its burst buffer",
        "cancel and resubmit it",
        "release",
    ),
    R(
        "Error managing persistent burst buffers",
        "burst_buffer",
        "creating or deleting a persistent burst buffer for it failed (DataWarp)",
        "fix the persistent burst buffer request and resubmit",
        "release",
        "22.05",
    ),
    R(
        "%s: Delete buffer %s permission denied",
        "burst_buffer",
        "it asks to delete a persistent burst buffer it does not own",
        "remove the #BB destroy_persistent request",
        "never",
    ),
    # --- families, for codes a later Slurm may add -------------------------------------------
    R(
        "AssocGrp*",
        "assoc_limit",
        "an aggregate limit of its association (set with sacctmgr) is reached",
        "wait for the association's running jobs to finish, or ask for less",
        "waits",
        "doc",
    ),
    R(
        "AssocMax*",
        "assoc_limit",
        "it asks for more than a per-job or per-node limit of its association (set with sacctmgr)",
        "ask for less than the limit",
        "never",
        "doc",
    ),
    R(
        "QOSGrp*",
        "qos_limit",
        "an aggregate limit of its QOS (all its jobs together) is reached",
        "wait for jobs in that QOS to finish, or use another QOS",
        "waits",
        "doc",
    ),
    R(
        "QOSMax*",
        "qos_limit",
        "it asks for more than a per-job, per-node or per-user limit of its QOS",
        "shrink the request, wait for your other jobs in the QOS, or use another QOS",
        "waits",
        "doc",
    ),
)

JOB_STATES: tuple[Reason, ...] = (
    R("RUNNING", "running", "it has its resources and runs", "", "running"),
    R("COMPLETING", "running", "it has ended and Slurm is cleaning up its nodes", "", "running"),
    R("SUSPENDED", "running", "it was started and then suspended", "", "running"),
    R("CONFIGURING", "running", "its nodes are being prepared (booted)", "", "running"),
    R("COMPLETED", "completed", "it ran to the end and exited with status 0", "", "ended"),
    R(
        "FAILED",
        "failed",
        "its script exited with a non-zero status or a signal",
        "read the job's output file; the exit code and signal say how it ended",
        "ended",
    ),
    R(
        "TIMEOUT",
        "timeout",
        "it reached its time limit and was killed",
        "ask for more --time (checked with sbatch --test-only)",
        "ended",
    ),
    R(
        "OUT_OF_MEMORY",
        "out_of_memory",
        "it used more memory than it asked for",
        "ask for more --mem than its peak use (MaxRSS)",
        "ended",
    ),
    R(
        "NODE_FAIL",
        "node_fail",
        "a node it ran on failed",
        "resubmit; --requeue resubmits automatically; exclude the node if it keeps failing",
        "ended",
    ),
    R("CANCELLED", "cancelled", "it was cancelled (scancel)", "", "ended"),
    R("PREEMPTED", "preempted", "a higher-priority job preempted it", "resubmit", "ended"),
    R("BOOT_FAIL", "node_fail", "its node failed to boot", "resubmit", "ended"),
    R("DEADLINE", "timeout", "it reached its --deadline", "move the deadline", "ended"),
)
"""Job states (sacct State, scontrol JobState) the explainer is asked about."""
