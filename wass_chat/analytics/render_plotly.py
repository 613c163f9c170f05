"""ChartSpec -> a Plotly figure as plain JSON data (``{"data": [...], "layout": {...}}``).

The report draws every figure with one shared script (``Plotly.newPlot`` over a list of these
dicts), so each chart costs only its numbers: no per-chart template or script, values rounded
to four significant digits, and time series longer than :data:`MAX_LINE_POINTS` thinned to
that many points (every k-th bucket; the chart's note says so).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from wass_chat.analytics.charts import ChartSpec, Trace

MAX_LINE_POINTS = 400
_FONT = {"family": "system-ui, sans-serif", "size": 12}


def figure_dict(spec: ChartSpec) -> dict[str, Any]:
    """The figure for ``spec`` as JSON-ready data for ``Plotly.newPlot(div, data, layout)``."""
    title = spec.title + (f"<br><sup>{spec.note}</sup>" if spec.note else "")
    layout: dict[str, Any] = {
        "title": {"text": title, "font": {"size": 15}},
        "barmode": "stack" if spec.stacked else "group",
        "xaxis": _axis(spec.x_label, spec.log_x),
        "yaxis": _axis(spec.y_label, spec.log_y),
        "height": 420,
        "margin": {"l": 70, "r": 20, "t": 70, "b": 90},
        "legend": {"orientation": "h", "y": -0.3},
        "font": _FONT,
        "plot_bgcolor": "white",
    }
    if any(t.x and isinstance(t.x[0], datetime) for t in spec.traces):
        layout["xaxis"]["type"] = "date"
        layout["xaxis"]["nticks"] = 8  # date labels never overlap
    if spec.y_from_zero and not spec.log_y:
        layout["yaxis"]["rangemode"] = "tozero"
    if spec.y_max is not None and not spec.log_y:
        layout["yaxis"]["range"] = [0, spec.y_max * 1.02]
    return {"data": [_trace(t) for t in spec.traces], "layout": layout}


def _axis(title: str, log: bool) -> dict[str, Any]:
    axis: dict[str, Any] = {
        "title": {"text": title},
        "gridcolor": "#e5e5e5",
        "zerolinecolor": "#999",
        "automargin": True,
    }
    if log:
        # Ticks only at powers of ten, printed in full ("0.01", "1", "100"): Plotly's default
        # log ticks ("2", "5" between decades) read as linear values.
        axis |= {"type": "log", "dtick": 1, "exponentformat": "none", "tickformat": "~g"}
    return axis


def thin(trace: Trace, limit: int = MAX_LINE_POINTS) -> Trace:
    """Every k-th point of a long line (the last one always kept), at most ``limit`` points."""
    if trace.kind != "line" or len(trace.x) <= limit:
        return trace
    step = math.ceil(len(trace.x) / limit)
    keep = list(range(0, len(trace.x), step))
    if keep[-1] != len(trace.x) - 1:
        keep.append(len(trace.x) - 1)
    return Trace(
        trace.name,
        tuple(trace.x[i] for i in keep),
        tuple(trace.y[i] for i in keep),
        trace.kind,
        trace.colour,
        trace.dash,
    )


def _value(v: object) -> object:
    if isinstance(v, datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, float):
        return None if math.isnan(v) else float(f"{v:.4g}")
    return v


def _trace(trace: Trace) -> dict[str, Any]:
    trace = thin(trace)
    x = [_value(v) for v in trace.x]
    y = [_value(v) for v in trace.y]
    if trace.kind == "bar":
        return {
            "type": "bar",
            "name": trace.name,
            "x": x,
            "y": y,
            "marker": {"color": trace.colour},
        }
    if trace.kind == "line":
        line = {"color": trace.colour, "dash": "dash" if trace.dash else "solid"}
        mode = "lines" if len(x) > 1 else "lines+markers"  # a lone point needs a marker
        return {"type": "scatter", "name": trace.name, "x": x, "y": y, "mode": mode, "line": line}
    marker = {"color": trace.colour, "size": 4, "opacity": 0.5}
    return {
        "type": "scattergl" if len(x) > 5000 else "scatter",
        "name": trace.name,
        "x": x,
        "y": y,
        "mode": "markers",
        "marker": marker,
    }
