"""Conversations on disk: one JSON file per conversation under ``Settings().history_dir``.

A conversation is the list of what the chat showed (user messages, answers, tool calls with
their results, notices) plus the last schedule drawn in the side panel, so ``wass-chat --resume``
rebuilds the screen as it was. Files are written atomically after every completed turn: a crash
never leaves a half-written conversation. Nothing here imports Textual.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from sim.atomic_files import write_atomic
from sim.errors import InputError

Role = Literal["user", "assistant", "tool", "notice"]


class ConversationFileError(InputError):
    """A conversation file that cannot be read back."""

    kind = "conversation"


@dataclass
class Entry:
    """One item of the transcript; ``tool`` entries carry the call and its result."""

    role: Role
    text: str = ""
    tool: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "text": self.text}
        if self.tool is not None:
            data["tool"] = self.tool
        return data


@dataclass
class Conversation:
    """A transcript being built; mutable on purpose, the chat appends to it as it goes."""

    id: str
    created: str
    entries: list[Entry] = field(default_factory=list)
    gantt: dict[str, Any] | None = None
    cases: list[dict[str, Any]] = field(default_factory=list)
    cases_subject: str = ""
    """The workflow the cases were retrieved for ('' when the tool did not say)."""
    name: str = ""
    """A name the user gave it (rename); the title falls back to the first message."""

    @classmethod
    def new(cls) -> Conversation:
        now = datetime.now(UTC)
        return cls(id=f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}", created=now.isoformat())

    @property
    def title(self) -> str:
        """Its name, else the first user message shortened: how the conversation is listed."""
        first = self.name or next((e.text for e in self.entries if e.role == "user"), "")
        return (first[:60] + "…") if len(first) > 60 else first or "(empty)"

    @property
    def user_messages(self) -> list[str]:
        """Everything the user typed, oldest first (seeds the input history on resume)."""
        return [e.text for e in self.entries if e.role == "user"]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created": self.created,
            "title": self.title,
            "name": self.name,
            "entries": [e.to_json() for e in self.entries],
            "gantt": self.gantt,
            "cases": self.cases,
            "cases_subject": self.cases_subject,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str) -> Conversation:
        problems: list[str] = []
        entries: list[Entry] = []
        for index, raw in enumerate(data.get("entries", [])):
            role = raw.get("role") if isinstance(raw, dict) else None
            if role not in ("user", "assistant", "tool", "notice"):
                problems.append(f"entry #{index} has no valid role")
                continue
            entries.append(Entry(role=role, text=str(raw.get("text", "")), tool=raw.get("tool")))
        for key in ("id", "created"):
            if not isinstance(data.get(key), str):
                problems.append(f"missing {key!r}")
        if problems:
            raise ConversationFileError(source, problems)
        return cls(
            id=data["id"],
            created=data["created"],
            entries=entries,
            gantt=data.get("gantt"),
            cases=list(data.get("cases") or []),
            cases_subject=str(data.get("cases_subject") or ""),
            name=str(data.get("name") or ""),
        )


@dataclass(frozen=True)
class ConversationSummary:
    """What the list of conversations shows about one."""

    id: str
    title: str
    created: str
    messages: int


class ConversationStore:
    """Reads and writes conversations in one directory (``<id>.json``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path_of(self, conversation_id: str) -> Path:
        return self.directory / f"{conversation_id}.json"

    def save(self, conversation: Conversation) -> Path:
        """Write ``conversation`` atomically; returns its path."""
        path = self.path_of(conversation.id)
        write_atomic(path, json.dumps(conversation.to_json(), indent=1, default=str))
        return path

    def load(self, conversation_id: str) -> Conversation:
        path = self.path_of(conversation_id)
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ConversationFileError(str(path), [str(exc)]) from exc
        if not isinstance(data, dict):
            raise ConversationFileError(str(path), ["not a JSON object"])
        return Conversation.from_json(data, str(path))

    def ids(self) -> list[str]:
        """Conversation ids, oldest first (ids start with their creation time)."""
        if not self.directory.is_dir():
            return []
        return sorted(p.stem for p in self.directory.glob("*.json"))

    def listing(self) -> list[ConversationSummary]:
        """Every readable conversation, the most recently written first (unreadable files are
        skipped: the list must open even if one file is damaged)."""
        if not self.directory.is_dir():
            return []
        found: list[tuple[float, ConversationSummary]] = []
        for path in self.directory.glob("*.json"):
            try:
                conversation = self.load(path.stem)
                written = path.stat().st_mtime
            except (ConversationFileError, OSError):
                continue
            messages = sum(1 for e in conversation.entries if e.role == "user")
            summary = ConversationSummary(
                conversation.id, conversation.title, conversation.created, messages
            )
            found.append((written, summary))
        return [s for _, s in sorted(found, key=lambda f: (f[0], f[1].id), reverse=True)]

    def rename(self, conversation_id: str, name: str) -> Conversation:
        """Give a conversation a name (an empty one restores the first-message title)."""
        conversation = self.load(conversation_id)
        conversation.name = name.strip()
        self.save(conversation)
        return conversation

    def delete(self, conversation_id: str) -> None:
        """Remove a conversation's file (a missing one is already deleted)."""
        self.path_of(conversation_id).unlink(missing_ok=True)

    def latest(self) -> Conversation | None:
        """The conversation written last (what ``--resume`` reopens), or None."""
        if not self.directory.is_dir():
            return None
        paths = sorted(self.directory.glob("*.json"), key=lambda p: (p.stat().st_mtime, p.stem))
        return self.load(paths[-1].stem) if paths else None
