"""Gantt charts and JSON traces of a simulated run.

Each node is a band as tall as its core count; a task is drawn on the cores it reserved
(assigned lowest-free-first in start order, which is how the run could have pinned them).
Formats: PNG or SVG through matplotlib, a self-contained Plotly HTML page (plotly.js embedded, no
CDN, so it opens offline), and a JSON trace of every task and transfer.
"""

from __future__ import annotations

import heapq
import io
from pathlib import Path
from typing import Any

from sim.model import Platform, Workflow
from sim.schedule import SimResult

GANTT_SUFFIXES = (".png", ".svg", ".html")


def trace(
    result: SimResult, workflow: Workflow | None = None, platform: Platform | None = None
) -> dict[str, Any]:
    """The run as JSON-ready data: summary fields, every task record and every transfer.

    Given the workflow and platform, tasks also carry their ``cores`` and a ``nodes`` list gives
    each node's cores (the layout the TUI's Gantt view reads).
    """
    data: dict[str, Any] = {
        "workflow": result.workflow,
        "platform": result.platform,
        "scheduler": result.scheduler,
        "network_model": result.network_model,
        "backend": result.backend,
        "makespan": result.makespan,
        "energy_joules": result.energy,
        "tasks": [
            {"task": r.task, "node": r.node, "ready": r.ready, "start": r.start, "end": r.end}
            for r in result.tasks
        ],
        "transfers": [
            {
                "file": t.file,
                "size": t.size,
                "source": t.source,
                "destination": t.destination,
                "start": t.start,
                "end": t.end,
            }
            for t in result.transfers
        ],
    }
    if workflow is not None:
        for entry in data["tasks"]:
            entry["cores"] = workflow.task_by_id[entry["task"]].cores
    if platform is not None:
        data["nodes"] = [{"name": n.name, "cores": n.cores} for n in platform.nodes]
    return data


def core_lanes(result: SimResult, workflow: Workflow, platform: Platform) -> dict[str, list[int]]:
    """Task -> the core indices (within its node) it occupied, lowest free first."""
    free: dict[str, list[int]] = {n.name: list(range(n.cores)) for n in platform.nodes}
    releases: list[tuple[float, int, str, list[int]]] = []
    lanes: dict[str, list[int]] = {}
    for k, r in enumerate(sorted(result.tasks, key=lambda r: r.start)):
        while releases and releases[0][0] <= r.start:
            _, _, node, cores = heapq.heappop(releases)
            free[node].extend(cores)
            free[node].sort()
        want = workflow.task_by_id[r.task].cores
        taken, free[r.node] = free[r.node][:want], free[r.node][want:]
        lanes[r.task] = taken
        heapq.heappush(releases, (r.end, k, r.node, taken))
    return lanes


def _bars(
    result: SimResult, workflow: Workflow, platform: Platform
) -> tuple[list[tuple[str, str, float, float, float]], list[tuple[str, float]]]:
    """(task, category, y, start, duration) per reserved core, and (node label, y) ticks."""
    base: dict[str, float] = {}
    ticks = []
    y = 0.0
    for n in platform.nodes:
        base[n.name] = y
        ticks.append((n.name, y + n.cores / 2))
        y += n.cores + 1
    lanes = core_lanes(result, workflow, platform)
    bars = []
    for r in result.tasks:
        task = workflow.task_by_id[r.task]
        category = task.category or task.name or r.task
        for core in lanes[r.task]:
            bars.append((r.task, category, base[r.node] + core, r.start, r.end - r.start))
    return bars, ticks


def gantt_image(
    result: SimResult, workflow: Workflow, platform: Platform, image_format: str = "png"
) -> bytes:
    """The Gantt chart as PNG or SVG bytes (matplotlib, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars, ticks = _bars(result, workflow, platform)
    categories = sorted({b[1] for b in bars})
    palette = plt.get_cmap("tab20")
    colour = {c: palette(i % 20) for i, c in enumerate(categories)}
    height = max(3.0, min(30.0, 0.12 * (ticks[-1][1] * 2 if ticks else 10)))
    fig, ax = plt.subplots(figsize=(12, height))
    for _, category, y, start, duration in bars:
        ax.barh(y, duration, left=start, height=0.9, color=colour[category], linewidth=0)
    ax.set_yticks([t[1] for t in ticks], [t[0] for t in ticks])
    ax.invert_yaxis()
    ax.set_xlabel("time (s)")
    ax.set_title(
        f"{result.workflow} on {result.platform}: {result.scheduler}, "
        f"{result.network_model} network, makespan {result.makespan:.1f} s"
    )
    if len(categories) <= 20:
        handles = [plt.Rectangle((0, 0), 1, 1, color=colour[c]) for c in categories]
        ax.legend(handles, categories, loc="upper right", fontsize="small")
    buffer = io.BytesIO()
    fig.savefig(buffer, format=image_format, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def gantt_html(result: SimResult, workflow: Workflow, platform: Platform) -> str:
    """A self-contained interactive Plotly page (plotly.js embedded)."""
    import plotly.graph_objects as go

    bars, ticks = _bars(result, workflow, platform)
    fig = go.Figure()
    for category in sorted({b[1] for b in bars}):
        mine = [b for b in bars if b[1] == category]
        fig.add_trace(
            go.Bar(
                name=category,
                orientation="h",
                y=[b[2] for b in mine],
                x=[b[4] for b in mine],
                base=[b[3] for b in mine],
                text=[b[0] for b in mine],
                hovertemplate="%{text}<br>start %{base:.3f} s<br>duration %{x:.3f} s",
            )
        )
    fig.update_layout(
        title=f"{result.workflow} on {result.platform}: {result.scheduler} "
        f"({result.network_model}), makespan {result.makespan:.1f} s",
        barmode="overlay",
        xaxis_title="time (s)",
        yaxis={
            "tickvals": [t[1] for t in ticks],
            "ticktext": [t[0] for t in ticks],
            "autorange": "reversed",
        },
        bargap=0.05,
    )
    return str(fig.to_html(include_plotlyjs=True, full_html=True))


def render_gantt(
    result: SimResult, workflow: Workflow, platform: Platform, path: Path
) -> str | bytes:
    """The chart for ``path``'s suffix (.png, .svg or .html), ready to write."""
    suffix = path.suffix.lower()
    if suffix == ".html":
        return gantt_html(result, workflow, platform)
    if suffix in (".png", ".svg"):
        return gantt_image(result, workflow, platform, suffix[1:])
    raise ValueError(f"unsupported Gantt format {suffix!r} (use {', '.join(GANTT_SUFFIXES)})")
