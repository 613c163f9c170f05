"""How the simulated cluster schedules and powers its nodes: one typed config per component.

Defaults are Slurm 22.05's where Slurm has one (``bf_interval`` 30 s, ``bf_window`` one day,
``PriorityCalcPeriod`` 5 min, ``PriorityDecayHalfLife`` 7 days, ``PriorityMaxAge`` 7 days);
the priority weights default to 0 as in Slurm, so a site passes its own
(``scontrol show config``). ``SCHEDULERS`` names the presets the CLI offers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from sim.errors import InputError, raise_if

QueueOrder = Literal["fifo", "sjf", "priority"]
NodeOrder = Literal["best_fit", "first_fit", "consecutive"]


@dataclass(frozen=True)
class PriorityWeights:
    """Slurm's multifactor priority, simplified (docs/cluster-whatif.md, "Priority")."""

    age: int = 0
    """PriorityWeightAge: times min(age / max_age, 1), age counted from eligibility."""
    fairshare: int = 0
    """PriorityWeightFairshare: times 2^(-usage share / shares share), classic fair share."""
    job_size: int = 0
    """PriorityWeightJobSize: times the mean of the node and CPU fractions of the cluster."""
    partition: int = 0
    """PriorityWeightPartition: times the partition's PriorityJobFactor over the largest."""
    qos: int = 0
    """PriorityWeightQOS: times the QOS priority over the largest."""
    estimate: int = 0
    """Not Slurm's: times log2(runtime estimate) / 28 (the learned scheduler's knob)."""
    max_age_s: int = 7 * 86400
    """PriorityMaxAge."""
    decay_half_life_s: int = 7 * 86400
    """PriorityDecayHalfLife of the fair-share usage."""
    favor_small: bool = False
    """PriorityFavorSmall: smaller jobs get the larger size factor."""
    qos_priority: tuple[tuple[str, int], ...] = ()
    """QOS name -> its Priority (sacctmgr); unnamed QOS have 0."""


@dataclass(frozen=True)
class SchedulerConfig:
    """The queue order, the main scheduler and backfill."""

    order: QueueOrder = "priority"
    """fifo: submission order; sjf: shortest estimate first; priority: multifactor."""
    backfill: bool = True
    """Run the backfill pass (EASY when ``reservation_depth`` is 1)."""
    bf_interval_s: int = 30
    """Seconds between backfill passes (Slurm's bf_interval)."""
    bf_window_s: int = 86400
    """How far ahead backfill plans (bf_window); jobs starting later get no reservation."""
    bf_resolution_s: int = 1
    """Slurm's bf_resolution: a reservation's start and end are rounded down to a multiple
    of it (and it lasts at least one), as Slurm keeps its backfill plan in slots of this
    length (backfill.c 2858-2864, _add_reservation 3291-3299). 1 keeps exact times (the
    simulator's own default); a configuration read from Slurm gives Slurm's (60 s unless
    set)."""
    bf_end_round_up: bool = False
    """A reservation's end rounded up to ``bf_resolution_s`` instead of down: Slurm 23.02 on
    (backfill.c ``_set_slot_time``: ``end + bf_resolution - 1``, then down), so the plan
    never ends before the job's limit does; 22.05 rounds it down."""
    bf_whole_nodes: bool = False
    """Slurm's backfill plan holds whole nodes: a node planned for a pending job is out of
    reach of every job tested after it whose run would overlap the planned slots, however
    many CPUs stay free ("the backfill scheduler reserves whole nodes for jobs, not partial
    nodes", slurm.schedmd.com/preempt.html; backfill.c ``_add_reservation`` clears the job's
    nodes from each slot's ``avail_bitmap``, and a job tested later keeps only the nodes free
    in every slot that begins no later than its end, ``begin_time <= end_time``). False: a
    reservation holds only the CPUs, memory and GPUs it asks for (the simulator's own model).
    The compiled core does not implement it: a replay with it runs the Python engine."""
    node_runs_by_cpus: bool = False
    """With ``node_order`` consecutive, runs of free nodes weighed by their free CPUs as
    22.05.8's cons_tres weighs them (a larger run that does not suffice replaces one that
    does: :func:`sim.batch.nodes.consecutive`); False: by their length."""
    bf_will_run_barrier: bool = False
    """How a blocked job's start is found among the running jobs' ends in Slurm's plan
    (``bf_whole_nodes``): True, in batches cut at a barrier 30 s past the first end, as
    cons_tres's will-run test does on 22.05 and 24.11, so the start can be a later end than
    the one that frees the node; False, end by end, the first end that frees it, as 26.05's
    ``sbatch --test-only`` answers (:meth:`sim.batch.backfill.Plan._will_run`)."""
    reservation_depth: int = 1
    """How many blocked jobs get a reservation per pass: 1 is EASY; Slurm reserves for every
    job it tests (set it to ``bf_max_job_test``)."""
    bf_max_job_test: int = 500
    """Jobs examined per backfill pass (bf_max_job_test)."""
    calc_period_s: int = 300
    """PriorityCalcPeriod: how often pending jobs' priorities are recomputed."""
    node_order: NodeOrder = "best_fit"
    """Which fitting nodes a job gets: fewest free CPUs first, node order, or Slurm's runs of
    consecutive nodes (:func:`sim.batch.nodes.consecutive`; the Python engine only)."""
    completing_s: int = 0
    """Seconds a job's resources stay held after it ends (Slurm's COMPLETING state: epilog,
    cleanup, the node reporting back): 1 s measured on the local cluster."""
    kill_grace_s: int = 0
    """Seconds a job runs past its limit before it is killed (OverTimeLimit plus the time
    Slurm takes to notice; 3-16 s measured on the local cluster)."""
    weights: PriorityWeights = field(default_factory=PriorityWeights)

    def __post_init__(self) -> None:
        problems = []
        if self.order not in ("fifo", "sjf", "priority"):
            problems.append(f"queue order {self.order!r} is not fifo, sjf or priority")
        if self.node_order not in ("best_fit", "first_fit", "consecutive"):
            problems.append(
                f"node order {self.node_order!r} is not best_fit, first_fit or consecutive"
            )
        for name in ("bf_interval_s", "bf_resolution_s", "calc_period_s"):
            if getattr(self, name) <= 0:
                problems.append(f"{name} must be positive")
        for name in (
            "bf_window_s",
            "reservation_depth",
            "bf_max_job_test",
            "completing_s",
            "kill_grace_s",
        ):
            if getattr(self, name) < 0:
                problems.append(f"{name} must not be negative")
        raise_if(problems, InputError, "scheduler config")


@dataclass(frozen=True)
class PowerSaving:
    """Slurm's power saving: idle nodes off after ``suspend_after_s``, ``boot_s`` to resume."""

    suspend_after_s: int
    boot_s: int = 300

    def __post_init__(self) -> None:
        problems = []
        if self.suspend_after_s < 0 or self.boot_s < 0:
            problems.append("suspend and boot times must not be negative")
        raise_if(problems, InputError, "power saving")


SCHEDULERS: dict[str, SchedulerConfig] = {
    "fifo": SchedulerConfig(order="fifo", backfill=False),
    "sjf": SchedulerConfig(order="sjf", backfill=False),
    "priority": SchedulerConfig(order="priority", backfill=False),
    "easy": SchedulerConfig(order="priority", backfill=True, reservation_depth=1),
    "fifo-easy": SchedulerConfig(order="fifo", backfill=True, reservation_depth=1),
    "slurm": SchedulerConfig(order="priority", backfill=True, reservation_depth=100),
}
"""Named presets: ``slurm`` is multifactor priority with backfill reserving for the first 100
blocked jobs (Slurm reserves for every job it tests)."""


def scheduler_preset(name: str, **overrides: object) -> SchedulerConfig:
    """A preset by name with some fields changed; unknown names raise an InputError."""
    if name not in SCHEDULERS:
        raise InputError(
            "scheduler", [f"unknown scheduler {name!r}; known: {', '.join(SCHEDULERS)}"]
        )
    return replace(SCHEDULERS[name], **overrides)  # type: ignore[arg-type]
