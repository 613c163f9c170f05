"""The online session: a LangChain agent on the configured model server.

``langchain.agents.create_agent(chat_model, tools, system_prompt=...)``, the chat model being
``ChatOllama`` or ``ChatOpenAI(base_url=...)`` (:mod:`wass_chat.agent.model_server`: the same
tools, middleware, verifier and fencing of data either way), with one middleware,
:class:`ToolCallRepair`, that handles what small local models do (see
:mod:`wass_chat.agent.understanding.parse`): JSON tool calls in the text become real tool calls,
greetings get no tools, a question gets only the tools the router ranks highest for it (and
those the conversation already called; all of them when the router is unsure: see
:class:`OnlineSession`), offered with ``tool_choice="auto"`` said explicitly (the OpenAI
default, which llama-cpp-python's server reads as "no tools" when it is missing), and a
model repeating a call it has the result of is asked again without tools; a
model-call limit stops other loops: a model still calling tools when it runs out gets the offline
answer in its place, said so (:data:`UNFINISHED`). Invented tool names reach LangChain's
tool node, which answers the model with an error listing the real tools.

The session streams the model's tokens and tool activity as :mod:`~wass_chat.agent.events`,
then verifies the final text against the facts the tools returned
(:func:`~wass_chat.answers.checks.verify.verify_answer`); an answer that fails is replaced by the
deterministic rendering of the same facts, and the rejection is logged. If the model server
stops answering mid-conversation, the session switches to offline mode and says so; a request
it refuses, or any other failure of the model's loop, gets the offline answer to that question,
said so, and the session stays online.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

from wass_chat.agent.cancellation import WorkCancelled
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
from wass_chat.agent.facts.workflow_tools import WorkflowTools
from wass_chat.agent.model_server import ModelServer, chat_model, connection_errors
from wass_chat.agent.prompt import SYSTEM_PROMPT
from wass_chat.agent.safety import literal
from wass_chat.agent.session_base import SessionBase
from wass_chat.agent.tools import TOOL_NAMES, Cancelled, langchain_tools
from wass_chat.agent.understanding.parse import (
    is_small_talk,
    looks_like_tool_json,
    recover_tool_calls,
)
from wass_chat.agent.understanding.router import GREETING, Routed
from wass_chat.answers.checks.verify import ignored_refusals, verify_answer
from wass_chat.answers.kinds import render

log = logging.getLogger(__name__)

MODEL_CALLS_PER_ANSWER = 6
"""A model that keeps calling tools is stopped after this many model calls."""
GRAPH_STEPS_PER_MODEL_CALL = 4
"""The agent graph's steps per model call: the limit's check before it, the model, the limit's
count after it, the tools. The graph's own step limit stays above the model-call limit's, so the
call limit is the one that stops a loop."""
UNFINISHED = (
    "The model did not finish: it was still calling tools after "
    f"{MODEL_CALLS_PER_ANSWER} model calls. The offline answer:"
)
"""Said before the offline answer that replaces a model's unfinished one."""


def _last_user_text(messages: list[Any]) -> str:
    from langchain_core.messages import HumanMessage

    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return str(message.content)
    return ""


def make_tool_call_repair(
    offered: Callable[[], frozenset[str] | None] = lambda: None,
) -> Any:
    """The middleware (a factory, so LangChain is imported only when going online).

    ``offered`` gives the names of the tools this answer's model calls are offered (None:
    every tool); a call to another of the agent's tools still runs (see
    :meth:`OnlineSession.tools_to_offer`)."""
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage

    class ToolCallRepair(AgentMiddleware):  # type: ignore[misc]
        """Turn JSON-in-text into tool calls; no tools on greetings; only the tools the session
        offers for this question, "auto"; a model repeating calls it already has the results
        of is asked again without tools."""

        async def awrap_model_call(
            self,
            request: ModelRequest,
            handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
        ) -> ModelResponse:
            small_talk = is_small_talk(_last_user_text(request.messages))
            names = offered()
            if small_talk:
                request = request.override(tools=[])
            else:
                if names is not None:
                    tools = [t for t in request.tools if getattr(t, "name", None) in names]
                    request = request.override(tools=tools)
                if request.tools and request.tool_choice is None:
                    request = request.override(tool_choice="auto")
            response = _repaired(await handler(request), small_talk)
            if request.tools and _only_repeats(response, request.messages):
                # Small models call the same tool again and again (the graph would stop them
                # with no answer): the results are in, so they are asked for the words.
                response = _repaired(await handler(request.override(tools=[])), small_talk)
            return response

    def _repaired(response: ModelResponse, small_talk: bool) -> ModelResponse:
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


def _call_key(call: dict[str, Any]) -> tuple[str, str]:
    import json

    return call["name"], json.dumps(call.get("args", {}), sort_keys=True, default=str)


def _only_repeats(response: Any, messages: list[Any]) -> bool:
    """Whether every tool call in ``response`` was made already since the user's last message
    (same tool, same arguments: its result is in ``messages``)."""
    from langchain_core.messages import AIMessage, HumanMessage

    made: set[tuple[str, str]] = set()
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage):
            made.update(_call_key(call) for call in message.tool_calls)
    asked = [
        _call_key(call)
        for message in response.result
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    ]
    return bool(asked) and all(key in made for key in asked)


class OnlineSession(SessionBase):
    """One conversation with the configured model, its tools and the verifier.

    **The tools offered.** Each question's model calls are offered only the tools the
    router ranks highest for it (:meth:`~wass_chat.agent.understanding.router.Routed.
    likely_tools`, :data:`~wass_chat.agent.understanding.router.TOOLS_OFFERED`) and those the
    conversation already called, not all of :data:`~wass_chat.agent.tools.TOOL_SPECS`: every
    offered tool's schema is in every prompt (a small model on two cores spent minutes on the
    ~3.6k tokens of all sixteen), and a small model picks worse among many. When the router
    has no confident ranking (its best reading is weak, or no tool's) every tool is offered.
    The set is fixed for one answer, so the prompt's prefix stays the same across its model
    calls (servers reuse a cached prefix). The agent keeps every tool: a call to one not
    offered still runs, and an answer without the right tool's facts that the checker cannot
    accept is replaced by the router's own (offline) answer, as for any model answer.
    """

    def __init__(self, facts: WorkflowTools, detail: str = "", model: Any | None = None) -> None:
        super().__init__(facts, detail)
        from langchain.agents import create_agent
        from langchain.agents.middleware import ModelCallLimitMiddleware

        server = ModelServer.of(facts.settings)
        self.server = server  # who answers: the header and ``ask --json`` name it
        self.label = server.label
        self.mode: Mode = server.backend
        self.used_tools: dict[str, None] = {}
        """The tools this conversation called (either mode), in the order first called."""
        self.tools_offered: frozenset[str] | None = None
        """The tools the current answer's model calls are offered (None: all)."""
        self.agent = create_agent(
            model or chat_model(facts.settings),
            langchain_tools(self.toolbox),
            system_prompt=SYSTEM_PROMPT,
            middleware=[
                make_tool_call_repair(lambda: self.tools_offered),
                ModelCallLimitMiddleware(run_limit=MODEL_CALLS_PER_ANSWER, exit_behavior="error"),
            ],
        )
        self.history: list[Any] = []

    def tools_to_offer(self, found: Routed) -> frozenset[str] | None:
        """The tools offered for a question the router read as ``found``: its likeliest and
        those already called in this conversation; None (all) without a confident ranking."""
        likely = found.likely_tools()
        if not likely:
            return None
        return frozenset((*likely, *self.used_tools))

    async def send(self, text: str) -> AsyncIterator[ChatEvent]:
        async for event in self._send(text):
            if isinstance(event, ToolCall) and event.name in TOOL_NAMES:
                self.used_tools.setdefault(event.name, None)
            yield event

    async def _send(self, text: str) -> AsyncIterator[ChatEvent]:
        self.toolbox.cancelled.clear()
        for event in self._announce():
            yield event
        found, settled = self.routed(text) if self.mode != "offline" else (None, True)
        if found is None or settled:  # no model decides these
            async for event in self.answer_offline(text):
                yield event
            return
        self.tools_offered = self.tools_to_offer(found)
        turn = _Turn()
        try:
            async for event in self._stream(text, turn):
                yield event
                if self.toolbox.cancelled.is_set():
                    yield Final("Cancelled.")
                    return
        except _unfinished_errors():
            async for event in self._answer_unfinished(text):
                yield event
            return
        except connection_errors(self.settings) as exc:
            refusal = _refused_request(exc)
            if refusal is not None:  # this request, not the server: the session stays online
                async for event in self._answer_unfinished(text, refusal):
                    yield event
                return
            self.mode = "offline"
            status = getattr(exc, "status_code", None)
            name = type(exc).__name__ + (f", HTTP {status}" if status else "")
            self.detail = f"{self.label} stopped answering ({name}); offline mode"
            for event in self._announce():
                yield event
            async for event in self.answer_offline(text):
                yield event
            return
        except (Cancelled, WorkCancelled):  # raised by a tool the user cancelled
            yield Final("Cancelled.")
            return
        except Exception as exc:  # any other failure on the model's path
            # The server answered, the loop did not finish (a tool's bug, a reply LangChain
            # cannot read...): logged with its traceback, said, and the offline answer given,
            # so a front end (``ask --json``) always gets an answer; the session stays online.
            log.exception("the model's answer failed")
            said = f"The model's answer failed ({type(exc).__name__}). The offline answer:"
            async for event in self._answer_unfinished(text, said):
                yield event
            return
        async for event in self._finish(text, turn):
            yield event

    async def _answer_unfinished(
        self, question: str, said: str = UNFINISHED
    ) -> AsyncIterator[ChatEvent]:
        """The offline answer to ``question``, after ``said`` (why the model's did not come;
        the server still answers: the session stays online)."""
        from langchain_core.messages import AIMessage, HumanMessage

        yield Token(said + "\n\n")
        async for event in self.answer_offline(question):
            if isinstance(event, Final):
                event = Final(
                    f"{said}\n\n{event.text}",
                    event.facts,
                    event.cited_ids,
                    verified=event.verified,
                )
                self.history += [HumanMessage(content=question), AIMessage(content=event.text)]
            yield event

    async def _stream(self, text: str, turn: _Turn) -> AsyncIterator[ChatEvent]:
        from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage

        messages = [*self.history, HumanMessage(content=text)]
        stream = self.agent.astream(
            {"messages": messages},
            stream_mode=["messages", "updates"],
            config={"recursion_limit": GRAPH_STEPS_PER_MODEL_CALL * MODEL_CALLS_PER_ANSWER + 2},
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
        words, judged = text, verdict  # the model's words, as the checker judged them
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
            judged = verify_answer(text, refused, question)
            if text and not ignored and judged.ok:
                answer = Final(text, refused, verified=True)
            else:
                if text:
                    self.log_rejection(question, text, judged)
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
            words = ""  # set aside unjudged
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
            answer = Final(
                f"{said}\n\n{answer.text}", answer.facts, answer.cited_ids, verified=answer.verified
            )
        if words:
            check = {"text": words, "ok": judged.ok and answer.verified, "reason": judged.reason()}
            answer = replace(answer, checked=check)
        self.history += [HumanMessage(content=question), AIMessage(content=answer.text)]
        yield answer


REFUSED_STATUSES = frozenset({400, 413, 422})
"""Statuses that refuse one request, not the server: a conversation longer than the model's
context (llama-cpp-python's server and vLLM answer 400 ``context_length_exceeded``)."""


def _refused_request(exc: BaseException) -> str | None:
    """What to say before the offline answer when the server refused this request (the
    session stays online), or None when the server itself failed (the session goes offline).
    The server's own message is quoted, cut to one short line."""
    status = getattr(exc, "status_code", None)
    if status not in REFUSED_STATUSES:
        return None
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    message = str(error.get("message", "")) if isinstance(error, dict) else ""
    message = " ".join(message.split())[:160]
    why = f"HTTP {status}" + (f": {message}" if message else "")
    return f"The model server refused this request ({why}). The offline answer:"


def _unfinished_errors() -> tuple[type[BaseException], ...]:
    """What the agent raises on a model that keeps calling tools: the model-call limit, and
    the graph's step limit should a loop ever outrun it."""
    from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
    from langgraph.errors import GraphRecursionError

    return (ModelCallLimitExceededError, GraphRecursionError)


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
        from wass_chat.answers.checks.verify import citable_ids

        return citable_ids(self.combined_facts())


__all__ = ["ModeChanged", "OnlineSession"]
