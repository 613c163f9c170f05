"""The MCP server's audit log: one JSON line per tool call, appended, never rewritten.

Each line says who asked (the Unix user the server runs as, the client's name, the transport and,
over HTTP, the peer address), when (UTC, ISO 8601), which tool, with which arguments, and the
outcome (``ok``, ``error: ...``, ``refused: ...``, ``submitted ...``). A one-time approval code
is a secret the person typed, so it is written as ``"<given>"``, never in clear. The file is
created readable by its owner only, and each line is written with one ``write`` on a descriptor
opened with ``O_APPEND``, so concurrent calls never interleave within a line.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sim.atomic_files import append_private_line

SECRET_ARGUMENTS = frozenset({"approval_code"})
"""Arguments whose value is never logged (a code must not outlive its use in clear)."""


@dataclass(frozen=True)
class Caller:
    """Who made a call, as far as the server can tell."""

    user: str
    """The Unix user the server runs as: whose permissions Slurm applied."""
    client: str = ""
    """The client's own name (``clientInfo.name`` of its initialize request)."""
    transport: str = "stdio"
    peer: str = ""
    """``host:port`` of the HTTP peer (empty on stdio)."""


class AuditLog:
    """Appends one JSON object per tool call to ``path`` (JSON Lines)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def record(
        self, caller: Caller, tool: str, arguments: Mapping[str, Any], outcome: str
    ) -> dict[str, Any]:
        """Append one entry and return it."""
        entry = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "who": {
                "user": caller.user,
                "client": caller.client,
                "transport": caller.transport,
                "peer": caller.peer,
            },
            "tool": tool,
            "arguments": {
                key: ("<given>" if key in SECRET_ARGUMENTS and value else value)
                for key, value in arguments.items()
            },
            "outcome": outcome,
        }
        with self._lock:
            append_private_line(self.path, json.dumps(entry, default=str, ensure_ascii=True))
        return entry

    def entries(self) -> list[dict[str, Any]]:
        """Every entry, oldest first (an absent log has none)."""
        if not self.path.is_file():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
