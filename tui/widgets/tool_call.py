"""A collapsible block showing one tool call: its arguments, then its result when it arrives."""

from __future__ import annotations

import json
from typing import Any

from textual.widgets import Collapsible, Static

from wass_chat.agent.events import ToolCall, ToolResult

_SHOWN_DATA_CHARS = 4000


def _as_json(value: Any, limit: int = _SHOWN_DATA_CHARS) -> str:
    text = json.dumps(value, indent=2, default=str, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "\n… (truncated)"


def _title(name: str, status: str) -> str:
    return f"⚙ {name} · {status}"


def _plain(markdown: str) -> str:
    """The first line of a Markdown summary without emphasis or code marks (for a title)."""
    first = markdown.strip().splitlines()[0] if markdown.strip() else ""
    return first.replace("**", "").replace("`", "").rstrip(":")


class ToolCallBlock(Collapsible):
    """``▶ ⚙ name · ✓ summary``: collapsed by default, expands to arguments and result."""

    def __init__(self, call: ToolCall) -> None:
        self.call = call
        self.result: ToolResult | None = None
        self._result_view = Static("…", classes="tool-summary", markup=False)
        self._data_view = Static("", classes="tool-data", markup=False)
        self._data_view.display = False
        super().__init__(
            Static("arguments", classes="tool-heading"),
            Static(_as_json(call.arguments), classes="tool-arguments", markup=False),
            Static("result", classes="tool-heading"),
            self._result_view,
            self._data_view,
            title=_title(call.name, "running…"),
            collapsed=True,
            classes="-running",
        )

    def progress(self, text: str) -> None:
        """Show how far the running tool is (its latest progress line) in the title."""
        if self.result is None:
            self.title = _title(self.call.name, f"running… {text}"[:72])

    def stop(self, reason: str = "cancelled") -> None:
        """The answer ended before the tool did (cancelled): say so instead of "running…"."""
        if self.result is None:
            self.remove_class("-running")
            self.add_class("-failed")
            self.title = _title(self.call.name, f"✗ {reason}")
            self._result_view.update(reason)

    def complete(self, result: ToolResult) -> None:
        """Show the result: its summary in the title, the summary and data in the body."""
        self.result = result
        self.remove_class("-running")
        failed = result.error is not None
        self.set_class(failed, "-failed")
        status = f"✗ {_plain(result.error or '')}" if failed else f"✓ {_plain(result.summary)}"
        self.title = _title(result.name, status[:72])
        self._result_view.update(result.error or result.summary)
        shown = {k: v for k, v in result.data.items() if k != "gantt"}
        if "gantt" in result.data:
            shown["gantt"] = "(drawn in the run panel: F2)"
        if shown:
            self._data_view.update(_as_json(shown))
            self._data_view.display = True
