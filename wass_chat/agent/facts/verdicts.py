"""Verdicts: the one or two plain sentences every answer starts with, computed from the facts.

:func:`with_verdict` adds a ``verdict`` dict to a tool's facts: the derived numbers a verdict
states (a percentage gain, which case, which node), so the model sees them and the verifier
(:mod:`wass_chat.agent.answers.verify`) can check them like any other fact.
:func:`verdict_sentences` turns them into words for the renderings
(:mod:`wass_chat.agent.answers.render`). A why-answer says what retrieval adds: the best similar
case, how much better or worse it was, and what it did differently (its scheduler, where it put the
task, how many tasks it placed elsewhere, and how much of the task's input stayed local;
:mod:`wass_chat.agent.facts.case_plan`), and, first, what the cluster really did: a real run of the
same workflow, where it put the task and how long the task and the run took against what our
simulation of it said.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wass_chat.agent.facts.case_plan import best_case
from wass_chat.agent.safety import literal as lit
from wass_chat.agent.units import percent, seconds, size

NEGLIGIBLE_S = 0.05
"""Makespan differences below this (the answers' one decimal) count as none."""


def with_verdict(facts: dict[str, Any]) -> dict[str, Any]:
    """``facts`` with its ``verdict`` numbers, when its kind has one (otherwise unchanged)."""
    derive = _DERIVERS.get(str(facts.get("kind")))
    if derive is None or "verdict" in facts:
        return facts
    verdict = derive(facts)
    return {**facts, "verdict": verdict} if verdict else facts


def _best_case(f: Mapping[str, Any], baseline: float) -> dict[str, Any]:
    """The fastest retrieved case (of the same workflow when there is one) against ``baseline``,
    and what its plan did differently (``best_case_plan`` in the facts)."""
    best = best_case(f.get("cases") or [], str(f.get("workflow")))
    if best is None or baseline <= 0:
        return {}
    gain = baseline - best["makespan_s"]
    verdict = {
        "best_case_id": best["case_id"],
        "best_case_scheduler": best["scheduler"],
        "best_case_workflow": best["workflow"],
        "best_case_makespan_s": best["makespan_s"],
        "best_case_same_workflow": best["workflow"] == f.get("workflow"),
        "best_case_gain_s": round(gain, 3),
        "best_case_gain_pct": round(100.0 * gain / baseline, 2),
    }
    plan = f.get("best_case_plan") or {}
    input_bytes = (f.get("locality") or {}).get("input_bytes") or 0
    if plan.get("case_id") == best["case_id"] and "task_local_input_bytes" in plan and input_bytes:
        verdict["best_case_local_input_pct"] = round(
            100.0 * plan["task_local_input_bytes"] / input_bytes, 1
        )
    return verdict


def _placement(f: Mapping[str, Any]) -> dict[str, Any]:
    verdict: dict[str, Any] = {}
    alternatives = f.get("alternatives") or []
    if alternatives:
        best = min(alternatives, key=lambda a: (a["makespan_s"], a["node"]))
        verdict.update(
            best_alternative_node=best["node"],
            best_alternative_delta_s=best["delta_s"],
            best_alternative_delta_pct=best["delta_pct"],
            best_alternative_moved_bytes=best.get("moved_bytes", 0),
            slower_alternatives=sum(a["delta_s"] > NEGLIGIBLE_S for a in alternatives),
        )
    loc = f.get("locality") or {}
    if loc.get("input_bytes"):
        verdict["local_input_pct"] = round(
            100.0 * loc.get("local_on_chosen_bytes", 0) / loc["input_bytes"], 1
        )
    verdict.update(_best_case(f, float(f.get("baseline_makespan_s") or 0.0)))
    real = f.get("real_case")
    if real:
        verdict.update(
            real_case_id=real["case_id"],
            real_run_id=real["run"]["run_id"],
            real_task_node=real["task_node"],
            real_task_s=real["task_real_s"],
            real_run_makespan_s=real["run"]["real_makespan_s"],
        )
    return verdict


def _comparison(f: Mapping[str, Any]) -> dict[str, Any]:
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


def _cases(f: Mapping[str, Any]) -> dict[str, Any]:
    cases = f.get("cases") or []
    if not cases:
        return {}
    fastest = min(cases, key=lambda c: (c["makespan_s"], -c["similarity"]))
    return {"fastest_case_id": fastest["case_id"], "fastest_case_scheduler": fastest["scheduler"]}


_DERIVERS = {"placement": _placement, "comparison": _comparison, "cases": _cases}


def verdict_sentences(f: Mapping[str, Any]) -> str:
    """The leading sentences for facts of any kind with a verdict ('' when there is none)."""
    kind = str(f.get("kind"))
    verdict = f.get("verdict") or (_DERIVERS[kind](f) if kind in _DERIVERS else {})
    writer = _WRITERS.get(kind)
    return writer(f, verdict) if writer else ""


def _placement_words(f: Mapping[str, Any], v: Mapping[str, Any]) -> str:
    task, chosen = lit(f["task"]), lit(f["chosen_node"])
    if "best_alternative_node" not in v:
        first = f"Task {task} ran on {chosen}, the only node it fits."
    elif v["best_alternative_delta_s"] > NEGLIGIBLE_S:
        first = (
            f"Task {task} ran on {chosen} because every other node would have made the run "
            f"slower: even the best alternative, {lit(v['best_alternative_node'])}, finishes "
            f"{seconds(v['best_alternative_delta_s'])} later "
            f"({percent(v['best_alternative_delta_pct'])})"
        )
        moved = v.get("best_alternative_moved_bytes") or 0
        first += f", with {size(moved)} of its data crossing the network." if moved else "."
    elif v["best_alternative_delta_s"] < -NEGLIGIBLE_S:
        first = (
            f"{chosen} was not the best node for task {task}: on "
            f"{lit(v['best_alternative_node'])} the run would finish "
            f"{seconds(abs(v['best_alternative_delta_s']))} earlier "
            f"({percent(v['best_alternative_delta_pct'])})."
        )
    else:
        first = (
            f"Task {task} ran on {chosen}, but {lit(v['best_alternative_node'])} would have "
            "done as well: the placement does not change the makespan."
        )
    if v.get("local_input_pct"):
        first += f" {v['local_input_pct']:.1f}% of its input was already on {chosen}."
    return f"{first} {_real_words(f)} {_retrieval_words(f, v)}".replace("  ", " ").strip()


def _real_words(f: Mapping[str, Any]) -> str:
    """The real run of the same workflow the facts found (``real_case``), in one sentence:
    "The real run of 2026-11-20 on n[1-3] put T on n2 too, where it took 2.1 s (the plan
    said 6.0 s); the run took 12.3 s, our simulation of it said 11.8 s." ('' without one)."""
    real = f.get("real_case")
    if not real:
        return ""
    run, task, node = real["run"], lit(f["task"]), lit(real["task_node"])
    where = f"on {node} too" if real["same_node"] else f"on {node}"
    text = (
        f"The real run {lit(run['run_id'])} of {run['date']} on {lit(run['nodes'])} put "
        f"{task} {where}, where it took {real['task_real_s']:.1f} s"
    )
    if real["task_predicted_s"] is not None:
        text += f" (the plan said {real['task_predicted_s']:.1f} s)"
    text += f"; that run took {run['real_makespan_s']:.1f} s"
    if run["predicted_makespan_s"] is not None:
        text += f", our simulation of it said {run['predicted_makespan_s']:.1f} s"
    if real.get("confirmation"):
        text += f" (case {lit(real['case_id'])}, {real['confirmation']})"
    return text + "."


def _retrieval_words(f: Mapping[str, Any], v: Mapping[str, Any]) -> str:
    if "best_case_id" not in v:
        return "The knowledge base has no similar past case to compare with."
    case = lit(v["best_case_id"])
    scheduler = lit(v["best_case_scheduler"])
    differently = (
        f"with {scheduler} instead of {lit(f['scheduler'])}"
        if v["best_case_scheduler"] != f.get("scheduler")
        else f"with the same scheduler ({scheduler}) but other placements"
    )
    what = "the same workflow" if v["best_case_same_workflow"] else lit(v["best_case_workflow"])
    mine = f"{f['baseline_makespan_s']:.1f} s"
    return f"{_outcome_words(case, what, differently, mine, v)} {_plan_words(f, v)}".strip()


def _outcome_words(case: str, what: str, differently: str, mine: str, v: Mapping[str, Any]) -> str:
    if v["best_case_gain_s"] > NEGLIGIBLE_S:
        return (
            f"Retrieval found a better plan: past case {case} ran {what} {differently} in "
            f"{v['best_case_makespan_s']:.1f} s, {v['best_case_gain_pct']:.1f}% faster than "
            f"this run's {mine}."
        )
    if v["best_case_gain_s"] < -NEGLIGIBLE_S:
        return (
            f"No retrieved case beats this run: the fastest, case {case} ({what}, "
            f"{differently}), took {v['best_case_makespan_s']:.1f} s, "
            f"{abs(v['best_case_gain_pct']):.1f}% slower than {mine}."
        )
    return f"The best retrieved case, {case} ({what}), matches this run's {mine}."


def _plan_words(f: Mapping[str, Any], v: Mapping[str, Any]) -> str:
    """What the best case's plan did differently: the task's node and input locality there, how
    many tasks it placed elsewhere, and the bytes all tasks read from other nodes."""
    plan = f.get("best_case_plan") or {}
    if plan.get("case_id") != v.get("best_case_id"):
        return ""
    task, chosen, node = lit(f["task"]), lit(f["chosen_node"]), plan["task_node"]
    n, of = plan["tasks_placed_differently"], plan["tasks_compared"]
    moved = (
        f"placed {n} of the {of} tasks on another node than this run did"
        if n
        else "placed every task where this run did"
    )
    where = f"on {lit(node)} instead of {chosen}" if node != f["chosen_node"] else "there too"
    text = f"It put {task} {where} and {moved}."
    if "best_case_local_input_pct" in v:
        text += (
            f" {size(plan['task_local_input_bytes'])} "
            f"({v['best_case_local_input_pct']:.1f}%) of the task's input was local on "
            f"{lit(node)} in that case, against {v.get('local_input_pct', 0.0):.1f}% on "
            f"{chosen} in this run."
        )
    remote, mine = plan["remote_input_bytes"], plan["run_remote_input_bytes"]
    if remote != mine:
        text += (
            f" In all, its tasks read {size(remote)} from other nodes' outputs, against "
            f"{size(mine)} in this run."
        )
    return text


def _simulation_words(f: Mapping[str, Any], v: Mapping[str, Any]) -> str:
    base = f["baseline"]
    variant = f.get("variant")
    if variant is None:
        return (
            f"{lit(f['workflow'])} takes {base['makespan_s']:.1f} s with {lit(base['scheduler'])} "
            f"on {base['nodes']} nodes of {lit(base['platform'])} (simulated)."
        )
    change = "; ".join(f.get("change_notes") or []) or "the change"
    delta = f["delta_s"]
    if abs(delta) < NEGLIGIBLE_S:
        return f"With {change}, the makespan stays at {base['makespan_s']:.1f} s."
    word = "shorter" if delta < 0 else "longer"
    return (
        f"With {change}, the workflow finishes in {variant['makespan_s']:.1f} s instead of "
        f"{base['makespan_s']:.1f} s: {abs(delta):.1f} s {word} ({f['delta_pct']:+.1f}%)."
    )


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


def _cases_words(f: Mapping[str, Any], v: Mapping[str, Any]) -> str:
    cases = f.get("cases") or []
    if not cases:
        return f"The knowledge base has no past case like {lit(f['subject'])} yet."
    closest = cases[0]
    fastest = next(c for c in cases if c["case_id"] == v.get("fastest_case_id", closest["case_id"]))
    text = (
        f"The closest past case to {lit(f['subject'])} is {lit(closest['case_id'])} "
        f"({lit(closest['workflow'])} with {lit(closest['scheduler'])}, "
        f"{closest['makespan_s']:.1f} s)."
    )
    if fastest is not closest:
        text += (
            f" The fastest of these {len(cases)} is {lit(fastest['case_id'])} with "
            f"{lit(fastest['scheduler'])} at {fastest['makespan_s']:.1f} s."
        )
    real = [c for c in cases if c.get("real")]
    if real:
        text += (
            f" {len(real)} of them {'are real runs' if len(real) > 1 else 'is a real run'}: "
            f"case {lit(real[0]['case_id'])}, {lit(real[0]['outcome'])}."
        )
    return text


_WRITERS = {
    "placement": _placement_words,
    "simulation": _simulation_words,
    "comparison": _comparison_words,
    "cases": _cases_words,
}
