"""Cancelling long tool work and reporting its progress, across the threads tools run in.

The chat session runs each tool in a worker thread and gives every answer its own :class:`Work`
token; the thread installs it with :func:`working`, and long work (building the knowledge base)
polls :meth:`Work.check` and reports through :meth:`Work.report`. A token belongs to one answer:
Escape sets it, and the next answer gets a fresh one, so starting a new question can never undo
the cancellation of a tool still winding down in another thread. Code called outside a session
(the CLI, tests) sees a token that is never cancelled and reports to nobody.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


class WorkCancelled(Exception):
    """The answer this work belonged to was cancelled; the work stopped and undid itself."""


@dataclass
class Work:
    """One answer's cancellation flag and where its progress goes (thread-safe)."""

    cancelled: threading.Event = field(default_factory=threading.Event)
    progress: Callable[[str], None] | None = None

    def cancel(self) -> None:
        self.cancelled.set()

    def check(self) -> None:
        """Raise :class:`WorkCancelled` once the answer has been cancelled."""
        if self.cancelled.is_set():
            raise WorkCancelled("cancelled")

    def report(self, text: str) -> None:
        """Say how far the work is (one line, e.g. ``building the knowledge base: 12 s``)."""
        if self.progress is not None:
            self.progress(text)


_current: ContextVar[Work | None] = ContextVar("wass_chat_work", default=None)


def current_work() -> Work:
    """The token of the answer this thread works for (a never-cancelled one outside a session)."""
    return _current.get() or Work()


@contextmanager
def working(work: Work) -> Iterator[Work]:
    """Install ``work`` as this thread's token for the duration of a tool call."""
    token = _current.set(work)
    try:
        yield work
    finally:
        _current.reset(token)
