"""Reading retrieved cases as the agent's tools return them (plain JSON mappings).

The knowledge base's case records reach the TUI only through ``ToolResult.data["cases"]``; these
functions tolerate the few spellings a tool may use. Nothing here imports Textual.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

SUMMARY_KEYS = (
    "workflow",
    "platform",
    "scheduler",
    "similarity",
    "makespan",
    "makespan_s",
    "outcome",
    "source",
    "tasks",
    "nodes",
)
_NOT_EXTRA = (*SUMMARY_KEYS, "placements", "assignment", "summary", "id", "case_id", "run_id")


def case_id(case: Mapping[str, Any]) -> str:
    """A case's id, whichever key the tool used (``id``, ``case_id`` or ``run_id``)."""
    return str(case.get("id") or case.get("case_id") or case.get("run_id") or "?")


def case_makespan(case: Mapping[str, Any]) -> float | None:
    """The case's makespan in seconds (``makespan_s`` or ``makespan``), if it has one."""
    value = case.get("makespan_s", case.get("makespan"))
    return float(value) if isinstance(value, int | float) else None


def case_placements(case: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(task, node) pairs from ``placements`` given as a mapping or a list of records."""
    raw = case.get("placements") or case.get("assignment") or {}
    if isinstance(raw, Mapping):
        return [(str(t), str(n)) for t, n in raw.items()]
    if isinstance(raw, list):
        return [
            (str(p.get("task", "?")), str(p.get("node", "?")))
            for p in raw
            if isinstance(p, Mapping)
        ]
    return []


def case_summary_lines(case: Mapping[str, Any]) -> list[str]:
    """``key: value`` lines for the summary fields the case has, then the rest, then its text."""
    lines = []
    for key in SUMMARY_KEYS:
        if key in case and not isinstance(case[key], dict | list):
            value = case[key]
            shown = f"{value:.3g}" if isinstance(value, float) else str(value)
            lines.append(f"{key}: {shown}")
    extra = {k: v for k, v in case.items() if k not in _NOT_EXTRA}
    if extra:
        lines.append(json.dumps(extra, default=str, sort_keys=True))
    if case.get("summary"):
        lines.append(str(case["summary"]))
    return lines
