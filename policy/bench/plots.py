"""The bench's plots (matplotlib, Agg): box plots of makespan ratio to HEFT, one PNG per workflow
family; and ``bench --arrivals``' curves of makespan, speedup and SLR against the load."""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path
from typing import Any

from policy.bench.runner import InstanceOutcome


def family_box_plots(outcomes: list[InstanceOutcome]) -> dict[str, bytes]:
    """Family -> PNG bytes: per scheduler, the distribution of makespan / HEFT's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heft = {r.instance: r.makespan for o in outcomes for r in o.records if r.scheduler == "heft"}
    data: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for o in outcomes:
        for r in o.records:
            if r.instance in heft:
                data[r.family][r.scheduler].append(r.makespan / heft[r.instance])
    images = {}
    for family, per_scheduler in data.items():
        names = list(per_scheduler)
        fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(names)), 4.0))
        ax.boxplot([per_scheduler[n] for n in names])
        ax.set_xticks(range(1, len(names) + 1), names, rotation=45, ha="right")
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_ylabel("makespan / HEFT")
        ax.set_title(f"{family}: makespan relative to HEFT")
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        plt.close(fig)
        images[family] = buffer.getvalue()
    return images


def plot_file_name(directory: Path, family: str) -> Path:
    return directory / f"{family}-makespan-ratio.png"


def arrivals_plot(summary: dict[str, Any]) -> bytes:
    """PNG: makespan, speedup and mean SLR against the number of workflows in the stream, one
    line per scheduler with its 95% interval as a band (``bench --arrivals``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by = {(row["scheduler"], row["count"]): row for row in summary["rows"]}
    counts = summary["counts"]
    labels = {"makespan": "makespan (s)", "speedup": "speedup", "slr": "mean SLR per workflow"}
    fig, axes = plt.subplots(1, 3, figsize=(15.0, 4.5))
    for ax, metric in zip(axes, labels, strict=True):
        for k, name in enumerate(summary["schedulers"]):
            xs = [c for c in counts if (name, c) in by]
            values = [by[(name, c)][metric] for c in xs]
            color = f"C{k % 10}"  # past ten lines the colours repeat: dashed, square markers
            style = "-" if k < 10 else "--"
            ax.plot(
                xs,
                [v["value"] for v in values],
                marker="o" if k < 10 else "s",
                linestyle=style,
                color=color,
                label=name,
            )
            ax.fill_between(
                xs, [v["low"] for v in values], [v["high"] for v in values], color=color, alpha=0.15
            )
        ax.set_xlabel("workflows in the stream")
        ax.set_ylabel(labels[metric])
        if metric != "speedup":
            ax.set_yscale("log")  # the Slurm-like baseline is an order of magnitude off
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Many workflows on a shared heterogeneous GPU cluster (95% CI over seeds)")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()
