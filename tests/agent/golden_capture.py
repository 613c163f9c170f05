"""A pytest plugin that records the facts every rendering is given, for the golden answers.

``pytest -p tests.agent.golden_capture tests/agent ...`` with ``WASS_GOLDEN_CAPTURE=FILE``
wraps every kind's renderer and writes, at the end of the session, the distinct facts dicts
each kind was rendered from (JSON-able ones only, a few per kind) to ``FILE``: the inputs
:mod:`tests.agent.golden_answers` renders and checks before and after a change.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

PER_KIND = 6
"""Facts kept per kind: the first of each distinct set of keys, then the first others."""
_SEEN: dict[str, list[str]] = {}


def _recording(kind: str, renderer: Callable[[Mapping[str, Any]], str]) -> Callable[..., str]:
    def record(facts: Mapping[str, Any]) -> str:
        try:
            text = json.dumps(facts, sort_keys=True)
        except (TypeError, ValueError):
            text = ""
        if text and text not in _SEEN.setdefault(kind, []):
            _SEEN[kind].append(text)
        return renderer(facts)

    return record


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("WASS_GOLDEN_CAPTURE"):
        return
    from dataclasses import replace

    from wass_chat.answers.kinds import KINDS

    for name, kind in list(KINDS.items()):
        KINDS[name] = replace(kind, render=_recording(name, kind.render))


def _chosen(texts: list[str]) -> list[Any]:
    """Up to :data:`PER_KIND` facts: one per distinct key set first, in order seen."""
    by_keys: dict[tuple[str, ...], str] = {}
    for text in texts:
        by_keys.setdefault(tuple(sorted(json.loads(text))), text)
    chosen = list(by_keys.values())[:PER_KIND]
    chosen += [t for t in texts if t not in chosen][: PER_KIND - len(chosen)]
    return [json.loads(t) for t in chosen]


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("WASS_GOLDEN_CAPTURE")
    if not target:
        return
    previous = json.loads(Path(target).read_text()) if Path(target).exists() else {}
    for kind, texts in _SEEN.items():
        known = [json.dumps(f, sort_keys=True) for f in previous.get(kind, [])]
        previous[kind] = _chosen(known + [t for t in texts if t not in known])
    Path(target).write_text(json.dumps(previous, indent=1, sort_keys=True) + "\n")
