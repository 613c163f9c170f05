"""The app on the real agent in offline mode, for the flows that need real facts."""

from __future__ import annotations

from pathlib import Path

from tui.app import WassChatApp
from tui.conversation_store import ConversationStore
from wass_chat.agent.session import OfflineSession, open_session
from wass_chat.config import Settings

UNREACHABLE = "http://127.0.0.1:9"


def real_app(home: Path, history: Path) -> tuple[WassChatApp, OfflineSession]:
    """The app and its offline session on the data home ``home``."""
    session = open_session(Settings(home=home, ollama_host=UNREACHABLE), offline=True)
    assert isinstance(session, OfflineSession)
    return WassChatApp(lambda: session, ConversationStore(history)), session
