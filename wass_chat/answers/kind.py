"""One answer kind as :data:`~wass_chat.answers.kinds.KINDS` holds it: the shape of its facts,
the verdict numbers derived from them, and its Markdown."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Facts = Mapping[str, Any]
"""A tool's facts as the renderings read them: a JSON-able mapping with a ``kind``."""


@dataclass(frozen=True)
class Kind:
    """One kind of answer, written by its own module of :mod:`wass_chat.answers`."""

    name: str
    """The facts' ``kind``."""
    about: str
    """What the answer tells, in one line."""
    render: Callable[[Facts], str]
    """The deterministic Markdown: the offline chat's and ``ask``'s answer, the online chat's
    when the model's text fails verification, the MCP server's answer."""
    facts: object = None
    """The TypedDict of its facts, where they are made (None: no fixed keys declared)."""
    verdict: Callable[[Facts], dict[str, Any]] | None = None
    """The verdict numbers derived from the facts and added to them (``facts["verdict"]``) so
    the model sees them and the verifier checks them; None when the kind has none, or its
    verdict is a sentence made with the facts."""
