"""Box plots of makespan ratio to HEFT, one PNG per workflow family (matplotlib, Agg)."""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path

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
