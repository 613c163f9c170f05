"""Find in the conversation (Ctrl+F): type to find, Enter for the next match, Escape to close.

Searches what the chat shows as text (questions, answers, notices, tool results), case-blind,
scrolls the match into view and marks it; the bar says ``2 of 5``.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Label

from tui.widgets.chat_log import ChatLog
from tui.widgets.tool_call import ToolCallBlock

MATCH_CLASS = "-match"


def searchable_text(widget: Widget) -> str:
    """The text a chat item shows (a tool block: its call and its result's summary)."""
    if isinstance(widget, ToolCallBlock):
        result = widget.result
        return " ".join([widget.call.name, result.summary if result else ""])
    return str(getattr(widget, "text", ""))


class SearchBar(Horizontal):
    """The find bar above the prompt; hidden until Ctrl+F."""

    BINDINGS = [Binding("escape", "close", "Close search", show=False)]  # noqa: RUF012

    def __init__(self, log: ChatLog, **kwargs: str) -> None:
        super().__init__(**kwargs)
        self.log_view = log
        self.matches: list[Widget] = []
        self.position = -1

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Find in the conversation (Enter: next, Esc: close)", id="find")
        yield Label("", id="find-count")

    def open(self) -> None:
        self.display = True
        self.query_one(Input).focus()

    def action_close(self) -> None:
        self._mark(None)
        self.matches, self.position = [], -1
        self.display = False
        self.screen.query_one("#prompt").focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        needle = event.value.strip().lower()
        items = list(self.log_view.children)
        self.matches = [w for w in items if needle and needle in searchable_text(w).lower()]
        self.position = -1
        self._next()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._next()

    def _next(self) -> None:
        count = self.query_one("#find-count", Label)
        if not self.matches:
            self._mark(None)
            count.update("no match" if self.query_one(Input).value.strip() else "")
            return
        self.position = (self.position + 1) % len(self.matches)
        match = self.matches[self.position]
        self._mark(match)
        self.log_view.scroll_to_widget(match, animate=False)
        count.update(f"{self.position + 1} of {len(self.matches)}")

    def _mark(self, match: Widget | None) -> None:
        for widget in self.log_view.query(f".{MATCH_CLASS}"):
            widget.remove_class(MATCH_CLASS)
        if match is not None:
            match.add_class(MATCH_CLASS)

    @property
    def current(self) -> Widget | None:
        """The match shown now, if any."""
        if 0 <= self.position < len(self.matches):
            return self.matches[self.position]
        return None
