"""The help text (kind ``help``), shown as it is."""

from __future__ import annotations

from wass_chat.answers.kind import Facts, Kind


def render_help(f: Facts) -> str:
    return str(f["text"])


KIND = Kind("help", "what the assistant can answer", render_help)
