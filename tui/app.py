"""The wass-chat terminal app: wiring of the session, the conversation store and the screens.

``run_app()`` is what ``wass-chat`` (no arguments) and ``make run`` open. The app depends on the
agent only through the :class:`~wass_chat.agent.events.ChatSession` protocol: tests pass their
own session factory, the real one comes from ``wass_chat.agent.session.open_session``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from sim.atomic_files import write_atomic
from tui.conversation_store import Conversation, ConversationStore
from tui.keys import bindings, palette_entries
from tui.screens.chat import ChatScreen
from tui.screens.help import HelpScreen
from tui.screens.model_choice import ModelChoiceScreen, ModelLister
from tui.screens.report_export import ReportExportScreen
from tui.session_bridge import SessionBridge, SessionFactory
from tui.slurm_status import SlurmProbe, probe_slurm
from tui.transcript_report import render_conversation_report
from wass_chat.agent.events import ChatSession

DARK_THEME = "textual-dark"
LIGHT_THEME = "textual-light"


def open_default_session() -> ChatSession:
    """The real agent: the model server when it answers within its timeout, else the offline
    router."""
    from wass_chat.agent.session import open_session

    return open_session()


@dataclass(frozen=True)
class ModelSessions:
    """How the app lists the model server's models and opens a session on one of them (F4)."""

    list_models: ModelLister
    open: Callable[[str], ChatSession]


class WassChatApp(App[None]):
    """Chat with the scheduler; see schedules and cases; approve what touches the cluster."""

    CSS_PATH = "app.tcss"
    TITLE = "wass-chat"
    BINDINGS = bindings("app")  # the keys' one table: tui/keys.py

    def __init__(
        self,
        session_factory: SessionFactory,
        store: ConversationStore,
        conversation: Conversation | None = None,
        reports_dir: Path | None = None,
        list_conversations: bool = False,
        model_sessions: ModelSessions | None = None,
        slurm_probe: SlurmProbe = probe_slurm,
    ) -> None:
        super().__init__()
        self.slurm_probe = slurm_probe
        """Whether Slurm answers, asked in a thread worker (header, greeting)."""
        self.bridge = SessionBridge(session_factory)
        self.model_sessions = model_sessions
        self.model: str | None = None
        self.store = store
        self.initial_conversation = conversation or Conversation.new()
        self.reports_dir = reports_dir or store.directory.parent / "reports"
        self.list_conversations = list_conversations

    def on_mount(self) -> None:
        self.theme = DARK_THEME
        chat = ChatScreen(self.bridge, self.store, self.initial_conversation, self.slurm_probe)
        self.push_screen(chat)
        if self.list_conversations:
            self.call_after_refresh(chat.action_conversations)

    def on_unmount(self) -> None:
        self.bridge.close()

    @property
    def chat(self) -> ChatScreen:
        """The chat screen (always at the bottom of the stack once mounted)."""
        return next(s for s in self.screen_stack if isinstance(s, ChatScreen))

    # --- actions ------------------------------------------------------------------------
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_choose_model(self) -> None:
        """F4: pick the server's model that answers; a new session opens on it."""
        if self.model_sessions is None:
            self.notify("This app was started without model choice.", severity="warning")
            return
        if self.chat.answering:
            self.notify("Still answering: Escape cancels it first.", severity="warning")
            return
        chosen = self.model_sessions

        def picked(model: str | None) -> None:
            if model is not None and model != self.model:
                self.switch_session(lambda: chosen.open(model), model)

        self.push_screen(ModelChoiceScreen(chosen.list_models, self.model), picked)

    def switch_session(self, factory: SessionFactory, model: str) -> None:
        """Answer from now on with a session opened by ``factory`` (on model ``model``)."""
        old, self.bridge = self.bridge, SessionBridge(factory)
        self.model = model
        self.chat.use_bridge(self.bridge, f"Model: {model} (it has not seen the earlier turns).")
        old.close()

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT_THEME if self.theme == DARK_THEME else DARK_THEME

    def action_export_report(self) -> None:
        conversation = self.chat.conversation
        default = self.reports_dir / f"conversation-{conversation.id}.md"

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.export_report(path)

        self.push_screen(ReportExportScreen(default), chosen)

    def export_report(self, path: Path) -> None:
        """Write the report in a thread worker; a toast says where (or why not)."""
        text = render_conversation_report(self.chat.conversation)

        def write() -> None:
            write_atomic(path, text)
            self.call_from_thread(self.notify, f"Report written to {path}", title="Export")

        self.run_worker(write, thread=True, group="export", exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "export" and event.state == WorkerState.ERROR:
            self.notify(f"Export failed: {event.worker.error}", severity="error", title="Export")

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's commands, then every titled row of the key table (tui/keys.py)."""
        yield from super().get_system_commands(screen)
        for key in palette_entries():
            owner = self if key.owner == "app" else self.chat
            help_text = f"{key.summary[0].upper()}{key.summary[1:]} ({key.display})"
            yield SystemCommand(key.title, help_text, getattr(owner, f"action_{key.action}"))


def run_app(resume: bool = False, session_factory: SessionFactory | None = None) -> None:
    """Open the app (``--resume``: the last saved conversation, with the list of all of them
    over it to pick another)."""
    from wass_chat.config import settings

    store = ConversationStore(settings().history_dir)
    conversation = store.latest() if resume else None
    WassChatApp(
        session_factory or open_default_session,
        store,
        conversation,
        reports_dir=settings().home / "reports",
        list_conversations=resume and conversation is not None,
        model_sessions=ModelSessions(_list_models, _open_on_model),
    ).run()


def _list_models() -> list[str]:
    from wass_chat.agent.model_server import served_models
    from wass_chat.config import settings

    return served_models(settings())


def _open_on_model(model: str) -> ChatSession:
    """A session on ``model`` (fails, saying why, when the server does not serve it)."""
    from wass_chat.agent.model_server import with_model
    from wass_chat.agent.session import open_session
    from wass_chat.config import settings

    return open_session(with_model(settings(), model), offline=False)
