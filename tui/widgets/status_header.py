"""The one-line header: product name, which engine answers (ollama/offline), and activity."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Label


class StatusHeader(Horizontal):
    """Shows ``wass-chat``, the session mode badge and what the app is doing (no clock)."""

    mode: reactive[str] = reactive("connecting")
    """``ollama``, ``offline``, ``connecting`` or ``unavailable``."""
    detail: reactive[str] = reactive("")
    activity: reactive[str] = reactive("ready")

    def __init__(self) -> None:
        super().__init__()
        self._badge = Label(id="mode-badge")
        self._activity = Label(id="activity")

    def compose(self) -> ComposeResult:
        yield Label("wass-chat", id="app-title")
        yield self._badge
        yield self._activity

    def watch_mode(self, mode: str) -> None:
        badge = self._badge
        badge.update(f"● {mode}" + (f" · {self.detail}" if self.detail else ""))
        for name in ("ollama", "offline", "connecting", "unavailable"):
            badge.set_class(mode == name, f"-{name}")

    def watch_detail(self, _detail: str) -> None:
        self.watch_mode(self.mode)

    def watch_activity(self, activity: str) -> None:
        self._activity.update(activity)
