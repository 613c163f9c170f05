"""The online session: a LangChain agent on the configured model server.

``langchain.agents.create_agent(chat_model, tools, system_prompt=...)``, the chat model being
``ChatOllama`` or ``ChatOpenAI(base_url=...)`` (:mod:`wass_chat.agent.model_server`: the same
tools, middleware, verifier and fencing of data either way), with one middleware,
:class:`ToolCallRepair`, that handles what small local models do (see
:mod:`wass_chat.agent.understanding.parse`): JSON tool calls in the text become real tool calls,
greetings get no tools, tools are offered with ``tool_choice="auto"`` said explicitly (the OpenAI
default, which llama-cpp-python's server reads as "no tools" when it is missing), and a
model-call limit stops loops. Invented tool names reach LangChain's
tool node, which answers the model with an error listing the real tools.

The session streams the model's tokens and tool activity as :mod:`~wass_chat.agent.events`,
then verifies the final text against the facts the tools returned
(:func:`~wass_chat.agent.answers.verify.verify_answer`); an answer that fails is replaced by the
deterministic rendering of the same facts, and the rejection is logged. If the model server
stops answering mid-conversation, the session switches to offline mode and says so.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from wass_chat.agent.answers.prompt import SYSTEM_PROMPT
from wass_chat.agent.answers.render import render
from wass_chat.agent.answers.verify import ignored_refusals, verify_answer
from wass_chat.agent.events import (
    ApprovalRequest,
    ChatEvent,
    Final,
    Mode,
    ModeChanged,
    Token,
    ToolCall,
    ToolResult,
)
from wass_chat.agent.facts.facts import Facts
from wass_chat.agent.model_server import ModelServer, chat_model, connection_errors
from wass_chat.agent.safety import literal
from wass_chat.agent.session_base import SessionBase
from wass_chat.agent.tools import langchain_tools
from wass_chat.agent.understanding.parse import (
    is_small_talk,
    looks_like_tool_json,
    recover_tool_calls,
)
from wass_chat.agent.understanding.router import GREETING

MODEL_CALLS_PER_ANSWER = 6
"""A model that keeps calling tools is stopped after this many model calls."""


def _last_user_text(messages: list[Any]) -> str:
    from langchain_core.messages import HumanMessage

    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return str(message.content)
    return ""


def make_tool_call_repair() -> Any:
    """The middleware (a factory, so LangChain is imported only when going online)."""
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage

    class ToolCallRepair(AgentMiddleware):  # type: ignore[misc]
        """Turn JSON-in-text into tool calls; no tools on greetings; tools offered "auto"."""

        async def awrap_model_call(
            self,
            request: ModelRequest,
            handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
        ) -> ModelResponse:
            small_talk = is_small_talk(_last_user_text(request.messages))
            if small_talk:
                request = request.override(tools=[])
            elif request.tools and request.tool_choice is None:
                request = request.override(tool_choice="auto")
            response = await handler(request)
            repaired = []
            for message in response.result:
                if isinstance(message, AIMessage):
                    message = _repair(message, small_talk)
                repaired.append(message)
            return ModelResponse(result=repaired, structured_response=response.structured_response)

    def _repair(message: Any, small_talk: bool) -> Any:
        text = message.content if isinstance(message.content, str) else ""
        calls = list(message.tool_calls)
        if not calls:
            recovered = recover_tool_calls(text)
            if recovered:
                calls = [
                    {
                        "name": c.name,
                        "args": c.arguments,
                        "id": f"recovered-{uuid.uuid4().hex[:12]}",
                        "type": "tool_call",
                    }
                    for c in recovered
                ]
                text = ""
        if small_talk and calls:
            calls, text = [], (text if text and not recover_tool_calls(text) else GREETING)
        if calls == list(message.tool_calls) and text == message.content:
            return message
        return AIMessage(content=text, tool_calls=calls, id=message.id)

    return ToolCallRepair()


class OnlineSession(SessionBase):
    """One conversation with the configured model, its tools and the verifier."""

    def __init__(self, facts: Facts, detail: str = "", model: Any | None = None) -> None:
        super().__init__(facts, detail)
        from langchain.agents import create_agent
        from langchain.agents.middleware import ModelCallLimitMiddleware

        server = ModelServer.of(facts.settings)
        self.server = server  # who answers: the header and ``ask --json`` name it
        self.label = server.label
        self.mode: Mode = server.backend
        self.agent = create_agent(
            model or chat_model(facts.settings),
            langchain_tools(self.toolbox),
            system_prompt=SYSTEM_PROMPT,
            middleware=[
                make_tool_call_repair(),
                ModelCallLimitMiddleware(run_limit=MODEL_CALLS_PER_ANSWER, exit_behavior="end"),
            ],
        )
        self.history: list[Any] = []

    async def send(self, text: str) -> AsyncIterator[ChatEvent]:
        self.toolbox.cancelled.clear()
        for event in self._announce():
            yield event
        if self.mode == "offline" or self.route(text)[1]:  # no model decides these
            async for event in self.answer_offline(text):
                yield event
            return
        turn = _Turn()
        try:
            async for event in self._stream(text, turn):
                yield event
                if self.toolbox.cancelled.is_set():
                    yield Final("Cancelled.")
                    return
        except connection_errors(self.settings) as exc:
            self.mode = "offline"
            status = getattr(exc, "status_code", None)
            name = type(exc).__name__ + (f", HTTP {status}" if status else "")
            self.detail = f"{self.label} stopped answering ({name}); offline mode"
            for event in self._announce():
                yield event
            async for event in self.answer_offline(text):
                yield event
            return
        async for event in self._finish(text, turn):
            yield event

    async def _stream(self, text: str, turn: _Turn) -> AsyncIterator[ChatEvent]:
        from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage

        messages = [*self.history, HumanMessage(content=text)]
        stream = self.agent.astream(
            {"messages": messages},
            stream_mode=["messages", "updates"],
            config={"recursion_limit": 4 * MODEL_CALLS_PER_ANSWER},
        )
        async for mode, chunk in stream:
            if mode == "messages":
                message, meta = chunk
                if isinstance(message, AIMessageChunk) and meta.get("langgraph_node") == "model":
                    piece = turn.stream_piece(message)
                    if piece:
                        yield Token(piece)
                continue
            for update in chunk.values():
                for message in (update or {}).get("messages", []):
                    if isinstance(message, AIMessage):
                        for call in message.tool_calls:
                            yield ToolCall(call["id"] or "", call["name"], dict(call["args"]))
                        if not message.tool_calls:
                            turn.final_text = str(message.content or "")
                    elif isinstance(message, ToolMessage):
                        for event in self._tool_events(message, turn):
                            yield event

    def _tool_events(self, message: Any, turn: _Turn) -> list[ChatEvent]:
        facts = message.artifact if isinstance(message.artifact, dict) else None
        if facts is None:  # LangChain's own error (invented tool name, bad arguments)
            text = str(message.content)
            facts = {"kind": "error", "error": text}
            return [ToolResult(message.tool_call_id, message.name or "?", text, facts, text)]
        error = str(facts.get("error")) if facts.get("kind") == "error" else None
        events: list[ChatEvent] = [
            ToolResult(message.tool_call_id, message.name or "?", render(facts), facts, error)
        ]
        if error is not None and facts.get("unknown"):
            turn.refusals.append(facts)
        if error is None:
            turn.facts.append(facts)
            run_id = facts.get("run_id")
            if isinstance(run_id, str):
                self.current_run = run_id
        request = self.gate.pending.get(str(facts.get("request_id", "")))
        if request is not None:
            events.append(request)
            turn.approvals.append(request)
        return events

    async def _finish(self, question: str, turn: _Turn) -> AsyncIterator[ChatEvent]:
        """Verify the model's answer; fall back to deterministic renderings when it fails."""
        from langchain_core.messages import AIMessage, HumanMessage

        facts = turn.combined_facts()
        text = turn.final_text.strip()
        verdict = verify_answer(text, facts, question)
        answer = Final(render(facts), facts, tuple(turn.citable()))
        ignored = ignored_refusals(text, turn.refusals)
        if turn.refusals and not turn.facts:
            # Only refusals: the answer is one, in the model's words if it says so, never an
            # answer about a name that names nothing ("nothing blocks the queue" in debgu).
            refused = (
                turn.refusals[0]
                if len(turn.refusals) == 1
                else {"kind": "results", "results": turn.refusals}
            )
            if text and not ignored and verify_answer(text, refused, question).ok:
                answer = Final(text, refused, verified=True)
            else:
                if text:
                    self.log_rejection(question, text, verdict)
                answer = Final(render(refused), refused, verified=not text)
        elif not turn.facts:
            if verdict.ok and text:
                answer = Final(text, verified=True)
            else:
                if text:
                    self.log_rejection(question, text, verdict)
                async for event in self.answer_offline(question):
                    if isinstance(event, Final):
                        answer = Final(event.text, event.facts, event.cited_ids, verified=not text)
                    else:
                        yield event
        elif turn.approvals:
            # A plan awaits a human: only the deterministic rendering may describe it, so no
            # model text ("approved", "submitted") can misstate what happened.
            answer = Final(render(facts), facts, tuple(turn.citable()), verified=True)
        elif verdict.ok and text:
            missing = [i for i in turn.citable() if i not in verdict.cited_ids]
            if missing:
                text += "\n\nSources: " + ", ".join(literal(i) for i in missing)
            answer = Final(text, facts, tuple(turn.citable()), verified=True)
        else:
            if text:
                self.log_rejection(question, text, verdict)
            answer = Final(render(facts), facts, tuple(turn.citable()), verified=not text)
        if turn.facts and ignored:  # answered for another name: the refusal is said first
            said = "\n\n".join(render(refusal) for refusal in turn.refusals)
            answer = Final(f"{said}\n\n{answer.text}", answer.facts, answer.cited_ids,
                           verified=answer.verified)  # fmt: skip
        self.history += [HumanMessage(content=question), AIMessage(content=answer.text)]
        yield answer


class _Turn:
    """What one answer accumulated: streamed text per model call, facts, approvals."""

    def __init__(self) -> None:
        self.buffers: dict[str, str] = {}
        self.shown: dict[str, int] = {}
        self.final_text = ""
        self.facts: list[dict[str, Any]] = []
        self.refusals: list[dict[str, Any]] = []
        """Error facts of tools that refused a name naming nothing (``unknown``)."""
        self.approvals: list[ApprovalRequest] = []

    def stream_piece(self, chunk: Any) -> str:
        """New text to show from a model chunk; held back while it may be a JSON tool call."""
        content = chunk.content if isinstance(chunk.content, str) else ""
        if not content:
            return ""
        key = str(chunk.id)
        self.buffers[key] = self.buffers.get(key, "") + content
        buffer = self.buffers[key]
        if looks_like_tool_json(buffer) or len(buffer.strip()) < 2:
            return ""
        start = self.shown.get(key, 0)
        self.shown[key] = len(buffer)
        return buffer[start:]

    def combined_facts(self) -> dict[str, Any]:
        if len(self.facts) == 1:
            return self.facts[0]
        return {"kind": "results", "results": self.facts}

    def citable(self) -> list[str]:
        from wass_chat.agent.answers.verify import citable_ids

        return citable_ids(self.combined_facts())


__all__ = ["ModeChanged", "OnlineSession"]
