"""Schedules as the TUI draws them: a small JSON trace, its reader, and per-node utilisation.

The agent's simulate and compare tools put the trace of what they simulated under
``ToolResult.data["gantt"]`` (built by :func:`sim.gantt.trace`: the producer owns its data, the
app never simulates again to draw). The TUI draws any mapping of this shape::

    {"workflow": "montage", "platform": "demo", "scheduler": "heft", "makespan": 812.5,
     "tasks": [{"task": "t1", "node": "n1", "start": 0.0, "end": 12.5, "cores": 1}, ...],
     "nodes": [{"name": "n1", "cores": 8}, ...]}

``nodes``, ``cores`` and the header fields are optional. Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sim.errors import InputError


class GanttTraceError(InputError):
    """A Gantt trace that cannot be drawn (missing fields, negative durations...)."""

    kind = "gantt trace"


@dataclass(frozen=True, slots=True)
class GanttBar:
    """One task's execution interval on one node."""

    task: str
    node: str
    start: float
    end: float
    cores: int = 1

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class GanttTrace:
    """A whole schedule: bars, the node order to draw lanes in, and the cores of each node."""

    bars: tuple[GanttBar, ...]
    nodes: tuple[str, ...]
    node_cores: Mapping[str, int]
    makespan: float
    workflow: str = ""
    platform: str = ""
    scheduler: str = ""

    @property
    def title(self) -> str:
        """One line naming what was simulated, e.g. ``montage on demo · heft · 812.5 s``."""
        parts = [p for p in (self.workflow, self.platform and f"on {self.platform}") if p]
        head = " ".join(parts) or "schedule"
        scheduler = f" · {self.scheduler}" if self.scheduler else ""
        return f"{head}{scheduler} · makespan {format_seconds(self.makespan)}"

    def bars_on(self, node: str) -> tuple[GanttBar, ...]:
        """The bars of ``node`` sorted by start time."""
        return tuple(sorted((b for b in self.bars if b.node == node), key=lambda b: b.start))

    def to_json(self) -> dict[str, Any]:
        """The JSON form read by :func:`trace_from_json` (used to persist conversations)."""
        return {
            "workflow": self.workflow,
            "platform": self.platform,
            "scheduler": self.scheduler,
            "makespan": self.makespan,
            "tasks": [
                {"task": b.task, "node": b.node, "start": b.start, "end": b.end, "cores": b.cores}
                for b in self.bars
            ],
            "nodes": [{"name": n, "cores": self.node_cores.get(n, 0)} for n in self.nodes],
        }


def time_unit(seconds: float) -> tuple[str, float]:
    """The unit a duration reads best in (``s`` under 2 min, ``min`` under 2 h, else ``h``)
    and its size in seconds. An axis picks it once, from its largest value."""
    if seconds < 120:
        return "s", 1.0
    if seconds < 7200:
        return "min", 60.0
    return "h", 3600.0


def format_seconds(seconds: float, unit: tuple[str, float] | None = None) -> str:
    """Compact duration for axes and titles: ``42.0 s``, ``12.5 min``, ``3.2 h`` (in ``unit``
    when given, so every label of one axis shares it)."""
    name, scale = unit or time_unit(seconds)
    return f"{seconds / scale:.1f} {name}"


def trace_from_json(data: Mapping[str, Any]) -> GanttTrace:
    """Read a trace, reporting every malformed task at once (:class:`GanttTraceError`)."""
    problems: list[str] = []
    raw_tasks = data.get("tasks")
    if not isinstance(raw_tasks, list):
        raise GanttTraceError("gantt", ["'tasks' must be a list"])
    bars: list[GanttBar] = []
    for index, raw in enumerate(raw_tasks):
        try:
            bar = GanttBar(
                task=str(raw["task"]),
                node=str(raw["node"]),
                start=float(raw["start"]),
                end=float(raw["end"]),
                cores=int(raw.get("cores", 1) or 1),
            )
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"task #{index}: {type(exc).__name__}: {exc}")
            continue
        if bar.end < bar.start:
            problems.append(f"task {bar.task!r} ends before it starts")
        bars.append(bar)
    if problems:
        raise GanttTraceError("gantt", problems)
    node_cores: dict[str, int] = {}
    for raw_node in data.get("nodes") or []:
        if isinstance(raw_node, Mapping) and "name" in raw_node:
            node_cores[str(raw_node["name"])] = int(raw_node.get("cores") or 0)
    order = list(node_cores)
    order += sorted({b.node for b in bars} - set(order))
    makespan = float(data.get("makespan") or max((b.end for b in bars), default=0.0))
    return GanttTrace(
        bars=tuple(bars),
        nodes=tuple(order),
        node_cores={n: c for n, c in node_cores.items() if c > 0},
        makespan=makespan,
        workflow=str(data.get("workflow") or ""),
        platform=str(data.get("platform") or ""),
        scheduler=str(data.get("scheduler") or ""),
    )


def node_utilisation(trace: GanttTrace) -> dict[str, float]:
    """Fraction of ``cores x makespan`` each node spent busy, in [0, 1].

    When a node's core count is unknown, the fraction of the makespan during which at least one
    task ran on it (the union of its intervals) is used instead.
    """
    if trace.makespan <= 0:
        return dict.fromkeys(trace.nodes, 0.0)
    result: dict[str, float] = {}
    for node in trace.nodes:
        bars = trace.bars_on(node)
        cores = trace.node_cores.get(node)
        if cores:
            busy = sum(b.duration * b.cores for b in bars) / (cores * trace.makespan)
        else:
            busy = _covered_time(bars) / trace.makespan
        result[node] = min(busy, 1.0)
    return result


def _covered_time(bars: tuple[GanttBar, ...]) -> float:
    """Length of the union of the intervals of ``bars`` (sorted by start)."""
    covered, reach = 0.0, float("-inf")
    for bar in bars:
        start = max(bar.start, reach)
        if bar.end > start:
            covered += bar.end - start
            reach = bar.end
    return covered


def pack_lanes(bars: tuple[GanttBar, ...]) -> list[list[GanttBar]]:
    """Split one node's bars (sorted by start) into rows where no two bars overlap.

    Greedy first-fit: each bar goes on the first row that is free at its start, so a node running
    k tasks at once needs k rows.
    """
    rows: list[list[GanttBar]] = []
    for bar in bars:
        for row in rows:
            if row[-1].end <= bar.start:
                row.append(bar)
                break
        else:
            rows.append([bar])
    return rows
