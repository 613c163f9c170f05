"""Fixtures of the TUI tests: the app on a scripted session, with history in a temp dir."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tui.scripted_session import ScriptedSession
from tui.app import WassChatApp
from tui.conversation_store import Conversation, ConversationStore


@pytest.fixture
def session() -> ScriptedSession:
    return ScriptedSession()


@pytest.fixture
def store(tmp_path: Path) -> ConversationStore:
    return ConversationStore(tmp_path / "history")


@pytest.fixture
def no_slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No Slurm answers: ``SLURM_CONF`` names a file that does not exist, so the app's real
    check says so at once, whatever cluster this machine (or another test) runs."""
    missing = tmp_path / "no-such-slurm.conf"
    monkeypatch.setenv("SLURM_CONF", str(missing))
    monkeypatch.delenv("WASS_SLURM_PRECHECK", raising=False)
    return missing


@pytest.fixture
def make_app(
    session: ScriptedSession, store: ConversationStore, tmp_path: Path, no_slurm: Path
) -> Callable[..., WassChatApp]:
    """The app on the scripted session, with no Slurm answering (header and greeting say so)."""

    def make(conversation: Conversation | None = None) -> WassChatApp:
        return WassChatApp(lambda: session, store, conversation, reports_dir=tmp_path / "reports")

    return make


@pytest.fixture(scope="session")
def seeded_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data home with a small knowledge base seeded from real simulations (no demo build)."""
    from kb.seed import SeedConfig, seed_knowledge_base
    from kb.store import KnowledgeBase
    from wass_chat.config import Settings

    home = tmp_path_factory.mktemp("tui-home")
    kb = KnowledgeBase(Settings(home=home).kb_dir)
    config = SeedConfig(count=24, jobs=1, recipes=(), shapes=("fork-join", "genomics"), sizes=(20,))
    seed_knowledge_base(kb, config)
    kb.close()
    return home
