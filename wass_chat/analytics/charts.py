"""Backend-neutral chart descriptions: the same spec renders as Plotly (HTML) and matplotlib (PNG).

A :class:`ChartSpec` holds only aggregated numbers (at most a few thousand points), its axis
labels, its insight sentence and, for sampled scatter plots, a note stating the sample size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

TraceKind = Literal["bar", "line", "scatter"]
STATE_COLOURS = {
    "COMPLETED": "#2ca02c",
    "FAILED": "#d62728",
    "CANCELLED": "#7f7f7f",
    "TIMEOUT": "#ff7f0e",
    "OUT_OF_MEMORY": "#9467bd",
    "NODE_FAIL": "#8c564b",
    "PREEMPTED": "#e377c2",
    "RUNNING": "#1f77b4",
    "PENDING": "#17becf",
    "BOOT_FAIL": "#bcbd22",
    "DEADLINE": "#393b79",
    "REQUEUED": "#637939",
    "SUSPENDED": "#843c39",
}
BACKFILL_COLOUR = "#ff7f0e"
MAIN_COLOUR = "#1f77b4"


@dataclass(frozen=True)
class Trace:
    """One series: x and y values (strings, numbers, datetimes) drawn as bars, line or points."""

    name: str
    x: tuple[object, ...]
    y: tuple[float, ...]
    kind: TraceKind = "bar"
    colour: str | None = None
    dash: bool = False


@dataclass(frozen=True)
class ChartSpec:
    """A chart: id (HTML anchor), title, axes, traces, insight and an optional sampling note."""

    id: str
    title: str
    x_label: str
    y_label: str
    traces: tuple[Trace, ...]
    insight: str
    note: str = ""
    stacked: bool = False
    log_x: bool = False
    log_y: bool = False
    horizontal: bool = False
    y_from_zero: bool = False
    """Start the value axis at 0 (rates and shares: an axis from 3% exaggerates changes)."""
    y_max: float | None = None
    """Fix the top of the value axis (100 for percentages of a capacity)."""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def points(self) -> int:
        return sum(len(t.x) for t in self.traces)


def state_colour(state: str) -> str:
    return STATE_COLOURS.get(state, "#aaaaaa")
