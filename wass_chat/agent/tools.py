"""The agent's tools: one typed, documented entry per question the assistant can answer.

A :class:`Toolbox` binds each tool name to a method (returning a JSON-able dict) of
:class:`~wass_chat.agent.facts.workflow_tools.WorkflowTools`,
:class:`~wass_chat.agent.facts.cluster_tools.ClusterTools` or
:class:`~wass_chat.agent.facts.workload_tools.WorkloadTools` through a pydantic argument schema.
The same toolbox serves the LLM (as LangChain tools, :func:`langchain_tools`), the offline
router and the verifier, so both modes compute identical facts.

``submit_workflow`` is the one tool that would act on the cluster, and it does not: it plans the
submission and leaves an :class:`~wass_chat.agent.events.ApprovalRequest` with the
:class:`~wass_chat.agent.approval.ApprovalGate`. There is no shell tool and no approval tool.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, ValidationError

from sim.errors import UnknownName, UserFacingError
from wass_chat.agent.approval import ApprovalGate
from wass_chat.agent.events import ApprovalRequest, ToolResult
from wass_chat.agent.safety import fence_data
from wass_chat.agent.understanding.intents import tool_examples
from wass_chat.agent.understanding.parse import unknown_tool_error
from wass_chat.answers.checks.verify import VIEW_ONLY
from wass_chat.answers.kinds import render, with_verdict

if TYPE_CHECKING:
    from wass_chat.agent.facts.cluster_tools import ClusterTools
    from wass_chat.agent.facts.workflow_tools import WorkflowTools
    from wass_chat.agent.facts.workload_tools import WorkloadTools


NAME_MAX = 128
"""Longest name a tool argument may be (a run, task, node, job, user, partition, period...)."""
FILE_MAX = 512
"""Longest workflow or platform file (or report file name) a tool argument may be."""
LIST_MAX = 32
"""Most names a tool's list argument may hold (nodes removed, schedulers compared)."""
Name = Annotated[str, StringConstraints(max_length=NAME_MAX)]
FileName = Annotated[str, StringConstraints(max_length=FILE_MAX)]
"""Every string and list a tool takes is bounded: the bounds are in the schema, so a server
that constrains a model's arguments with a grammar built from it (llama-cpp-python's
``chatml-function-calling``, which sets no token limit there) cannot run one away (a tiny
model once wrote a 10k-token argument, 16 min on one core)."""


class ExplainPlacementArgs(BaseModel):
    """Why a task of a run was placed on its node: data locality, the simulated makespan had it
    run on each other node (counterfactual), and the most similar past cases."""

    run: Name | None = Field(None, description="Run id; default: the most recent run.")
    task: Name | None = Field(None, description="Task id; default: the task reading most data.")
    node: Name | None = Field(None, description="The node the user asked about, if any.")


class SimilarCasesArgs(BaseModel):
    """The k past executions in the knowledge base most similar to a workflow or a run."""

    workflow: FileName | None = Field(None, description="Workflow file or demo workflow name.")
    run: Name | None = Field(None, description="Run id (used when no workflow is given).")
    k: int = Field(5, ge=1, le=20, description="How many cases.")


class SimulateArgs(BaseModel):
    """Simulate a workflow on a platform with a scheduler, optionally with what-if changes
    (nodes added or removed, bandwidth scaled, another scheduler); reports the makespan change."""

    workflow: FileName | None = Field(
        None, description="Workflow file or demo name; default: run's."
    )
    run: Name | None = Field(None, description="Take workflow, platform, scheduler from this run.")
    platform: FileName | None = Field(None, description="Platform file or 'demo'.")
    scheduler: Name | None = Field(None, description="Baseline scheduler, e.g. heft.")
    add_nodes: int = Field(0, ge=0, le=1024, description="Nodes to add (copies of the usual node).")
    remove_nodes: list[Name] = Field(
        default_factory=list, max_length=LIST_MAX, description="Node names to remove."
    )
    remove_count: int = Field(0, ge=0, description="How many nodes to remove (the last ones).")
    bandwidth_factor: float = Field(1.0, gt=0, le=1000, description="Scale every bandwidth.")
    other_scheduler: Name | None = Field(None, description="Scheduler for the what-if variant.")


class CompareSchedulersArgs(BaseModel):
    """Simulate one workflow under several schedulers and rank them by makespan."""

    workflow: FileName | None = Field(
        None, description="Workflow file or demo name; default: run's."
    )
    run: Name | None = Field(None, description="Take workflow and platform from this run.")
    platform: FileName | None = Field(None, description="Platform file or 'demo'.")
    schedulers: list[Name] = Field(
        default_factory=list, max_length=LIST_MAX, description="Names; default: classics."
    )


class SubmitWorkflowArgs(BaseModel):
    """Prepare the submission of a workflow to Slurm. Only prepares a plan: a human must approve
    it outside the conversation before anything is submitted."""

    workflow: FileName = Field(description="Workflow file (WfFormat JSON) or demo workflow name.")
    scheduler: Name = Field("heft", description="Scheduler that plans the placements.")
    platform: FileName | None = Field(None, description="Platform file; default: the cluster's.")
    estimates: Literal["workflow", "kb"] = Field(
        "workflow",
        description="Task runtimes the plan assumes: the workflow file's, or kb: those the "
        "knowledge base's similar past runs give.",
    )


class RunStatusArgs(BaseModel):
    """The state of each task (job) of a submitted or demo run."""

    run: Name | None = Field(None, description="Run id; default: the most recent run.")


class ClusterStatusArgs(BaseModel):
    """The cluster's nodes and partitions: state in words, why a node takes no jobs (the reason
    an admin gave), CPUs in use and the jobs holding them, each partition's limits (MaxTime,
    MaxNodes, whom it admits), reservations."""

    node: Name | None = Field(None, description="One node to explain, e.g. n2; default: all.")
    partition: Name | None = Field(
        None, description="One partition's limits and nodes, e.g. gpu; default: all."
    )
    time_limit: Name | None = Field(
        None, description="A job's length, e.g. 2h or 2:00:00: which partitions take it."
    )


class SacctSummaryArgs(BaseModel):
    """Accounting statistics over a period: job counts, waits, states, backfill share."""

    period: Name = Field("7d", description="e.g. 7d, 30d, 2024-05 or START..END")
    user: Name | None = Field(None, description="Restrict to one user.")


class JobWhyArgs(BaseModel):
    """Why one Slurm job is pending, running, or ended as it did (failed, timed out, killed for
    memory...): Slurm's reason explained, the quoted evidence, advice checked with sbatch
    --test-only, and the expected start."""

    jobid: Name | None = Field(
        None,
        description="Slurm job id, e.g. 42 or 42_3 (array task). Omit it for the asker's "
        "latest job that failed, timed out or was killed (last 7 days).",
    )


class QueueOverviewArgs(BaseModel):
    """The live queue (squeue now): how many jobs run and pend, what blocks the most pending
    jobs, which partition is congested, who waits longest, the longest-running jobs and each
    user's running and pending jobs."""

    partition: Name | None = Field(None, description="Only this partition.")
    user: Name | None = Field(None, description="Only this user's jobs.")
    account: Name | None = Field(None, description="Only this account's jobs.")


class TopWaitersArgs(BaseModel):
    """Which users waited longest for their jobs to start over a period (from accounting)."""

    period: Name = Field("7d", description="e.g. 7d, 30d, 2024-05 or START..END")
    count: int = Field(5, ge=1, le=50, description="How many users.")


class EfficiencyArgs(BaseModel):
    """CPU, memory and time efficiency from accounting, as seff computes it: one job's (with
    advice on its requests), or a period's totals and the users who left the most allocated
    core-hours idle."""

    jobid: Name | None = Field(
        None, description="Slurm job id, e.g. 42 or 42_3; omit it for a period's figures."
    )
    period: Name = Field("30d", description="e.g. 7d, 30d, 2024-05 or START..END")
    user: Name | None = Field(None, description="Restrict to one user.")
    count: int = Field(5, ge=1, le=50, description="How many users in the ranking.")


class GpuUsageArgs(BaseModel):
    """GPU use, from what the site records (jobstats AdminComment, sacct/sstat gres/gpuutil):
    with no job and no period, the running jobs that hold GPUs and which are at 0% now; with a
    job, how it used its GPUs; with a period, the GPU-hours wasted and the users who wasted the
    most. Where nothing records GPU use it says so (never 0%)."""

    jobid: Name | None = Field(None, description="Slurm job id, e.g. 42; omit it otherwise.")
    period: Name | None = Field(
        None, description="e.g. 7d, 30d, 2024-05 or START..END; omit it for the jobs running now."
    )
    user: Name | None = Field(None, description="Restrict to one user.")
    count: int = Field(5, ge=1, le=50, description="How many users in the ranking.")


class ClusterWhatIfArgs(BaseModel):
    """Replay the cluster's own recent workload (accounting) before and after a change to the
    whole cluster: nodes added or removed, a partition's time limit, idle nodes powered off,
    walltimes predicted from each user's history, another batch scheduler, priority weights.
    Reports waits (mean, median, p95, with the mean's 95% CI), utilisation, backfill, jobs
    killed at their limit and energy, before and after. Not for one workflow's run (simulate)."""

    period: Name | None = Field(
        None, description="e.g. 14d, 2024-05 or START..END; default: the last 14 days."
    )
    partition: Name | None = Field(None, description="The partition the change is for.")
    add_nodes: int = Field(0, ge=0, le=100_000, description="Nodes to add (copies of its usual).")
    remove_nodes: int = Field(0, ge=0, le=100_000, description="Nodes to remove.")
    node_type: Literal["gpu", "cpu"] | None = Field(
        None, description="Add or remove GPU or CPU nodes (picks their partition)."
    )
    nodes_pct: float | None = Field(
        None, ge=-90, le=1000, description="Nodes added (+) or removed (-) in % of each partition."
    )
    max_time_h: float | None = Field(None, gt=0, description="The partition's new MaxTime, hours.")
    power_off_after_min: float | None = Field(
        None, ge=0, description="Power idle nodes off after this many minutes."
    )
    boot_time_s: int = Field(300, ge=0, le=7200, description="Seconds a node takes to boot.")
    predict_walltime: bool = Field(
        False, description="Plan with walltimes predicted from each user's last jobs."
    )
    scheduler: Literal["fifo", "sjf", "priority", "easy", "fifo-easy", "slurm"] | None = Field(
        None, description="Another batch scheduler (priority: multifactor without backfill)."
    )
    weights: Name | None = Field(None, description="Priority weights, e.g. fairshare=0,age=1000.")


class EnergyUsageArgs(BaseModel):
    """The energy the cluster used over a period, modelled from the recorded schedule and a
    stated power model: IT and facility kWh, by partition and by user."""

    period: Name = Field("30d", description="e.g. 7d, 30d, 2024-05 or START..END")
    partition: Name | None = Field(None, description="The partition asked about.")
    user: Name | None = Field(None, description="The user asked about.")


class GenerateReportArgs(BaseModel):
    """Write the scheduling audit report for a period to a file (HTML or Markdown)."""

    period: Name = Field("7d", description="e.g. 7d, 30d, 2024-05 or START..END")
    format: Literal["html", "md"] = Field("html", description="Output format.")
    output: FileName | None = Field(
        None, description="File name (no directories) under the data home's reports/ folder."
    )


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its name, argument schema (whose docstring describes it) and implementation."""

    name: str
    schema: type[BaseModel]
    owner: Literal["facts", "cluster", "batch"]
    """Which layer answers: :class:`WorkflowTools` (simulator, knowledge base),
    :class:`ClusterTools` (Slurm, accounting, submission) or :class:`WorkloadTools` (the
    cluster's workload replayed, its energy)."""
    method: str
    """The owner's method called with the validated arguments."""

    @property
    def description(self) -> str:
        """The schema's docstring, then how people ask for it (from the router's one table)."""
        text = " ".join((self.schema.__doc__ or "").split())
        examples = tool_examples(self.name)
        return text + (" Asked as: " + "; ".join(f'"{e}"' for e in examples) if examples else "")


TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec("explain_placement", ExplainPlacementArgs, "facts", "explain_placement"),
    ToolSpec("similar_cases", SimilarCasesArgs, "facts", "similar_cases"),
    ToolSpec("simulate", SimulateArgs, "facts", "simulate"),
    ToolSpec("compare_schedulers", CompareSchedulersArgs, "facts", "compare_schedulers"),
    ToolSpec("submit_workflow", SubmitWorkflowArgs, "cluster", "prepare_submission"),
    ToolSpec("run_status", RunStatusArgs, "cluster", "run_status"),
    ToolSpec("cluster_status", ClusterStatusArgs, "cluster", "cluster_status"),
    ToolSpec("sacct_summary", SacctSummaryArgs, "cluster", "sacct_summary"),
    ToolSpec("job_why", JobWhyArgs, "cluster", "job_why"),
    ToolSpec("queue_overview", QueueOverviewArgs, "cluster", "queue_overview"),
    ToolSpec("top_waiters", TopWaitersArgs, "cluster", "top_waiters"),
    ToolSpec("efficiency", EfficiencyArgs, "cluster", "efficiency"),
    ToolSpec("gpu_usage", GpuUsageArgs, "cluster", "gpu_usage"),
    ToolSpec("cluster_whatif", ClusterWhatIfArgs, "batch", "cluster_whatif"),
    ToolSpec("energy_usage", EnergyUsageArgs, "batch", "energy_usage"),
    ToolSpec("generate_report", GenerateReportArgs, "cluster", "generate_report"),
)
TOOL_NAMES = tuple(spec.name for spec in TOOL_SPECS)
GATED_TOOLS = frozenset({"submit_workflow"})
"""Tools whose facts become an approval request instead of an action."""
MODEL_LIST_LIMIT = 12
"""Longest list the model is shown in a tool result (the verifier still sees everything)."""
KNOWN_SHOWN = 12
"""Known names an unknown-name refusal lists (the rest are counted)."""


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call produced: facts, their rendering, and an approval request if gated."""

    call_id: str
    name: str
    facts: dict[str, Any]
    error: str | None = None
    approval: ApprovalRequest | None = None

    @property
    def summary(self) -> str:
        return render(self.facts)

    def as_event(self) -> ToolResult:
        return ToolResult(self.call_id, self.name, self.summary, self.facts, self.error)

    def for_model(self) -> str:
        """The result as the model sees it: trimmed facts inside an untrusted data block."""
        return fence_data(self.name, _trim(self.facts))


def _trim(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _trim(v) for k, v in value.items() if k not in VIEW_ONLY}
    if isinstance(value, list):
        return [_trim(v) for v in value[:MODEL_LIST_LIMIT]]
    return value


class Cancelled(Exception):
    """The user cancelled the answer; no further tool may start."""


@dataclass
class Toolbox:
    """Runs tools by name against their layer; gated tools go through the approval gate."""

    facts: WorkflowTools
    cluster: ClusterTools
    gate: ApprovalGate
    batch: WorkloadTools | None = None
    """Replays and energy; by default bound to the cluster layer's settings."""

    def __post_init__(self) -> None:
        from wass_chat.agent.facts.workload_tools import WorkloadTools

        self.cancelled = threading.Event()
        self._specs = {spec.name: spec for spec in TOOL_SPECS}
        self.batch = self.batch or WorkloadTools(self.cluster.settings)

    def call(self, name: str, arguments: dict[str, Any], call_id: str | None = None) -> ToolOutcome:
        """Validate ``arguments`` and run tool ``name``; errors become error outcomes."""
        call_id = call_id or f"call-{uuid.uuid4().hex[:12]}"
        if self.cancelled.is_set():
            raise Cancelled(name)
        spec = self._specs.get(name)
        if spec is None:
            return _error(call_id, name, unknown_tool_error(name, TOOL_NAMES))
        try:
            parsed = spec.schema.model_validate(arguments or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()
            )
            return _error(call_id, name, f"invalid arguments for {name}: {problems}")
        try:
            owners = {"facts": self.facts, "cluster": self.cluster, "batch": self.batch}
            owner = owners[spec.owner]
            facts = with_verdict(getattr(owner, spec.method)(**parsed.model_dump()))
        except UnknownName as exc:  # refused, with the nearest real names to choose from
            unknown = {
                "what": exc.what,
                "name": exc.name,
                "nearest": list(exc.nearest),
                "known": list(exc.known[:KNOWN_SHOWN]),
                "known_count": len(exc.known),
            }
            return _error(call_id, name, exc.one_line(), unknown)
        except UserFacingError as exc:
            return _error(call_id, name, exc.one_line())
        if name in GATED_TOOLS:
            request = self.gate.propose(name, facts)
            facts = {
                **facts,
                "request_id": request.request_id,
                "status": "awaiting human approval; nothing submitted",
            }
            return ToolOutcome(call_id, name, facts, approval=request)
        return ToolOutcome(call_id, name, facts)


def _error(
    call_id: str, name: str, message: str, unknown: dict[str, Any] | None = None
) -> ToolOutcome:
    facts: dict[str, Any] = {"kind": "error", "error": message}
    if unknown:
        facts["unknown"] = unknown
    return ToolOutcome(call_id, name, facts, error=message)


def langchain_tools(toolbox: Toolbox) -> list[Any]:
    """The toolbox as LangChain tools returning (content for the model, facts as artifact).

    The content is the fenced data block of :meth:`ToolOutcome.for_model`; the artifact carries
    the full facts (and the approval request id of a gated tool) for the session.
    """
    from langchain_core.tools import StructuredTool

    def make(spec: ToolSpec) -> Any:
        def run(**arguments: Any) -> tuple[str, dict[str, Any]]:
            outcome = toolbox.call(spec.name, arguments)
            return outcome.for_model(), outcome.facts

        return StructuredTool.from_function(
            func=run,
            name=spec.name,
            description=spec.description,
            args_schema=spec.schema,
            response_format="content_and_artifact",
        )

    return [make(spec) for spec in TOOL_SPECS]
