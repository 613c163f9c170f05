"""The offline session: the embedded default, the intent router and template renderings, no LLM.

Everything it does is :class:`~wass_chat.agent.session_base.SessionBase`'s (the router, the
toolbox, the approval gate); the online session (:mod:`wass_chat.agent.online`) falls back to
the same path for slash commands and when its model server stops answering.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from wass_chat.agent.events import ChatEvent, Mode
from wass_chat.agent.session_base import SessionBase


class OfflineSession(SessionBase):
    """The embedded default: the intent router and template renderings, no LLM."""

    mode: Mode = "offline"

    async def send(self, text: str) -> AsyncIterator[ChatEvent]:
        self.start_answer()
        for event in self._announce():
            yield event
        async for event in self.answer_offline(text):
            yield event
