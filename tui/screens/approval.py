"""The approval modal: the only way a plan that acts on the cluster gets an ``approve``.

It shows the exact plan (every job by its workflow task name with its node, CPUs, ``--mem``,
``--time`` and dependencies in a table, then the command it runs word for word, every sbatch
option and the literal ``sbatch`` command line; when the first task is predicted to start, with
the bound and what the queue model could not know; the plan's other fields in people's units and
its digest) in a body that scrolls, and returns an :class:`ApprovalOutcome` that names the
digest of the plan it showed: approving means "this plan", never "whatever is pending". Reject
is focused first and is what Escape does, so a stray Enter or Escape can never submit anything.
A plan made on the demo platform (the cluster did not answer) names nodes Slurm does not have:
the modal says so, shows the first line of the cluster's error, and offers only to close it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Label, Static, TextArea

from wass_chat.agent.events import ApprovalDecision, ApprovalRequest


@dataclass(frozen=True)
class ApprovalOutcome:
    """What the human decided; ``plan`` is the edited plan for ``edit``, else None."""

    decision: ApprovalDecision
    plan: dict[str, Any] | None = None
    digest: str | None = None
    """For ``approve``: the digest of the plan the modal showed (``request.digest``)."""


def _first(job: Mapping[str, Any], *keys: str) -> Any:
    return next((job[k] for k in keys if job.get(k) not in (None, "", [])), "")


def _joined(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "–"
    return str(value) if value not in (None, "") else "–"


def plan_jobs(plan: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(job, node, dependencies) for each job of the plan, in the plan's order."""
    jobs = plan.get("jobs") or plan.get("tasks") or []
    rows: list[tuple[str, str, str]] = []
    for job in jobs if isinstance(jobs, list) else []:
        if not isinstance(job, Mapping):
            rows.append((str(job), "–", "–"))
            continue
        rows.append(
            (
                str(_first(job, "name", "job", "task", "id")),
                _joined(_first(job, "node", "nodes", "nodelist")),
                _joined(_first(job, "dependencies", "depends_on", "after", "parents")),
            )
        )
    return rows


def job_resources(job: Mapping[str, Any]) -> tuple[str, str, str]:
    """(CPUs, ``--mem``, ``--time``) of one job, as its sbatch options ask ('–': not given)."""
    found = {"--cpus-per-task": "–", "--mem": "–", "--time": "–"}
    for option in job.get("sbatch") or []:
        flag, _, value = str(option).partition("=")
        if flag in found and value:
            found[flag] = value
    if found["--cpus-per-task"] == "–" and job.get("cores"):
        found["--cpus-per-task"] = str(job["cores"])
    return found["--cpus-per-task"], found["--mem"], found["--time"]


def job_commands(plan: Mapping[str, Any]) -> list[str]:
    """For each job that lists them: its task, the command it runs (quoted word by word, as the
    job's shell receives it) and every sbatch option (``--mem``, ``--time``, ``--nodelist``,
    dependencies...), one block of text per job."""
    jobs = plan.get("jobs") or []
    blocks = []
    for job in jobs if isinstance(jobs, list) else []:
        if not isinstance(job, Mapping) or "sbatch" not in job:
            continue
        command = job.get("command") or []
        runs = shlex.join(str(w) for w in command) if command else "(sleeps its simulated time)"
        options = " ".join(str(o) for o in job.get("sbatch") or [])
        name = _first(job, "name", "job", "task", "id")
        block = f"{name}\n  runs: {runs}\n  sbatch: {options}"
        if job.get("argv"):
            block += f"\n  argv: {shlex.join(str(w) for w in job['argv'])}"
        blocks.append(block)
    return blocks


_HIDDEN_FIELDS = (
    "jobs",
    "tasks",
    "kind",
    "note",
    "busy_jobs",
    "plan_digest",
    "predicted_start",
)
"""Shown otherwise (the jobs table, the warning, the running jobs' lines) or meaningless to
people (the facts' kind)."""


def busy_jobs(plan: Mapping[str, Any]) -> list[str]:
    """The running jobs the plan works around, one line each (partition, --time, --mem and CPUs
    per node), as the live cluster reported them; [] for a plan on an idle or demo platform."""
    lines = plan.get("busy_jobs") or []
    return [first_line(str(line)) for line in lines] if isinstance(lines, list) else []


def _field_value(key: str, value: Any) -> str:
    """One plan field for people: durations in seconds with one decimal, one line of text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.1f} s" if key.endswith("_s") else f"{value:.4g}"
    if isinstance(value, str):
        return first_line(value)
    return json.dumps(value, default=str)


def plan_fields(plan: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The plan's other top-level fields (workflow, partition...), as ``(label, value)``."""
    return [
        (key.removesuffix("_s").replace("_", " "), _field_value(key, value))
        for key, value in plan.items()
        if key not in _HIDDEN_FIELDS
    ]


def first_line(text: str) -> str:
    """The first non-empty line of ``text`` (a command's error may run over many)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) > 1:
        return f"{lines[0]} (+{len(lines) - 1} more lines)"
    return lines[0] if lines else ""


def unsubmittable_reason(plan: Mapping[str, Any]) -> str | None:
    """Why this plan cannot reach Slurm, or None: a plan on the demo platform names demo nodes."""
    if str(plan.get("platform_ref") or "").lower() != "demo":
        return None
    note = first_line(str(plan.get("note") or ""))
    why = f" ({note})" if note else ""
    return (
        f"This plan was made on the demo platform{why}. Its nodes do not exist on the cluster, "
        "so it cannot be submitted: close it, and submit again once Slurm answers."
    )


class ApprovalScreen(ModalScreen[ApprovalOutcome]):
    """Approve, edit or reject one :class:`ApprovalRequest`."""

    BINDINGS = [  # noqa: RUF012
        Binding("escape", "reject", "Reject"),
        Binding("ctrl+a", "approve", "Approve"),
        Binding("ctrl+e", "edit", "Edit plan"),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        plan = self.request.plan
        blocked = unsubmittable_reason(plan)
        with Vertical(id="approval-dialog"):
            yield Label(f"Approve: {self.request.action}", id="approval-title")
            yield Static(
                blocked or "Nothing reaches the cluster unless you approve this exact plan.",
                id="approval-warning",
                markup=False,
            )
            with VerticalScroll(id="approval-body"):
                for key, value in plan_fields(plan):
                    yield Static(f"{key}: {value}", classes="plan-field", markup=False)
                for line in plan.get("predicted_start") or []:
                    yield Static(str(line), classes="plan-start", markup=False)
                held = busy_jobs(plan)
                if held:
                    yield Static("held by running jobs:", classes="plan-field", markup=False)
                for line in held:
                    yield Static(f"  {line}", classes="plan-busy", markup=False)
                jobs: DataTable[str] = DataTable(id="plan-jobs", cursor_type="row")
                jobs.add_columns("job", "node", "cpus", "--mem", "--time", "after")
                listed = plan.get("jobs") or plan.get("tasks") or []
                for k, (name, node, after) in enumerate(plan_jobs(plan)):
                    job = listed[k] if isinstance(listed[k], Mapping) else {}
                    jobs.add_row(name, node, *job_resources(job), after)
                yield jobs
                for block in job_commands(plan):
                    yield Static(block, classes="plan-command", markup=False)
                if self.request.digest:
                    yield Static(
                        f"plan digest: {self.request.digest[:12]} (approving names this plan)",
                        id="plan-digest",
                        markup=False,
                    )
                editor = TextArea(
                    json.dumps(plan, indent=2, default=str), language="json", id="plan-editor"
                )
                editor.display = False
                yield editor
                yield Label("", id="plan-error")
            with Horizontal(id="approval-buttons"):
                if blocked:
                    yield Button("Close", id="reject", variant="error")
                else:
                    yield Button("Reject", id="reject", variant="error")
                    yield Button("Edit", id="edit")
                    yield Button("Approve", id="approve", variant="success")

    @property
    def submittable(self) -> bool:
        return unsubmittable_reason(self.request.plan) is None

    def on_mount(self) -> None:
        self.query_one("#reject", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        handlers = {
            "reject": self.action_reject,
            "edit": self.action_edit,
            "approve": self.action_approve,
        }
        handlers[event.button.id or "reject"]()

    def action_reject(self) -> None:
        self.dismiss(ApprovalOutcome("reject"))

    def action_edit(self) -> None:
        """First press opens the JSON editor; approving then sends the edited plan."""
        if not self.submittable:
            return
        editor = self.query_one("#plan-editor", TextArea)
        editor.display = True
        self.query_one("#approve", Button).label = "Approve edited plan"
        editor.focus()

    def action_approve(self) -> None:
        if not self.submittable:  # Ctrl+A on a plan Slurm cannot run: nothing to approve
            return
        editor = self.query_one("#plan-editor", TextArea)
        if not editor.display:
            self.dismiss(ApprovalOutcome("approve", digest=self.request.digest))
            return
        try:
            edited = json.loads(editor.text)
        except json.JSONDecodeError as exc:
            self.query_one("#plan-error", Label).update(f"invalid JSON: {exc}")
            return
        if not isinstance(edited, dict):
            self.query_one("#plan-error", Label).update("the plan must be a JSON object")
            return
        if edited == self.request.plan:
            self.dismiss(ApprovalOutcome("approve", digest=self.request.digest))
        else:
            self.dismiss(ApprovalOutcome("edit", edited))
