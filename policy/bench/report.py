"""Turning run records into the bench's summary: aggregates, per-family tables, paper layout.

``summarize`` returns plain JSON-ready data; ``to_markdown`` renders it. The paper layout
(WASS-RAG, Tables 2/3) puts Traditional Slurm, HEFT, the WASS heuristic, the DRL agent without
RAG and WASS-RAG side by side per workflow family with improvements over Traditional Slurm;
the learned columns read "n/a" until schedulers named :data:`PAPER_COLUMNS` are registered.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from policy.bench.runner import InstanceOutcome, RunRecord
from policy.bench.stats import (
    best_per_instance,
    geometric_mean_bootstrap_ci,
    improvement_percent,
    ratios,
    win_tie_loss,
)

REFERENCE = "heft"
PAPER_COLUMNS: tuple[tuple[str, str], ...] = (
    ("slurm", "Traditional Slurm"),
    ("heft", "HEFT"),
    ("wass", "WASS heuristic"),
    ("policy-norag", "DRL without RAG"),
    ("policy", "WASS-RAG"),
)
"""(registered scheduler name, column title) of the paper's Tables 2 and 3."""


def _by_scheduler(records: list[RunRecord]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = defaultdict(dict)
    for r in records:
        table[r.scheduler][r.instance] = r.makespan
    return dict(table)


def _geomean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values)))) if values else math.nan


def summarize(outcomes: list[InstanceOutcome]) -> dict[str, Any]:
    """Aggregates over all instances and per workflow family (see the module docstring)."""
    records = [r for o in outcomes for r in o.records]
    schedulers = list(dict.fromkeys(r.scheduler for r in records))
    makespans = _by_scheduler(records)
    best = best_per_instance(makespans)
    reference = makespans.get(REFERENCE, {})
    overall = {}
    for name in schedulers:
        mine = [r for r in records if r.scheduler == name]
        overall[name] = {
            "ratio_to_heft": geometric_mean_bootstrap_ci(
                ratios(makespans[name], reference)
            ).as_dict(),
            "ratio_to_best": geometric_mean_bootstrap_ci(ratios(makespans[name], best)).as_dict(),
            "geomean_makespan": _geomean([r.makespan for r in mine]),
            "mean_slr": float(np.mean([r.slr for r in mine])),
            "mean_speedup": float(np.mean([r.speedup for r in mine])),
            "mean_energy": float(np.mean([r.energy for r in mine])),
            "mean_cross_node_bytes": float(np.mean([r.cross_node_bytes for r in mine])),
            "vs_heft": win_tie_loss(makespans[name], reference).as_dict(),
            "best_count": sum(
                math.isclose(v, best[i], rel_tol=1e-6) for i, v in makespans[name].items()
            ),
        }
    families = list(dict.fromkeys(r.family for r in records))
    per_family: dict[str, dict[str, Any]] = {}
    for family in families:
        instances = {r.instance for r in records if r.family == family}
        per_family[family] = {
            name: {
                "geomean_makespan": _geomean(
                    [v for i, v in makespans[name].items() if i in instances]
                ),
                "ratio_to_heft": _geomean(
                    ratios({i: v for i, v in makespans[name].items() if i in instances}, reference)
                ),
            }
            for name in schedulers
        }
    return {
        "schedulers": schedulers,
        "instances": len(outcomes),
        "overall": overall,
        "per_family": per_family,
        "paper_table": paper_table(per_family),
    }


def paper_table(per_family: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows per family: geometric-mean makespan per paper column, improvement over Slurm."""
    rows = []
    for family, cells in per_family.items():
        slurm = cells.get("slurm", {}).get("geomean_makespan")
        row: dict[str, Any] = {"family": family}
        for name, title in PAPER_COLUMNS:
            value = cells.get(name, {}).get("geomean_makespan")
            row[title] = value
            if value is not None and slurm and name != "slurm":
                row[f"{title} vs Slurm %"] = improvement_percent(slurm, value)
        rows.append(row)
    return rows


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def to_markdown(summary: dict[str, Any], title: str = "Benchmark") -> str:
    """The summary as Markdown: overall table, per-family ratios to HEFT, paper layout."""
    lines = [f"# {title}", "", f"{summary['instances']} instances.", ""]
    lines += [
        "| scheduler | makespan / HEFT (95% CI) | / best | SLR | speedup | energy (MJ) "
        "| cross-node GB | W/T/L vs HEFT | best on |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in summary["schedulers"]:
        o = summary["overall"][name]
        r, b, wtl = o["ratio_to_heft"], o["ratio_to_best"], o["vs_heft"]
        lines.append(
            f"| {name} | {_fmt(r['value'])} ({_fmt(r['low'])}-{_fmt(r['high'])}) "
            f"| {_fmt(b['value'])} | {_fmt(o['mean_slr'], 2)} | {_fmt(o['mean_speedup'], 2)} "
            f"| {_fmt(o['mean_energy'] / 1e6, 2)} | {_fmt(o['mean_cross_node_bytes'] / 1e9, 2)} "
            f"| {wtl['wins']}/{wtl['ties']}/{wtl['losses']} | {o['best_count']} |"
        )
    names = summary["schedulers"]
    lines += ["", "## Geometric-mean makespan ratio to HEFT per family", ""]
    lines += ["| family | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for family, cells in summary["per_family"].items():
        values = " | ".join(_fmt(cells[n]["ratio_to_heft"]) for n in names)
        lines.append(f"| {family} | {values} |")
    lines += ["", "## Paper layout (WASS-RAG Tables 2/3): geometric-mean makespan (s)", ""]
    titles = [t for _, t in PAPER_COLUMNS]
    lines += ["| workflow | " + " | ".join(titles) + " |", "|---" * (len(titles) + 1) + "|"]
    for row in summary["paper_table"]:
        cells = []
        for title in titles:
            cell = _fmt(row.get(title), 1)
            gain = row.get(f"{title} vs Slurm %")
            if gain is not None and cell != "n/a":
                cell += f" ({gain:+.1f}%)"
            cells.append(cell)
        lines.append(f"| {row['family']} | " + " | ".join(cells) + " |")
    lines += ["", "Percentages: makespan reduction relative to Traditional Slurm.", ""]
    return "\n".join(lines)


def gap_markdown(optimality: dict[str, Any]) -> str:
    """The optimality study (the document's ``optimality`` entry) as a Markdown section."""
    lines = [
        "",
        "## Optimality gap (CP-SAT, ideal network)",
        "",
        f"{optimality['instances']} random instances of 6-10 tasks on 3 heterogeneous one-core "
        f"nodes; {optimality['proven_optimal']} proven optimal.",
        "",
        "| scheduler | mean gap |",
        "|---|---|",
    ]
    for name, gap in optimality["mean_gap"].items():
        lines.append(f"| {name} | {100 * gap:.2f}% |")
    return "\n".join(lines) + "\n"
