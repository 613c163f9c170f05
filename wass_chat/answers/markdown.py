"""Computed sentences as Markdown text: what every answer's verdict line is printed through."""

from __future__ import annotations

import re

_MARKDOWN = re.compile(r"([\\`*_\[\]<>#|~!])")


def plain(text: str) -> str:
    """A computed sentence as Markdown text: one line, every Markdown character escaped.

    Verdicts carry no user-chosen strings (job names and comments stay in the evidence, as
    literals) except a node's Reason, which an admin sets; escaping keeps it, and node,
    partition and user names, from being read as Markdown.
    """
    return _MARKDOWN.sub(r"\\\1", " ".join(str(text).split()))
