"""Schedulers compared on a workflow (kind ``comparison``): the verdict numbers and sentence, and
the Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from wass_chat.agent.safety import literal as lit
from wass_chat.agent.units import seconds, size
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.simulation import Outcome


class ComparisonFacts(TypedDict, total=False):
    """What ``compare_schedulers`` returns (kind ``comparison``), fastest first."""

    kind: str
    workflow: str
    platform: str
    network_model: str
    results: list[Outcome]
    best: str | None
    tied_best: list[str]
    from_cases: list[str]
    """Schedulers ranked because past cases of this workflow tied or beat the requested ones."""
    cases_unavailable: str
    """Why past cases were not consulted for challengers (the knowledge base did not answer)."""
    gantt: dict[str, Any]
    run_id: str


def comparison_verdict(f: Mapping[str, Any]) -> dict[str, Any]:
    results = f.get("results") or []
    if len(results) < 2:
        return {}
    best, runner = (
        results[0],
        next((r for r in results[1:] if r["scheduler"] not in f.get("tied_best", [])), results[1]),
    )
    gap = runner["makespan_s"] - best["makespan_s"]
    worst = results[-1]
    return {
        "runner_up": runner["scheduler"],
        "runner_up_gap_s": round(gap, 3),
        "runner_up_gap_pct": round(100.0 * gap / runner["makespan_s"], 2)
        if runner["makespan_s"]
        else 0.0,
        "slowest": worst["scheduler"],
        "slowest_gap_pct": round(
            100.0 * (worst["makespan_s"] - best["makespan_s"]) / worst["makespan_s"], 2
        )
        if worst["makespan_s"]
        else 0.0,
    }


def _comparison_words(f: Mapping[str, Any], v: Mapping[str, Any]) -> str:
    results = f.get("results") or []
    if not results:
        return "No scheduler was simulated."
    best = results[0]
    tied = [s for s in f.get("tied_best", []) if s != best["scheduler"]]
    head = (
        f"{lit(best['scheduler'])} is the fastest on {lit(f['workflow'])} at "
        f"{seconds(best['makespan_s'])}"
    )
    if tied:
        head += f", tied with {', '.join(lit(s) for s in tied)}"
    if "runner_up" not in v:
        return head + "."
    return (
        f"{head}; the next best, {lit(v['runner_up'])}, is {v['runner_up_gap_s']:.1f} s "
        f"({v['runner_up_gap_pct']:.1f}%) slower."
    )


def render_comparison(f: Facts) -> str:
    lines = [
        _comparison_words(f, f.get("verdict") or comparison_verdict(f)),
        "",
        f"**Schedulers on {lit(f['workflow'])} / {lit(f['platform'])}** (simulated):",
    ]
    from_cases = list(f.get("from_cases") or [])
    for r in f["results"]:
        marks = ["best"] if r["scheduler"] in f.get("tied_best", ()) else []
        marks += ["from past cases"] if r["scheduler"] in from_cases else []
        lines.append(
            f"- {lit(r['scheduler'])}: makespan {seconds(r['makespan_s'])}, "
            f"{size(r['cross_node_bytes'])} across the network"
            + (f" ({'; '.join(marks)})" if marks else "")
        )
    tied = list(f.get("tied_best") or [f["best"]])
    best = ", ".join(lit(s) for s in tied)
    lines += ["", f"Best: {best}" + (" (tied)." if len(tied) > 1 else ".")]
    if from_cases:
        lines.append(
            f"Ranked too because past cases of {lit(f['workflow'])} ran as fast with them as "
            f"the usual schedulers, or faster: {', '.join(lit(s) for s in from_cases)}."
        )
    if f.get("cases_unavailable"):
        lines.append(f"Past cases were not consulted: {lit(f['cases_unavailable'], 240)}.")
    if f.get("run_id"):
        lines.append(f"The run panel shows run {lit(f['run_id'])}.")
    return "\n".join(lines)


KIND = Kind(
    "comparison",
    "schedulers ranked by simulated makespan on one workflow",
    render_comparison,
    facts=ComparisonFacts,
    verdict=comparison_verdict,
)
