"""The conversation: user messages, streamed Markdown answers, tool blocks and notices."""

from __future__ import annotations

from collections import deque
from typing import TypeVar

from rich.markdown import Markdown as RichMarkdown
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from tui.conversation_store import Entry
from tui.widgets.tool_call import ToolCallBlock
from wass_chat.agent.events import ToolCall, ToolResult


class UserMessage(Static):
    """What the user typed, shown verbatim (never interpreted as markup)."""

    def __init__(self, text: str) -> None:
        super().__init__(text, markup=False)
        self.text = text


class AnswerMessage(Markdown):
    """The assistant's answer; tokens are appended through a :class:`MarkdownStream`."""

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        self.text = text
        self._stream: MarkdownStream | None = None

    async def write(self, fragment: str) -> None:
        """Append ``fragment`` (rendering is batched when tokens arrive faster than frames)."""
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        self.text += fragment
        await self._stream.write(fragment)

    async def finish(self, final_text: str | None = None) -> None:
        """Flush the stream; replace the text when the final answer differs from the stream."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if final_text is not None and final_text.strip() != self.text.strip():
            self.text = final_text
            await self.update(final_text)


class SettledAnswer(Static):
    """An older answer, drawn as one widget (Rich's Markdown) instead of Textual's Markdown,
    which mounts a widget per paragraph, list item and table cell: every one of them is laid
    out again on each new item of the log. Same text, searchable and copied as the live one."""

    def __init__(self, text: str) -> None:
        super().__init__(RichMarkdown(text))
        self.text = text


class Notice(Static):
    """A one-line remark from the app itself (cancelled, mode changed, errors)."""

    def __init__(self, text: str, kind: str = "info") -> None:
        super().__init__(text, markup=False, classes=f"-{kind}")
        self.text = text


W = TypeVar("W", bound=Widget)

MAX_ITEMS = 120
"""Items the log keeps live: every mounted Markdown answer costs layout and memory on each
new item, so a 120-question session took each answer from 2.2 s to 10.8 s (issue #45). The
older items stay in the conversation (saved, exported, resumed); the log shows how many it hid."""
LIVE_ANSWERS_FROM = 16
"""Answers among the newest this many items stay Textual Markdown widgets (streamed into,
links live); older finished ones become a :class:`SettledAnswer`, one widget each, so the
layout's work per new item stops growing with the items the log keeps."""


class ChatLog(VerticalScroll):
    """Scrolls to the newest item while the user has not scrolled up; keeps the newest
    ``max_items`` items live and one notice above them counting the hidden ones."""

    can_focus = False

    def __init__(self, *args: object, max_items: int = MAX_ITEMS, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.max_items = max_items
        self.hidden = 0
        self._items: deque[Widget] = deque()
        self._marker: Notice | None = None

    def on_mount(self) -> None:
        self.anchor()

    def _add(self, item: W) -> W:
        self.mount(item)
        self._items.append(item)
        self._settle(len(self._items) - 1 - LIVE_ANSWERS_FROM)
        excess = len(self._items) - self.max_items
        if excess > 0:
            for _ in range(excess):
                self._items.popleft().remove()
            self.hidden += excess
            text = (
                f"{self.hidden} earlier items are hidden here; the conversation keeps them"
                " (Ctrl+S exports it whole)."
            )
            if self._marker is None:
                self._marker = Notice(text, "hidden")
                self.mount(self._marker, before=0)
            else:
                self._marker.text = text
                self._marker.update(text)
        return item

    def _settle(self, index: int) -> None:
        """Redraw the finished answer at ``index`` of the live items as one widget."""
        if index < 0:
            return
        old = self._items[index]
        if isinstance(old, AnswerMessage) and old._stream is None:
            settled = SettledAnswer(old.text)
            settled.set_classes(old.classes)
            self.mount(settled, after=old)
            old.remove()
            self._items[index] = settled

    def add_user(self, text: str) -> UserMessage:
        return self._add(UserMessage(text))

    def start_answer(self, text: str = "") -> AnswerMessage:
        return self._add(AnswerMessage(text))

    def add_tool_call(self, call: ToolCall) -> ToolCallBlock:
        return self._add(ToolCallBlock(call))

    def complete_tool(self, result: ToolResult) -> ToolCallBlock:
        """Attach ``result`` to the block of its call (or a new block when the call was unseen)."""
        for block in reversed(list(self.query(ToolCallBlock))):
            if block.call.call_id == result.call_id and block.result is None:
                block.complete(result)
                return block
        block = self.add_tool_call(ToolCall(result.call_id, result.name, {}))
        block.complete(result)
        return block

    def add_notice(self, text: str, kind: str = "info") -> Notice:
        return self._add(Notice(text, kind))

    def clear(self) -> None:
        self.remove_children()
        self._items.clear()
        self._marker = None
        self.hidden = 0

    def replay(self, entries: list[Entry]) -> None:
        """Show a saved conversation's items as they were shown when it was live."""
        for entry in entries:
            if entry.role == "user":
                self.add_user(entry.text)
            elif entry.role == "assistant":
                self.start_answer(entry.text)
            elif entry.role == "tool" and entry.tool is not None:
                tool = entry.tool
                call_id, name = str(tool.get("call_id", "")), str(tool.get("name", "?"))
                block = self.add_tool_call(ToolCall(call_id, name, tool.get("arguments") or {}))
                summary, data = tool.get("summary", ""), tool.get("data") or {}
                block.complete(ToolResult(call_id, name, summary, data, tool.get("error")))
            else:
                self.add_notice(entry.text)
