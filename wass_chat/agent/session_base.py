"""What both chat modes share (:class:`SessionBase`): the offline session
(:mod:`wass_chat.agent.offline`) is it with no model, the online one
(:mod:`wass_chat.agent.online`) adds the model.

A session keeps the conversation's current subject (the run last simulated, compared, explained
or submitted; or a workflow file with its platform and scheduler): a command that names neither
a run nor a workflow (``/whatif add 4 nodes``, ``/cases``, ``/compare``) is about it. Each answer
gets its own :class:`~wass_chat.agent.cancellation.Work` token: Escape stops the tool running in
its worker thread, and the answer streams the tool's progress while it waits. Both modes run the
same :class:`~wass_chat.agent.tools.Toolbox` and :class:`~wass_chat.agent.approval.ApprovalGate`,
so a plan proposed in either is approved the same way, only through
:meth:`SessionBase.resolve_approval`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from sim.errors import UserFacingError
from wass_chat.agent.approval import ApprovalGate, GatedAction
from wass_chat.agent.cancellation import Work, WorkCancelled, working
from wass_chat.agent.events import (
    ApprovalDecision,
    ChatEvent,
    Final,
    Mode,
    ModeChanged,
    Token,
    ToolCall,
    ToolProgress,
    ToolResult,
)
from wass_chat.agent.facts.cluster_tools import ClusterTools
from wass_chat.agent.facts.workflow_tools import WorkflowTools
from wass_chat.agent.tools import TOOL_SPECS, Cancelled, Toolbox, ToolOutcome
from wass_chat.agent.understanding.router import (
    Intent,
    Routed,
    chosen_number,
    route_choice,
    routed,
)
from wass_chat.answers.checks.verify import Verdict, citable_ids
from wass_chat.answers.kinds import render

if TYPE_CHECKING:
    from wass_chat.agent.model_server import ModelServer

log = logging.getLogger(__name__)

RUN_SCOPED_TOOLS = frozenset(
    {"explain_placement", "similar_cases", "simulate", "compare_schedulers", "run_status"}
)
"""Tools that fall back to the conversation's current subject when given no workflow or run."""
_TOOL_FIELDS: dict[str, frozenset[str]] = {
    spec.name: frozenset(spec.schema.model_fields)
    for spec in TOOL_SPECS
    if issubclass(spec.schema, BaseModel)
}


class SessionBase:
    """What both modes share: facts, tools, the approval gate, cancellation, the current run."""

    def __init__(self, facts: WorkflowTools, detail: str = "") -> None:
        self.facts = facts
        self.cluster = ClusterTools(facts.settings, facts.sources)
        self.settings = facts.settings
        self.gate = ApprovalGate(
            {
                "submit_workflow": GatedAction(
                    self.cluster.execute_submission, self.cluster.validate_plan_edit
                )
            }
        )
        self.toolbox = Toolbox(facts, self.cluster, self.gate)
        self.detail = detail
        self.current: dict[str, str] = {}
        """The conversation's subject: ``{"run": id}``, or a workflow with platform and
        scheduler when what was simulated is not a run."""
        self._work = Work()
        self._announced: Mode | None = None
        self.offered: tuple[str, tuple[str, ...]] | None = None
        """The last question the router asked back about, and the numbered choices it offered
        (the intents), so the next message may pick one by its number."""

    mode: Mode = "offline"
    server: ModelServer | None = None
    """The model server an online session asks (None: the offline session)."""

    @property
    def current_run(self) -> str | None:
        """The current run's id, if the subject is a run."""
        return self.current.get("run")

    @current_run.setter
    def current_run(self, run_id: str | None) -> None:
        self.current = {"run": run_id} if run_id else {}

    @property
    def work(self) -> Work:
        """The current answer's token; a new answer (which clears the toolbox's flag, in either
        mode) gets a fresh one instead of the cancelled token of the previous answer."""
        if self._work.cancelled.is_set() and not self.toolbox.cancelled.is_set():
            self._work = Work()
        return self._work

    def start_answer(self) -> None:
        """A new answer: tools may start again, under a fresh cancellation token."""
        self.toolbox.cancelled.clear()
        self._work = Work()

    def cancel(self) -> None:
        """Stop the current answer: no tool starts after this (see :class:`Toolbox`), and the
        running one stops where it checks its token (a knowledge-base build, a comparison)."""
        self.toolbox.cancelled.set()  # first: see ``work``
        self._work.cancel()

    def _announce(self) -> list[ChatEvent]:
        if self._announced == self.mode:
            return []
        self._announced = self.mode
        online = self.server is not None and self.mode != "offline"
        model = self.server.as_json() if online and self.server else None
        return [ModeChanged(self.mode, self.detail, model)]

    async def resolve_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        edited_plan: dict[str, Any] | None = None,
        digest: str | None = None,
    ) -> ToolResult:
        """A human's decision on a pending plan; only ``approve`` (naming the digest of the plan
        shown) and ``edit`` execute it."""
        action = self.gate.pending[request_id].action if request_id in self.gate.pending else ""
        try:
            outcome = await asyncio.to_thread(
                self.gate.resolve, request_id, decision, edited_plan, digest
            )
        except UserFacingError as exc:
            facts = {"kind": "error", "error": exc.one_line()}
            return ToolResult(
                request_id, action or "approval", render(facts), facts, exc.one_line()
            )
        facts = {"kind": "submission_outcome", **outcome}
        if facts.get("run_id"):
            self.current_run = str(facts["run_id"])
        return ToolResult(request_id, action, render(facts), facts)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], call_id: str, work: Work | None = None
    ) -> ToolOutcome:
        """Run one tool off the event loop (tools simulate, query Chroma, call Slurm), under the
        answer's cancellation token."""
        work = work or self.work

        def run() -> ToolOutcome:
            with working(work):
                return self.toolbox.call(name, arguments, call_id)

        outcome = await asyncio.to_thread(run)
        if outcome.error is None:
            self._remember_subject(name, arguments, outcome.facts)
        return outcome

    def _remember_subject(
        self, name: str, arguments: dict[str, Any], facts: dict[str, Any]
    ) -> None:
        """Make what a tool was about the conversation's current subject."""
        run_id = facts.get("run_id")
        if isinstance(run_id, str) and run_id:
            self.current = {"run": run_id}
        elif name in {"simulate", "compare_schedulers"} and arguments.get("workflow"):
            baseline = facts.get("baseline") or {}
            subject = {
                "workflow": arguments["workflow"],
                "platform": arguments.get("platform"),
                "scheduler": baseline.get("scheduler") or facts.get("best"),
            }
            self.current = {k: str(v) for k, v in subject.items() if v}

    def cluster_live(self) -> bool:
        """Whether a Slurm controller answers here (the cached check every Slurm command
        makes first, :func:`~wass_chat.slurm.availability.ensure_slurm`)."""
        from wass_chat.slurm.availability import SlurmAway, ensure_slurm

        try:
            ensure_slurm("sinfo", needs_controller=True)
        except SlurmAway:
            return False
        return True

    def route(self, text: str) -> tuple[Intent, bool]:
        """The router's intent for ``text``, and whether the router settles it in either mode:
        a question no tool answers (refused), or a what-if naming no run in a conversation
        without a subject while a live cluster answers (the cluster's what-if, never a
        simulation of whatever run was recorded last)."""
        found, settled = self.routed(text)
        return found.intent, settled

    def routed(self, text: str) -> tuple[Routed, bool]:
        """:meth:`route` with the readings the intent was decided from."""
        live: list[bool] = []

        def unqualified_whatif_is_the_clusters() -> bool:
            live.append(not self.current and self.cluster_live())
            return live[-1]

        found = routed(text, cluster_live=unqualified_whatif_is_the_clusters)
        intent = found.intent
        by_live_cluster = any(live) and intent.tool == "cluster_whatif"
        return found, intent.refused or by_live_cluster

    def _routed(self, text: str) -> Intent:
        """The message's intent with the conversation's context; a bare number picks that
        choice of the last asking back."""
        number = chosen_number(text)
        if number is not None and self.offered and number <= len(self.offered[1]):
            question, choices = self.offered
            self.offered = None
            return self._with_context(route_choice(question, choices[number - 1]))
        intent = self.route(text)[0]
        self.offered = (text, intent.readings) if intent.readings else None
        return self._with_context(intent)

    def _with_context(self, intent: Intent) -> Intent:
        """The intent's arguments, completed with the current subject when it names none."""
        args = {k: v for k, v in intent.arguments.items() if v is not None}
        if intent.tool in RUN_SCOPED_TOOLS and not args.get("run") and not args.get("workflow"):
            fields = _TOOL_FIELDS.get(intent.tool, frozenset())
            args.update({k: v for k, v in self.current.items() if k in fields and k not in args})
        return Intent(intent.tool, args, intent.reply)

    async def _run_with_progress(
        self, name: str, arguments: dict[str, Any], call_id: str
    ) -> AsyncIterator[ToolProgress | ToolOutcome]:
        """Run a tool, yielding its progress lines as they come and its outcome last.

        Closing this generator early (the answer was cancelled) cancels the tool's work.
        """
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str] = asyncio.Queue()
        work = self.work

        def report(text: str) -> None:
            loop.call_soon_threadsafe(lines.put_nowait, text)

        work.progress = report
        task = asyncio.ensure_future(self.call_tool(name, arguments, call_id, work))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # retrieved below
        try:
            while not task.done():
                line = asyncio.ensure_future(lines.get())
                await asyncio.wait({task, line}, return_when=asyncio.FIRST_COMPLETED)
                if line.done():
                    yield ToolProgress(call_id, line.result())
                else:
                    line.cancel()
            yield task.result()
        finally:
            work.progress = None
            if not task.done():
                work.cancel()

    async def answer_offline(self, text: str) -> AsyncIterator[ChatEvent]:
        """The deterministic answer: route, run one tool, render its facts."""
        intent = self._routed(text)
        if not intent.tool:
            for piece in _pieces(intent.reply):
                yield Token(piece)
            yield Final(intent.reply)
            return
        call_id = f"call-{uuid.uuid4().hex[:12]}"
        yield ToolCall(call_id, intent.tool, intent.arguments)
        outcome: ToolOutcome | None = None
        try:
            async for step in self._run_with_progress(intent.tool, intent.arguments, call_id):
                if isinstance(step, ToolProgress):
                    yield step
                else:
                    outcome = step
        except (Cancelled, WorkCancelled):
            yield Final("Cancelled.")
            return
        assert outcome is not None
        yield outcome.as_event()
        if outcome.approval is not None:
            yield outcome.approval
        answer = outcome.summary
        for piece in _pieces(answer):
            yield Token(piece)
        yield Final(answer, outcome.facts, tuple(citable_ids(outcome.facts)), verified=True)

    def log_rejection(self, question: str, text: str, verdict: Verdict) -> None:
        """Record a model answer the verifier rejected (logger and ``history/verifier.jsonl``)."""
        log.warning("verifier rejected the model's answer: %s", verdict.reason())
        entry = {
            "time": time.time(),
            "question": question,
            "answer": text,
            "reason": verdict.reason(),
        }
        path = self.settings.history_dir / "verifier.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")


def _pieces(text: str) -> list[str]:
    """Split a rendering into line-sized tokens so front ends can stream it."""
    return [line for line in text.splitlines(keepends=True) if line] or [text]
