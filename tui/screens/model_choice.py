"""Choose the model that answers (F4): the models the model server (Ollama or OpenAI-compatible)
has, one to pick.

The list is fetched off the UI thread; when the server does not answer, the screen says so (the
offline mode needs no model). Picking a model returns its name; the app then opens a new session
on it, and the header shows which model answers.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

ModelLister = Callable[[], list[str]]


class ModelChoiceScreen(ModalScreen[str | None]):
    """Returns the chosen model's name, or None (Escape)."""

    BINDINGS = [Binding("escape", "close", "Close")]  # noqa: RUF012

    def __init__(self, list_models: ModelLister, current: str | None) -> None:
        super().__init__()
        self.list_models = list_models
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="model-dialog"):
            yield Label("Which model answers?", id="model-title")
            yield Label("Asking the model server for its models…", id="model-status")
            yield OptionList(id="models")

    def on_mount(self) -> None:
        self.fetch()

    @work(thread=True, exit_on_error=False)
    def fetch(self) -> None:
        models = self.list_models()
        self.app.call_from_thread(self.show, models)

    def show(self, models: list[str]) -> None:
        status = self.query_one("#model-status", Label)
        options = self.query_one(OptionList)
        if not models:
            status.update(
                "The model server does not answer (or has no model): the offline mode answers."
            )
            return
        status.update("Enter picks a model; Escape keeps the current one.")
        for name in models:
            marker = "● " if name == self.current else "  "
            options.add_option(Option(marker + name, id=name))
        options.highlighted = models.index(self.current) if self.current in models else 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
