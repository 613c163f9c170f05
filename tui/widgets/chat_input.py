"""The prompt: an Input with history (up/down) and slash-command completion (tab or right)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.suggester import Suggester
from textual.widgets import Input

from wass_chat.agent.understanding.intents import slash_commands


@dataclass(frozen=True)
class SlashCommand:
    """A command of the offline router (the online agent understands them too)."""

    name: str
    usage: str
    summary: str


SLASH_COMMANDS: tuple[SlashCommand, ...] = tuple(
    SlashCommand(command.name, command.usage, spec.summary) for command, spec in slash_commands()
)
"""Derived from the router's one table (:data:`wass_chat.agent.understanding.intents.INTENTS`)."""


class SlashCommandSuggester(Suggester):
    """Suggests the first slash command that completes what was typed (``/si`` -> ``/simulate``)."""

    def __init__(self, commands: tuple[SlashCommand, ...] = SLASH_COMMANDS) -> None:
        super().__init__(use_cache=True, case_sensitive=False)
        self.commands = commands

    async def get_suggestion(self, value: str) -> str | None:
        if not value.startswith("/") or " " in value:
            return None
        for command in self.commands:
            if command.name.startswith(value) and command.name != value:
                return command.name + " "
        return None


class ChatInput(Input):
    """Input with shell-like history: up/down walk past messages, the draft is kept."""

    BINDINGS = [  # noqa: RUF012 (Textual's own declaration style)
        Binding("up", "history_previous", "Previous", show=False),
        Binding("down", "history_next", "Next", show=False),
        Binding("tab", "accept_suggestion", "Complete", show=False, priority=True),
    ]

    def __init__(self, history: list[str] | None = None, **kwargs: object) -> None:
        super().__init__(suggester=SlashCommandSuggester(), **kwargs)  # type: ignore[arg-type]
        self.history: list[str] = list(history or [])
        self._position: int | None = None
        self._draft = ""

    def remember(self, text: str) -> None:
        """Add a sent message to the history (consecutive duplicates are kept once)."""
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._position = None
        self._draft = ""

    def action_history_previous(self) -> None:
        if not self.history:
            return
        if self._position is None:
            self._draft = self.value
            self._position = len(self.history)
        self._position = max(self._position - 1, 0)
        self._show(self.history[self._position])

    def action_history_next(self) -> None:
        if self._position is None:
            return
        self._position += 1
        if self._position >= len(self.history):
            self._position = None
            self._show(self._draft)
        else:
            self._show(self.history[self._position])

    def action_accept_suggestion(self) -> None:
        """Complete the slash command being typed; otherwise tab moves focus as usual."""
        suggestion: str = self._suggestion
        if suggestion and suggestion != self.value:
            self._show(suggestion)
        else:
            self.screen.focus_next()

    def _show(self, text: str) -> None:
        self.value = text
        self.cursor_position = len(text)
