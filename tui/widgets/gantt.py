"""Gantt chart and utilisation bars of a :class:`~tui.gantt_data.GanttTrace`, in Unicode blocks.

One lane per node (split into rows when the node runs several tasks at once), task bars coloured
in turn and labelled when they are wide enough, a time axis under the lanes and each node's
utilisation at the end of its lane. Drawing is a pure function of the trace and the width, so
the widget redraws on resize and snapshot tests are deterministic.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from tui.gantt_data import GanttTrace, format_seconds, node_utilisation, pack_lanes, time_unit

BAR_COLOURS = ("#3d8fd1", "#e0a030", "#4caf7a", "#c0504d", "#8e6cc9", "#2fb5b5")
"""Mid-tone colours that read on both the light and the dark theme."""
LABEL_WIDTH_MAX = 12
UTILISATION_WIDTH = 5  # " 100%"


def _column(time: float, makespan: float, width: int) -> int:
    return 0 if makespan <= 0 else min(int(time / makespan * width), width)


def draw_gantt(trace: GanttTrace, width: int, max_rows_per_node: int | None = None) -> Text:
    """The chart as text ``width`` cells wide (rows past ``max_rows_per_node`` are summarised)."""
    label_width = min(max((len(n) for n in trace.nodes), default=4), LABEL_WIDTH_MAX)
    chart_width = max(width - label_width - 2 - UTILISATION_WIDTH, 10)
    utilisation = node_utilisation(trace)
    text = Text(no_wrap=True, overflow="crop")
    colour_of = {
        bar.task: BAR_COLOURS[i % len(BAR_COLOURS)]
        for i, bar in enumerate(sorted(trace.bars, key=lambda b: (b.start, b.node, b.task)))
    }
    for node in trace.nodes:
        rows = pack_lanes(trace.bars_on(node))
        hidden = 0
        if max_rows_per_node is not None and len(rows) > max_rows_per_node:
            hidden = sum(len(r) for r in rows[max_rows_per_node:])
            rows = rows[:max_rows_per_node]
        for index, row in enumerate(rows or [[]]):
            label = node[:label_width] if index == 0 else ""
            text.append(f"{label:<{label_width}}", style="bold" if index == 0 else "")
            text.append("│", style="dim")
            cells = Text(" " * chart_width)
            for bar in row:
                start = _column(bar.start, trace.makespan, chart_width)
                end = max(_column(bar.end, trace.makespan, chart_width), start + 1)
                end = min(end, chart_width)
                if start >= chart_width:
                    continue
                span = end - start
                name = bar.task if len(bar.task) < span else ""
                body = (name + " " * span)[:span] if name else "█" * span
                style = f"black on {colour_of[bar.task]}" if name else colour_of[bar.task]
                cells = cells[:start] + Text(body, style=style) + cells[end:]
            text.append_text(cells)
            text.append("│", style="dim")
            if index == 0:
                text.append(f"{utilisation[node]:>4.0%}", style="bold")
            text.append("\n")
        if hidden:
            text.append(" " * label_width + f"│ +{hidden} more tasks in parallel\n", style="dim")
    text.append_text(_axis(trace.makespan, label_width, chart_width))
    return text


def _axis(makespan: float, label_width: int, chart_width: int) -> Text:
    """``└┬─────┬─────┬┘`` with time labels under the ticks, all in the makespan's unit."""
    ticks = max(min(chart_width // 14, 6), 1)
    unit = time_unit(makespan)
    positions = [round(i * (chart_width - 1) / ticks) for i in range(ticks + 1)]
    line = ["─"] * chart_width
    for p in positions:
        line[p] = "┬"
    labels = [" "] * (chart_width + 8)
    for i, p in enumerate(positions):
        caption = format_seconds(makespan * i / ticks, unit) if i else "0"
        at = min(p, len(labels) - len(caption))
        if i == ticks:
            at = max(p - len(caption) + 1, 0)
        if all(c == " " for c in labels[max(at - 1, 0) : at + len(caption) + 1]):
            labels[at : at + len(caption)] = caption
    pad = " " * label_width
    return Text(f"{pad}└{''.join(line)}┘\n{pad} {''.join(labels).rstrip()}", style="dim")


def draw_utilisation(trace: GanttTrace, width: int) -> Text:
    """One bar per node: ``node-1 ██████░░░░  63%``."""
    label_width = min(max((len(n) for n in trace.nodes), default=4), LABEL_WIDTH_MAX)
    bar_width = max(width - label_width - 2 - UTILISATION_WIDTH, 5)
    text = Text(no_wrap=True, overflow="crop")
    for index, (node, used) in enumerate(node_utilisation(trace).items()):
        filled = round(used * bar_width)
        text.append(f"{node[:label_width]:<{label_width}} ", style="bold")
        text.append("█" * filled, style=BAR_COLOURS[index % len(BAR_COLOURS)])
        text.append("░" * (bar_width - filled), style="dim")
        text.append(f" {used:>4.0%}\n")
    return text


class GanttChart(Widget):
    """Draws the current trace; shows a hint when there is none yet."""

    DEFAULT_CSS = """
    GanttChart { height: auto; }
    """
    trace: reactive[GanttTrace | None] = reactive(None, layout=True)

    def __init__(self, max_rows_per_node: int | None = None, **kwargs: str | None) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.max_rows_per_node = max_rows_per_node

    def render(self) -> Text:
        if self.trace is None:
            return Text("No schedule yet: try /simulate", style="dim italic")
        return draw_gantt(self.trace, self.content_size.width or 60, self.max_rows_per_node)


class UtilisationBars(Widget):
    """Per-node utilisation of the current trace."""

    DEFAULT_CSS = """
    UtilisationBars { height: auto; }
    """
    trace: reactive[GanttTrace | None] = reactive(None, layout=True)

    def render(self) -> Text:
        if self.trace is None:
            return Text("")
        return draw_utilisation(self.trace, self.content_size.width or 60)
