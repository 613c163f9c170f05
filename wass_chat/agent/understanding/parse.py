"""Repairing what small local models do with tools.

Small models served by Ollama often (1) write a tool call as JSON in the message text instead of
using the ``tool_calls`` field, (2) call tools on a greeting, and (3) invent tool names. This
module recognises each case with plain functions the online session's middleware applies:

* :func:`recover_tool_calls` finds tool calls written as JSON text (bare, fenced, inside
  ``<tool_call>`` tags, or as a list) in the shapes models actually produce.
* :func:`is_small_talk` says a user message needs no tool at all.
* :func:`unknown_tool_error` is the message sent back to the model for an invented name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RecoveredCall:
    """A tool call read out of message text."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


_NAME_KEYS = ("name", "tool", "tool_name", "function", "action")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "action_input", "tool_input")


def recover_tool_calls(text: str) -> list[RecoveredCall]:
    """Tool calls written as JSON in ``text``; empty when the text is prose.

    Only a message that *is* a tool call counts: the JSON must be the whole message apart from
    fences, ``<tool_call>`` tags and whitespace. A JSON example quoted in the middle of an
    explanation is left alone.
    """
    stripped = _strip_wrappers(text)
    if not stripped or stripped[0] not in "{[":
        return []
    values = list(_json_values(stripped))
    if not values:
        return []
    calls: list[RecoveredCall] = []
    for value in values:
        calls += _calls_from(value)
    return calls


def looks_like_tool_json(text: str) -> bool:
    """Whether streamed text so far might be turning into a JSON tool call (hold it back)."""
    head = text.lstrip()[:12].lower()
    return head.startswith(("{", "[", "```", "<tool_call", "<function"))


_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_TAGS = re.compile(r"</?(tool_call|tool_calls|function_call|function)[^>]*>", re.IGNORECASE)


def _strip_wrappers(text: str) -> str:
    text = _TAGS.sub("\n", text.strip()).strip()
    previous = None
    while previous != text:
        previous = text
        text = _FENCE.sub("", text).strip()
    return text


def _json_values(text: str) -> Iterator[Any]:
    """Every JSON value in ``text``, which must consist of JSON values and whitespace only."""
    decoder = json.JSONDecoder()
    position = 0
    while position < len(text):
        while position < len(text) and text[position] in " \t\r\n,;":
            position += 1
        if position >= len(text):
            return
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            return
        yield value


def _calls_from(value: Any) -> list[RecoveredCall]:
    if isinstance(value, list):
        return [call for item in value for call in _calls_from(item)]
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("tool_calls"), list):
        return _calls_from(value["tool_calls"])
    name: Any = None
    for key in _NAME_KEYS:
        candidate = value.get(key)
        if isinstance(candidate, dict):  # {"function": {"name": ..., "arguments": ...}}
            return _calls_from(candidate)
        if isinstance(candidate, str) and candidate.strip():
            name = candidate.strip()
            break
    if name is None:
        return []
    arguments: Any = {}
    for key in _ARG_KEYS:
        if key in value:
            arguments = value[key]
            break
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            arguments = {"input": arguments}
    if not isinstance(arguments, dict):
        arguments = {"input": arguments}
    return [RecoveredCall(name, arguments)]


_SMALL_TALK = re.compile(
    r"^\s*(hi|hello|hey|hiya|howdy|yo|greetings|good\s+(morning|afternoon|evening|day)|"
    r"thanks?|thank\s+you|thx|cheers|ok(ay)?|cool|great|nice|bye|goodbye|see\s+you|"
    r"how\s+are\s+you|how's\s+it\s+going|what's\s+up|who\s+are\s+you|"
    r"what\s+can\s+you\s+do)"
    r"(\s+(there|all|everyone|again|so\s+much|a\s+lot|a\s+bunch|you|wass|wass-chat|"
    r"assistant|bot|today|doing))*\s*[!.?,]*\s*$",
    re.IGNORECASE,
)


def is_small_talk(text: str) -> bool:
    """A greeting, thanks or farewell with nothing else in it: answer it without tools."""
    parts = [p for p in re.split(r"[!.?,;]+\s*", text) if p.strip()]
    return bool(parts) and all(_SMALL_TALK.match(p) for p in parts)


def unknown_tool_error(name: str, known: Iterable[str]) -> str:
    """What the model is told when it calls a tool that does not exist."""
    return (
        f"Error: there is no tool named {json.dumps(name)}. Available tools: "
        f"{', '.join(sorted(known))}. Call one of these, or answer without a tool."
    )
