"""Run a chat session on its own event loop thread, so nothing the agent does can freeze the UI.

The agent's ``send`` is an async generator, but the work behind it (model calls, simulations,
knowledge-base queries, Slurm commands) may block between two events. The bridge gives the
session a private asyncio loop in a daemon thread and hands the UI awaitables that complete on
the UI's loop. Opening the session (which probes Ollama for up to 2 s and imports LangChain)
happens on that thread too, so the chat is usable before the agent is ready.
Nothing here imports Textual.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from wass_chat.agent.events import ApprovalDecision, ChatEvent, ChatSession, Mode, ToolResult

SessionFactory = Callable[[], ChatSession]
T = TypeVar("T")


class SessionBridge:
    """Owns one :class:`ChatSession` living on a background event loop."""

    def __init__(self, factory: SessionFactory) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="chat-session", daemon=True
        )
        self._thread.start()
        self._session: Future[ChatSession] = asyncio.run_coroutine_threadsafe(
            self._open(factory), self._loop
        )

    @staticmethod
    async def _open(factory: SessionFactory) -> ChatSession:
        return factory()

    def _submit(self, make: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """Run ``make()`` on the session loop; await the result on the caller's loop."""

        async def run() -> T:
            return await make()

        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(run(), self._loop))

    async def session(self) -> ChatSession:
        """The session, once opened (raises what the factory raised)."""
        return await asyncio.wrap_future(self._session)

    @property
    def mode(self) -> Mode | None:
        """The session's mode, or None while it is still opening (or failed to open)."""
        if self._session.done() and self._session.exception() is None:
            return self._session.result().mode
        return None

    async def stream(self, text: str) -> AsyncIterator[ChatEvent]:
        """The session's events for ``text``, each fetched on the session loop.

        Cancelling the consumer cancels the pending ``__anext__`` on the session loop, and the
        generator is closed there, so the agent sees the cancellation at once.
        """
        session = await self.session()
        events = await self._submit(lambda: _start(session, text))
        try:
            while True:
                try:
                    event = await self._submit(events.__anext__)
                except StopAsyncIteration:
                    return
                yield event
        finally:
            closer = getattr(events, "aclose", None)
            if closer is not None:
                asyncio.run_coroutine_threadsafe(closer(), self._loop)

    async def resolve_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        edited_plan: dict[str, Any] | None = None,
        digest: str | None = None,
    ) -> ToolResult:
        """Forward a human's decision (and the digest of the plan it approves) to the session."""
        session = await self.session()
        return await self._submit(
            lambda: session.resolve_approval(request_id, decision, edited_plan, digest)
        )

    def cancel(self) -> None:
        """Ask the session to stop its current answer (thread-safe, never blocks)."""
        if self._session.done() and self._session.exception() is None:
            self._loop.call_soon_threadsafe(self._session.result().cancel)

    def close(self) -> None:
        """Stop the session loop (the thread is a daemon: exiting never waits for it)."""
        self._loop.call_soon_threadsafe(self._loop.stop)


async def _start(session: ChatSession, text: str) -> AsyncIterator[ChatEvent]:
    return aiter(session.send(text))
