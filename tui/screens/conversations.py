"""The saved conversations: open one, rename it, delete it (Ctrl+O, and ``--resume``).

Enter opens the highlighted conversation, ``r`` renames it (type the name, Enter), ``d`` twice
deletes it, Escape closes the list. The screen edits the store directly and returns what the
chat should show next: a conversation to open, a fresh one (the open one was deleted), or
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Input, Label

from tui.conversation_store import ConversationStore


@dataclass(frozen=True)
class ConversationChoice:
    """``open``: the id to show; ``fresh``: the open conversation is gone, start a new one."""

    open: str | None = None
    fresh: bool = False


class ConversationsScreen(ModalScreen[ConversationChoice]):
    """A table of conversations, newest first."""

    BINDINGS = [  # noqa: RUF012
        Binding("escape", "close", "Close"),
        Binding("r", "rename", "Rename"),
        Binding("d", "delete", "Delete"),
    ]

    def __init__(self, store: ConversationStore, current_id: str) -> None:
        super().__init__()
        self.store = store
        self.current_id = current_id
        self._armed_delete: str | None = None
        self._current_deleted = False

    def compose(self) -> ComposeResult:
        with Vertical(id="conversations-dialog"):
            yield Label("Conversations", id="conversations-title")
            table: DataTable[str] = DataTable(id="conversations", cursor_type="row")
            yield table
            rename = Input(placeholder="New name (Enter saves, Escape cancels)", id="rename")
            rename.display = False
            yield rename
            yield Label(
                "Enter: open · r: rename · d d: delete · Esc: close", id="conversations-hint"
            )
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("conversation", "started", "questions")
        self._fill()
        table.focus()

    def _fill(self) -> None:
        table: DataTable[str] = self.query_one(DataTable)
        table.clear()
        for summary in self.store.listing():
            marker = "● " if summary.id == self.current_id else "  "
            table.add_row(
                marker + summary.title,
                summary.created[:16].replace("T", " "),
                str(summary.messages),
                key=summary.id,
            )

    @property
    def highlighted(self) -> str | None:
        table: DataTable[str] = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return str(key) if key is not None else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.dismiss(ConversationChoice(open=str(event.row_key.value)))

    def action_rename(self) -> None:
        if self.highlighted is None:
            return
        rename = self.query_one("#rename", Input)
        rename.display = True
        rename.value = ""
        rename.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        target = self.highlighted
        if target is not None:
            self.store.rename(target, event.value)
        self._close_rename()
        self._fill()

    def _close_rename(self) -> None:
        rename = self.query_one("#rename", Input)
        rename.display = False
        self.query_one(DataTable).focus()

    def action_delete(self) -> None:
        """First ``d`` asks, the second deletes (a stray key never loses a conversation)."""
        target = self.highlighted
        if target is None:
            return
        hint = self.query_one("#conversations-hint", Label)
        if self._armed_delete != target:
            self._armed_delete = target
            hint.update("Press d again to delete this conversation (any other key keeps it).")
            return
        self._armed_delete = None
        self.store.delete(target)
        self._current_deleted |= target == self.current_id
        hint.update("Deleted.")
        self._fill()

    def on_key(self, event: object) -> None:
        key = getattr(event, "key", "")
        if key != "d":
            self._armed_delete = None

    def action_close(self) -> None:
        if self.query_one("#rename", Input).display:
            self._close_rename()
            return
        self.dismiss(ConversationChoice(fresh=self._current_deleted))
