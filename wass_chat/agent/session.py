"""Chat sessions: the offline router session, the shared machinery, and ``open_session``.

:func:`open_session` probes the configured Ollama server within ``Settings.ollama_timeout``
(2 s) and returns an :class:`~wass_chat.agent.online.OllamaSession` when it answers and has the
model, otherwise an :class:`OfflineSession`; the first event of the first answer says which
(:class:`~wass_chat.agent.events.ModeChanged`). Both implement
:class:`~wass_chat.agent.events.ChatSession` over the same :class:`~wass_chat.agent.tools.Toolbox`
and :class:`~wass_chat.agent.approval.ApprovalGate`, so a plan proposed in either mode is
approved the same way, and only through :meth:`SessionBase.resolve_approval`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from sim.errors import ServiceUnavailable, UserFacingError
from wass_chat.agent.approval import ApprovalGate, GatedAction
from wass_chat.agent.events import (
    ApprovalDecision,
    ChatEvent,
    ChatSession,
    Final,
    Mode,
    ModeChanged,
    Token,
    ToolCall,
    ToolResult,
)
from wass_chat.agent.facts import Facts
from wass_chat.agent.render import render
from wass_chat.agent.router import Intent, route
from wass_chat.agent.tools import Cancelled, Toolbox, ToolOutcome
from wass_chat.agent.verify import Verdict, citable_ids
from wass_chat.config import Settings

log = logging.getLogger(__name__)

RUN_SCOPED_TOOLS = frozenset(
    {"explain_placement", "similar_cases", "simulate", "compare_schedulers", "run_status"}
)
"""Tools that fall back to the conversation's current run when given no workflow or run."""


class SessionBase:
    """What both modes share: facts, tools, the approval gate, cancellation, the current run."""

    def __init__(self, facts: Facts, detail: str = "") -> None:
        self.facts = facts
        self.settings = facts.settings
        self.gate = ApprovalGate(
            {"submit_workflow": GatedAction(facts.execute_submission, facts.validate_plan_edit)}
        )
        self.toolbox = Toolbox(facts, self.gate)
        self.detail = detail
        self.current_run: str | None = None
        self._announced: Mode | None = None

    mode: Mode = "offline"

    def cancel(self) -> None:
        """Stop the current answer; no tool starts after this (see :class:`Toolbox`)."""
        self.toolbox.cancelled.set()

    def _announce(self) -> list[ChatEvent]:
        if self._announced == self.mode:
            return []
        self._announced = self.mode
        return [ModeChanged(self.mode, self.detail)]

    async def resolve_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        edited_plan: dict[str, Any] | None = None,
    ) -> ToolResult:
        """A human's decision on a pending plan; only ``approve`` and ``edit`` execute it."""
        action = self.gate.pending[request_id].action if request_id in self.gate.pending else ""
        try:
            outcome = await asyncio.to_thread(self.gate.resolve, request_id, decision, edited_plan)
        except UserFacingError as exc:
            facts = {"kind": "error", "error": exc.one_line()}
            return ToolResult(
                request_id, action or "approval", render(facts), facts, exc.one_line()
            )
        facts = {"kind": "submission_outcome", **outcome}
        if facts.get("run_id"):
            self.current_run = str(facts["run_id"])
        return ToolResult(request_id, action, render(facts), facts)

    async def call_tool(self, name: str, arguments: dict[str, Any], call_id: str) -> ToolOutcome:
        """Run one tool off the event loop (tools simulate, query Chroma, call Slurm)."""
        outcome = await asyncio.to_thread(self.toolbox.call, name, arguments, call_id)
        run_id = outcome.facts.get("run_id")
        if isinstance(run_id, str) and outcome.error is None:
            self.current_run = run_id
        return outcome

    def _with_context(self, intent: Intent) -> Intent:
        args = dict(intent.arguments)
        if (
            intent.tool in RUN_SCOPED_TOOLS
            and not args.get("run")
            and not args.get("workflow")
            and self.current_run
        ):
            args["run"] = self.current_run
        args = {k: v for k, v in args.items() if v is not None}
        return Intent(intent.tool, args, intent.reply)

    async def answer_offline(self, text: str) -> AsyncIterator[ChatEvent]:
        """The deterministic answer: route, run one tool, render its facts."""
        intent = self._with_context(route(text))
        if not intent.tool:
            for piece in _pieces(intent.reply):
                yield Token(piece)
            yield Final(intent.reply)
            return
        call_id = f"call-{uuid.uuid4().hex[:12]}"
        yield ToolCall(call_id, intent.tool, intent.arguments)
        try:
            outcome = await self.call_tool(intent.tool, intent.arguments, call_id)
        except Cancelled:
            yield Final("Cancelled.")
            return
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


class OfflineSession(SessionBase):
    """The embedded default: the intent router and template renderings, no LLM."""

    mode: Mode = "offline"

    async def send(self, text: str) -> AsyncIterator[ChatEvent]:
        self.toolbox.cancelled.clear()
        for event in self._announce():
            yield event
        async for event in self.answer_offline(text):
            yield event


def _pieces(text: str) -> list[str]:
    """Split a rendering into line-sized tokens so front ends can stream it."""
    return [line for line in text.splitlines(keepends=True) if line] or [text]


@dataclass(frozen=True)
class ProbeResult:
    """Whether Ollama answered with the configured model, and in words why not."""

    ok: bool
    detail: str


def probe_ollama(settings: Settings) -> ProbeResult:
    """Ask Ollama for its models within ``settings.ollama_timeout`` seconds."""
    import httpx

    url = settings.ollama_host.rstrip("/")
    if "://" not in url:
        url = "http://" + url
    try:
        response = httpx.get(f"{url}/api/tags", timeout=settings.ollama_timeout)
        response.raise_for_status()
        models = {m.get("name", "") for m in response.json().get("models", [])}
    except (httpx.HTTPError, ConnectionError, OSError, ValueError) as exc:
        return ProbeResult(False, f"no Ollama server at {url} ({type(exc).__name__}); offline mode")
    wanted = settings.ollama_model
    if wanted not in models and f"{wanted}:latest" not in models:
        return ProbeResult(
            False,
            f"Ollama at {url} has no model {wanted!r} (run: ollama pull {wanted}); offline mode",
        )
    return ProbeResult(True, f"{wanted} on {url}")


def open_session(settings: Settings | None = None, offline: bool | None = None) -> ChatSession:
    """A chat session: online when Ollama answers (``offline=None``), or as forced.

    ``offline=True`` never contacts Ollama; ``offline=False`` raises
    :class:`~sim.errors.ServiceUnavailable` when it does not answer.
    """
    if settings is None:
        from wass_chat.config import settings as process_settings

        settings = process_settings()
    from wass_chat.agent.demo_runs import ensure_demo_runs

    ensure_demo_runs(settings)
    facts = Facts(settings)
    if offline:
        return OfflineSession(facts, "offline mode requested")
    probe = probe_ollama(settings)
    if not probe.ok:
        if offline is False:
            raise ServiceUnavailable(probe.detail)
        return OfflineSession(facts, probe.detail)
    from wass_chat.agent.online import OllamaSession

    return OllamaSession(facts, probe.detail)
