"""Events a chat session streams to its front ends (the TUI, ``wass-chat ask``).

The contract between the agent and every UI: a session turns one user message into a stream of
these events. Anything that would act on the cluster arrives as an :class:`ApprovalRequest`
and does nothing until the front end answers it through the session (approve, edit, reject).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Mode = Literal["ollama", "openai", "offline"]
"""Who answers: a model on Ollama, a model on an OpenAI-compatible server, or the router."""


@dataclass(frozen=True)
class ModeChanged:
    """Which engine answers: a model (on Ollama or an OpenAI-compatible server), or the
    deterministic offline router."""

    mode: Mode
    detail: str = ""
    model: dict[str, str] | None = None
    """The server and model answering online (``backend``, ``name``, ``url``; never a key);
    None offline."""


@dataclass(frozen=True)
class Token:
    """A piece of the answer text (Markdown), streamed as it is generated."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """The agent called a tool with these arguments."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolProgress:
    """A running tool says how far it is (one line; long work such as a knowledge-base build)."""

    call_id: str
    text: str


@dataclass(frozen=True)
class ToolResult:
    """A tool's result: ``summary`` for people, ``data`` (JSON-able facts) for machines."""

    call_id: str
    name: str
    summary: str
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class ApprovalRequest:
    """An action on the cluster waits for a human: ``plan`` lists jobs, nodes, dependencies."""

    request_id: str
    action: str
    plan: dict[str, Any]
    digest: str = ""
    """The plan's digest (:mod:`wass_chat.slurm.plan_digest`): what approving it names."""


@dataclass(frozen=True)
class Final:
    """The finished answer with the facts it rests on and the run/case ids it cites."""

    text: str
    facts: dict[str, Any] = field(default_factory=dict)
    cited_ids: tuple[str, ...] = ()
    verified: bool = True
    """False when the model's text failed verification and the deterministic rendering is shown."""
    checked: dict[str, Any] | None = None
    """The checker's verdict on the model's words (``text``, ``ok``, ``reason``); None when no
    model wrote any, or they were set aside unjudged (a plan awaiting approval)."""


ChatEvent = ModeChanged | Token | ToolCall | ToolProgress | ToolResult | ApprovalRequest | Final


ApprovalDecision = Literal["approve", "reject", "edit"]


class ChatSession(Protocol):
    """One conversation. Front ends drive it; the agent (online or offline) implements it."""

    @property
    def mode(self) -> Mode: ...

    def send(self, text: str) -> AsyncIterator[ChatEvent]:
        """Answer one user message as a stream of events, ending with :class:`Final`."""
        ...

    async def resolve_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        edited_plan: dict[str, Any] | None = None,
        digest: str | None = None,
    ) -> ToolResult:
        """A human's answer to an :class:`ApprovalRequest`; only ``approve``/``edit`` act, and
        ``approve`` only with the digest of the plan shown (``request.digest``)."""
        ...

    def cancel(self) -> None:
        """Stop the answer being generated (Escape in the TUI); no tool starts after this."""
        ...
