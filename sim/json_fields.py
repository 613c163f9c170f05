"""Typed access to parsed JSON/YAML documents that records problems instead of raising.

Readers of user files (WfFormat instances, platform descriptions) walk a document once and
must report *every* problem, so a missing or mistyped field becomes a line in
``FieldChecker.problems`` and a ``None`` result; the reader carries on and raises one
:class:`~sim.errors.InputError` at the end.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, Literal

Kind = Literal["str", "number", "int", "object", "list", "str-list", "bool"]

_KIND_WORDS: dict[Kind, str] = {
    "str": "a string",
    "number": "a finite number",
    "int": "an integer",
    "object": "an object",
    "list": "a list",
    "str-list": "a list of strings",
    "bool": "true or false",
}


def conforms(value: object, kind: Kind) -> bool:
    """Whether ``value`` (as parsed from JSON/YAML) is of ``kind``; booleans are not numbers."""
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind in ("number", "int"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if not math.isfinite(value):
            return False
        return kind == "number" or float(value).is_integer()
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "list":
        return isinstance(value, list)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


class FieldChecker:
    """Collects problems while reading fields; each problem names where it was found."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, problem: str) -> None:
        self.problems.append(problem)

    def get(
        self,
        obj: Mapping[str, Any],
        key: str,
        kind: Kind,
        where: str,
        *,
        required: bool = True,
        default: Any = None,
    ) -> Any:
        """``obj[key]`` when present and of ``kind``; otherwise record a problem (if required
        or mistyped) and return ``default``. Integers come back as ``int``."""
        if key not in obj or obj[key] is None:
            if required:
                self.add(f"{where}: missing {key!r}")
            return default
        value = obj[key]
        if not conforms(value, kind):
            self.add(f"{where}: {key!r} must be {_KIND_WORDS[kind]}, got {_shown(value)}")
            return default
        if kind == "int":
            return int(value)
        return value

    def objects(self, items: list[Any], label: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
        """(index, entry) for each entry of ``items`` that is an object; the others are
        recorded as problems ("<label> #<index>: must be an object")."""
        for index, item in enumerate(items):
            if isinstance(item, Mapping):
                yield index, item
            else:
                self.add(f"{label} #{index}: must be an object")

    def unknown_keys(self, obj: Mapping[str, Any], allowed: set[str], where: str) -> None:
        """Record each key of ``obj`` outside ``allowed`` (typos must not pass silently)."""
        for key in obj:
            if key not in allowed:
                self.add(f"{where}: unknown key {key!r} (known: {', '.join(sorted(allowed))})")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
