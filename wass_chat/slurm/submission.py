"""From a workflow and a scheduler to sbatch argument lists, one job per task.

:func:`plan_new_run` is how the CLI's ``submit`` and the chat's ``submit_workflow`` both start a
run (a new run id, the live queue's holds); :func:`with_nodes` applies a person's edits.
:func:`plan_submission` runs the scheduler on the cluster's platform through the simulator,
starting from what running and pending jobs hold when given their occupancy (cores and memory
per node, :mod:`wass_chat.slurm.queue_holds`: a task whose ``--mem`` does not fit beside them
waits or goes elsewhere; the plan's start and end times, counted from now, are its prediction,
within :attr:`SubmissionPlan.queue`'s stated bound), on the runtimes the
workflow states or, given the knowledge base's predictions (``submit --estimates kb``), on what
earlier runs measured (:func:`sim.uncertainty.estimate_from_history`), then describes each task as a
:class:`JobSpec`: pinned to its node (``-N1 --nodelist``), its cores, memory and GPUs, a job
name naming run and task, a ``--comment wass:v1:run=...;task=...;node=...`` token (which the
job_submit plugin can apply on its own) and ``afterok`` dependencies on its parents' jobs. The
job runs the task's command, or sleeps for its simulated duration times ``scale``, writing its own
start and end times to its output either way (:mod:`wass_chat.slurm.job_stamps`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from policy.base import plan_and_simulate
from policy.registry import canonical_name, get_scheduler
from sim.model import Platform, Workflow, compute_time, node_fits
from sim.occupancy import NO_OCCUPANCY, Occupancy
from sim.schedule import NetworkModel, SimResult
from sim.uncertainty import RuntimePredictions, estimate_from_history, planning_platform
from wass_chat.runlog import Decision, new_run_id
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.job_stamps import stamped_command, stamped_sleep
from wass_chat.slurm.occupancy import BusyJob, cluster_occupancy
from wass_chat.slurm.queue_holds import QueueHolds, queue_holds

TOKEN_PREFIX = "wass:v1:"
MIN_MEMORY_MB = 64
"""Every job asks for memory: without ``--mem`` a job may reserve its node's whole memory."""


def sleep_time_limit(seconds: float) -> int:
    """Walltime for a sleep job of known length: twice it plus a minute, in whole minutes.

    A finite limit lets backfill work and ends a stuck job; the margin absorbs a loaded node.
    """
    return 60 * math.ceil((2 * seconds + 60) / 60)


def token_value(text: str) -> str:
    """``text`` reduced to the characters a comment token value may hold."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", text)


def job_name(run_id: str, task: str) -> str:
    """The job name of ``task`` in run ``run_id``: how a run's jobs are found in Slurm when its
    record may not list them all (:mod:`wass_chat.slurm.recovery`)."""
    return f"wass-{run_id}-{token_value(task)}"


def run_token(run_id: str) -> str:
    """The part of every comment token of run ``run_id``'s jobs that names the run."""
    return f"{TOKEN_PREFIX}run={token_value(run_id)};"


def decision_token(run_id: str, task: str, node: str) -> str:
    """The decision-mode comment: the plugin pins the job to ``node`` if it may."""
    return f"{run_token(run_id)}task={token_value(task)};node={node}"


@dataclass(frozen=True)
class JobSpec:
    """One task as a Slurm job; ``parents`` are task ids whose jobs it waits for."""

    task: str
    node: str
    cores: int
    memory_mb: int
    gpus: int
    name: str
    comment: str
    script: str
    parents: tuple[str, ...]
    output: str
    pin: bool = True
    """Pass ``-N1 --nodelist`` (False: leave the placement to the plugin's token)."""
    partition: str | None = None
    time_limit_s: int | None = None
    """``--time`` (Slurm rounds up to whole minutes); None: the partition's default."""
    command: tuple[str, ...] = ()
    """The workflow task's program and arguments the script runs, word for word (quoted in
    ``script``); empty for a job that sleeps for its simulated time."""

    def argv(self, job_ids: Mapping[str, str] | None = None) -> list[str]:
        """The sbatch arguments; parents' job ids as ``{job:TASK}`` placeholders until known."""
        args = ["--job-name", self.name, "--comment", self.comment]
        if self.partition:
            args += ["--partition", self.partition]
        if self.pin:
            args += ["-N1", f"--nodelist={self.node}"]
        else:
            args += ["-N1"]
        args += ["--ntasks=1", f"--cpus-per-task={self.cores}", f"--mem={self.memory_mb}M"]
        if self.time_limit_s is not None:
            minutes, seconds = divmod(self.time_limit_s, 60)
            args.append(f"--time={minutes}:{seconds:02d}")
        if self.gpus:
            args.append(f"--gres=gpu:{self.gpus}")
        if self.parents:
            ids = [(job_ids or {}).get(p, f"{{job:{p}}}") for p in self.parents]
            args += [f"--dependency=afterok:{':'.join(ids)}", "--kill-on-invalid-dep=yes"]
        args += [f"--output={self.output}", f"--wrap={self.script}"]
        return args


@dataclass(frozen=True)
class SubmissionPlan:
    """Everything ``submit`` will do, computed before anything touches Slurm."""

    run_id: str
    scheduler: str
    workflow: Workflow
    platform: Platform
    predicted: SimResult
    jobs: tuple[JobSpec, ...]
    decisions: tuple[Decision, ...]
    scale: float | None
    occupancy: Occupancy = NO_OCCUPANCY
    """What other jobs held when the plan was made (empty: planned on an idle cluster)."""
    busy_jobs: tuple[BusyJob, ...] = ()
    """The running jobs behind ``occupancy``, with partition, time and memory (for approval)."""
    estimates: str = "workflow"
    """What the runtimes planned on came from: ``workflow`` (as stated) or the knowledge
    base's history (which cases, real or simulated)."""
    planned_on: dict[str, dict[str, float]] | None = None
    """With the knowledge base's estimates: the task runtimes (reference seconds) and node
    slowdowns the plan assumed (:func:`sim.uncertainty.planned_inputs`); None: as stated."""
    queue: QueueHolds | None = None
    """The live queue the occupancy came from, with its caveats and bound (None: no queue)."""

    def busy_lines(self) -> list[str]:
        """One line per running job the plan works around, for the approval screen."""
        return [job.line() for job in self.busy_jobs]

    @property
    def first_start(self) -> float:
        """When the plan's first task starts, in seconds from when it was made."""
        return min((r.start for r in self.predicted.tasks), default=0.0)

    def start_lines(self) -> list[str]:
        """The predicted first start with its bound, then what the queue model could not know
        (empty for a plan on an idle or file platform)."""
        if self.queue is None:
            return []
        return [self.queue.start_words(self.first_start), *self.queue.caveats]

    @property
    def planned_makespan(self) -> float:
        return self.predicted.makespan


def job_script(
    command: tuple[str, ...] | None, duration: float, scale: float | None
) -> tuple[str, int | None, tuple[str, ...]]:
    """(script, ``--time`` in seconds or None, the command it runs) for one task's job.

    With ``--scale`` or no command the job sleeps its simulated ``duration`` (times ``scale``)
    under a finite time limit; otherwise it runs the task's argument vector exactly as the
    workflow gives it (:func:`~wass_chat.slurm.job_stamps.stamped_command` quotes every word).
    """
    if scale is not None or not command:
        seconds = duration * (scale if scale is not None else 1.0)
        return stamped_sleep(seconds), sleep_time_limit(seconds), ()
    return stamped_command(command), None, tuple(command)


def as_requested(workflow: Workflow) -> Workflow:
    """``workflow`` with each task's memory what its job asks (at least :data:`MIN_MEMORY_MB`):
    a job that asks 64 MB cannot start beside a job holding its node's whole memory."""
    floor = MIN_MEMORY_MB * 2**20
    if all(t.memory >= floor for t in workflow.tasks):
        return workflow
    tasks = tuple(t if t.memory >= floor else replace(t, memory=floor) for t in workflow.tasks)
    return replace(workflow, tasks=tasks)


def plan_submission(
    workflow: Workflow,
    platform: Platform,
    scheduler: str,
    run_id: str,
    output_dir: Path,
    scale: float | None = None,
    pin: bool = True,
    partition: str | None = None,
    network_model: NetworkModel = "fair",
    occupancy: Occupancy = NO_OCCUPANCY,
    predictions: RuntimePredictions | None = None,
    estimates: str = "workflow",
) -> SubmissionPlan:
    """Plan placements with ``scheduler``, around the cores ``occupancy`` holds, and turn each
    task into a :class:`JobSpec`.

    Each task is planned with the memory its job asks (:func:`as_requested`). With
    ``predictions`` (from the knowledge base; ``estimates`` says which history) the plan
    runs on the runtimes and node slowdowns they give instead of the stated runtimes; the run
    keeps the workflow as submitted. Dependencies keep topological order in the result, so
    parents are submitted first.
    """
    name = canonical_name(scheduler)
    planned_wf, planned_pf = as_requested(workflow), platform
    if predictions is not None:
        planned_wf = estimate_from_history(planned_wf, predictions)
        planned_pf = planning_platform(platform, predictions)
    predicted = plan_and_simulate(
        get_scheduler(name, seed=0), planned_wf, planned_pf, network_model, occupancy
    )
    records = predicted.record_by_task
    jobs: list[JobSpec] = []
    decisions: list[Decision] = []
    for task_id in workflow.topological_order:
        task = workflow.task_by_id[task_id]
        record = records[task_id]
        duration = record.end - record.start
        script, time_limit, command = job_script(task.command, duration, scale)
        jobs.append(
            JobSpec(
                task=task_id,
                node=record.node,
                cores=task.cores,
                memory_mb=max(MIN_MEMORY_MB, math.ceil(task.memory / 2**20)),
                gpus=task.gpus,
                name=job_name(run_id, task_id),
                comment=decision_token(run_id, task_id, record.node),
                script=script,
                parents=workflow.parents[task_id],
                output=str(output_dir / "%x-%j.out"),
                pin=pin,
                partition=partition,
                time_limit_s=time_limit,
                command=command,
            )
        )
        planned_task = planned_wf.task_by_id[task_id]
        alternatives = {
            n.name: round(record.ready + compute_time(planned_task, n), 6)
            for n in planned_pf.nodes
            if n.name != record.node and node_fits(task, n)
        }
        decisions.append(
            Decision(
                task=task_id,
                node=record.node,
                planned_start=record.start,
                planned_end=record.end,
                alternatives=alternatives,
                evidence={
                    "scheduler": name,
                    "planned_ready": record.ready,
                    "alternatives_are": "uncontended finish if started when ready",
                    "estimates": estimates,
                },
            )
        )
    planned_on = None
    if predictions is not None:
        planned_on = {
            "runtimes": {t.id: t.runtime for t in planned_wf.tasks},
            "slowdowns": {
                n.name: n.speed / p.speed
                for n, p in zip(platform.nodes, planned_pf.nodes, strict=True)
            },
        }
    return SubmissionPlan(
        run_id,
        name,
        workflow,
        platform,
        predicted,
        tuple(jobs),
        tuple(decisions),
        scale,
        occupancy,
        estimates=estimates,
        planned_on=planned_on,
    )


def plan_new_run(
    workflow: Workflow,
    platform: Platform,
    scheduler: str,
    runs_dir: Path,
    live: SlurmCommands | None = None,
    scale: float | None = None,
    pin: bool = True,
    partition: str | None = None,
    network_model: NetworkModel = "fair",
    predictions: RuntimePredictions | None = None,
    estimates: str = "workflow",
) -> SubmissionPlan:
    """A new run's plan, the one way ``wass-chat submit`` and the chat's ``submit_workflow``
    make one: a fresh run id, outputs under ``runs_dir/RUN``, and, given ``live`` (the cluster
    the platform was read from), the occupancy of its running jobs to plan around; given
    ``predictions``, on the runtimes the knowledge base's history gives.

    The holds come from the queue model (running and pending jobs, cores and memory:
    :func:`~wass_chat.slurm.queue_holds.queue_holds`); the running jobs' lines the approval
    screen shows, from :func:`~wass_chat.slurm.occupancy.cluster_occupancy`."""
    queue = queue_holds(live, platform) if live is not None else None
    run_id = new_run_id()
    plan = plan_submission(
        workflow,
        platform,
        scheduler,
        run_id,
        runs_dir / run_id,
        scale=scale,
        pin=pin,
        partition=partition,
        network_model=network_model,
        occupancy=queue.occupancy if queue else NO_OCCUPANCY,
        predictions=predictions,
        estimates=estimates,
    )
    if live is None or queue is None:
        return plan
    return replace(plan, busy_jobs=cluster_occupancy(live, platform).jobs, queue=queue)


def with_nodes(plan: SubmissionPlan, nodes: Mapping[str, str]) -> SubmissionPlan:
    """``plan`` with tasks moved to ``nodes`` (task -> node: what a person approved after
    editing), their jobs' nodes, decision tokens and logged decisions updated to match."""
    jobs = tuple(
        job
        if job.node == nodes.get(job.task, job.node)
        else replace(
            job,
            node=nodes[job.task],
            comment=decision_token(plan.run_id, job.task, nodes[job.task]),
        )
        for job in plan.jobs
    )
    decisions = tuple(replace(d, node=nodes.get(d.task, d.node)) for d in plan.decisions)
    return replace(plan, jobs=jobs, decisions=decisions)
