"""Ask where to export the conversation as a Markdown report."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label


class ReportExportScreen(ModalScreen[Path | None]):
    """Returns the chosen path, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]  # noqa: RUF012

    def __init__(self, default_path: Path) -> None:
        super().__init__()
        self.default_path = default_path

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog"):
            yield Label("Export the conversation as a Markdown report", id="export-title")
            yield Input(str(self.default_path), id="export-path")
            yield Label("", id="export-error")
            with Horizontal(id="export-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Export", id="export", variant="primary")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._export()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "export":
            self._export()
        else:
            self.action_cancel()

    def _export(self) -> None:
        raw = self.query_one("#export-path", Input).value.strip()
        if not raw:
            self.query_one("#export-error", Label).update("give a file path")
            return
        self.dismiss(Path(raw).expanduser())

    def action_cancel(self) -> None:
        self.dismiss(None)
