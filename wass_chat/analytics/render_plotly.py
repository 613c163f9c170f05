"""ChartSpec -> an interactive Plotly figure (and an HTML fragment without plotly.js)."""

from __future__ import annotations

from typing import Any

from wass_chat.analytics.charts import ChartSpec, Trace


def plotly_figure(spec: ChartSpec) -> Any:
    """The ``plotly.graph_objects.Figure`` for ``spec``."""
    import plotly.graph_objects as go

    figure = go.Figure()
    for trace in spec.traces:
        figure.add_trace(_trace(go, trace, spec.horizontal))
    title = spec.title + (f"<br><sup>{spec.note}</sup>" if spec.note else "")
    figure.update_layout(
        title=title,
        barmode="stack" if spec.stacked else "group",
        xaxis_title=spec.x_label,
        yaxis_title=spec.y_label,
        template="plotly_white",
        height=420,
        margin={"l": 60, "r": 20, "t": 70, "b": 60},
        legend={"orientation": "h", "y": -0.2},
    )
    if spec.log_x:
        figure.update_xaxes(type="log")
    if spec.log_y:
        figure.update_yaxes(type="log")
    return figure


def plotly_fragment(spec: ChartSpec) -> str:
    """A ``<div>`` + ``<script>`` drawing ``spec``; plotly.js itself must already be on the page."""
    return str(
        plotly_figure(spec).to_html(
            full_html=False, include_plotlyjs=False, div_id=spec.id, config={"responsive": True}
        )
    )


def _trace(go: Any, trace: Trace, horizontal: bool) -> Any:
    x, y = list(trace.x), list(trace.y)
    if trace.kind == "bar":
        return go.Bar(name=trace.name, x=x, y=y, marker_color=trace.colour)
    if trace.kind == "line":
        line = {"color": trace.colour, "dash": "dash" if trace.dash else "solid"}
        mode = "lines" if len(x) > 1 else "lines+markers"  # a lone point needs a marker
        return go.Scatter(name=trace.name, x=x, y=y, mode=mode, line=line)
    marker = {"color": trace.colour, "size": 4, "opacity": 0.5}
    return go.Scatter(name=trace.name, x=x, y=y, mode="markers", marker=marker)
