"""The facts each tool returns, by ``kind``: the one place that says which keys a kind has.

Tools return plain dicts (they travel as JSON to the model and into the conversation store),
but render, verify and the app read them by key, so every kind has a TypedDict where it is
made:

======================  ===============================================================
kind                    TypedDict
======================  ===============================================================
``placement``           :class:`wass_chat.agent.facts.facts.PlacementFacts`
``cases``               :class:`wass_chat.agent.facts.facts.CasesFacts`
``simulation``          :class:`wass_chat.agent.facts.whatif.SimulationFacts`
``comparison``          :class:`wass_chat.agent.facts.whatif.ComparisonFacts`
``job_why``             :class:`wass_chat.slurm.explain.model.JobWhyFacts`
``queue``               :class:`wass_chat.slurm.explain.queue.QueueFacts`
``waiters``             :class:`wass_chat.slurm.explain.queue.WaitersFacts`
``cluster``             :class:`wass_chat.slurm.explain.nodes.ClusterFacts`
``submission_plan``     :class:`SubmissionPlanFacts` (here)
``run_status``          :class:`RunStatusFacts` (here)
``sacct_summary``       :class:`SacctSummaryFacts` (here)
``efficiency``          :class:`wass_chat.analytics.efficiency_questions.EfficiencyFacts`
``cluster_whatif``      :class:`wass_chat.batch.whatif_answer.WhatIfFacts`
``energy``              :class:`wass_chat.batch.energy_answer.EnergyFacts`
``report``              :class:`ReportFacts` (here)
``error``               :class:`ErrorFacts` (here)
======================  ===============================================================

The kinds made in :mod:`wass_chat.agent.facts.facts_cluster` are declared here to keep that module
about what it asks the cluster, not about the shape of its answers.
"""

from __future__ import annotations

from typing import TypedDict


class PlannedJob(TypedDict):
    """One Slurm job of a submission plan."""

    task: str
    node: str
    cores: int
    memory_mb: int
    after: list[str]
    """The tasks whose jobs must end first (``afterok``)."""
    planned_start_s: float
    """Seconds from now, as the simulator predicts."""
    command: list[str]
    """The workflow's program and arguments, word for word as the job runs them; [] when the
    job sleeps for its simulated time."""
    sbatch: list[str]
    """Every sbatch option of the job (``--mem``, ``--time``, ``--nodelist``, dependencies...),
    the script left out."""
    argv: list[str]
    """The literal command line that submits the job (``sbatch --parsable ...``, the script
    included), parents' job ids as ``{job:TASK}`` until sbatch returns them."""


class SubmissionPlanFacts(TypedDict, total=False):
    """What ``submit_workflow`` returns: a plan a person approves, edits or rejects."""

    kind: str
    planned_run_id: str
    plan_digest: str
    """SHA-256 of the exact plan (:mod:`wass_chat.slurm.plan_digest`): what approving names."""
    workflow: str
    workflow_sha256: str
    """SHA-256 of the workflow's content the plan was made from."""
    workflow_ref: str
    scheduler: str
    platform: str
    platform_ref: str
    predicted_makespan_s: float
    jobs: list[PlannedJob]
    note: str
    """Why the plan is not on the cluster's own nodes (Slurm did not answer), or ''."""
    cluster: str
    """What running jobs held when planning (live cluster only)."""
    busy_jobs: list[str]
    """One line per running job the plan works around: its partition, --time, --mem and CPUs
    per node (live cluster only)."""
    predicted_start: list[str]
    """When the first task starts, from the queue model, with its bound, then what the model
    could not know (live cluster only)."""
    edited: bool


class TaskState(TypedDict):
    task: str
    node: str
    state: str
    job_id: str | None


class RunStatusFacts(TypedDict):
    """What ``run_status`` returns: each task's node and state."""

    kind: str
    run_id: str
    workflow: str
    scheduler: str
    state_counts: dict[str, int]
    tasks: list[TaskState]
    note: str
    verdict: str


class SacctSummaryFacts(TypedDict):
    """What ``sacct_summary`` returns: a period's statistics from the sacct cache."""

    kind: str
    period: str
    user: str | None
    jobs: int
    state_counts: dict[str, int]
    statistics: dict[str, float]
    insights: list[str]
    note: str
    verdict: str


class ReportFacts(TypedDict):
    """What ``generate_report`` returns: where the report was written."""

    kind: str
    path: str
    files: list[str]
    format: str
    period: str


class ErrorFacts(TypedDict):
    """What any tool returns when it fails: the one-line error the answer states."""

    kind: str
    error: str
