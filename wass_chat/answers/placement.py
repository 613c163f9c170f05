"""Why a task ran on its node (kind ``placement``): the verdict numbers and sentences, the
Markdown.

The verdict says what retrieval adds: the best similar case, how much better or worse it was,
and what it did differently (its scheduler, where it put the task, how many tasks it placed
elsewhere, and how much of the task's input stayed local; :mod:`wass_chat.agent.facts.case_plan`),
and, first, what the cluster really did: a real run of the same workflow, where it put the
task and how long the task and the run took against what our simulation of it said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from wass_chat.agent.safety import literal as lit
from wass_chat.agent.units import percent, seconds, size
from wass_chat.answers.cases import CaseFacts, RealRunFacts, render_cases
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.simulation import NEGLIGIBLE_S


class NodeLocality(TypedDict):
    node: str
    local_input_bytes: int


class Locality(TypedDict):
    """Where a task's inputs were when it became ready (see :func:`locality`)."""

    input_bytes: int
    shared_fs_input_bytes: int
    local_on_chosen_bytes: int
    by_node: list[NodeLocality]


class MovedFile(TypedDict):
    file: str
    bytes: int


class Alternative(TypedDict):
    """The run re-simulated with the task forced onto ``node``."""

    node: str
    makespan_s: float
    delta_s: float
    delta_pct: float
    moved_bytes: int
    largest_moved_file: MovedFile | None


class BestCasePlan(TypedDict):
    """What the best retrieved case did differently from a run (``best_case_plan``)."""

    case_id: str
    task_node: str
    tasks_compared: int
    tasks_placed_differently: int
    task_local_input_bytes: int
    remote_input_bytes: int
    run_remote_input_bytes: int


class RealCaseFacts(TypedDict):
    """A real run of the same workflow on the same cluster, for a why-answer: where it put the
    task and how long the task really took there, and how sacct confirmed it."""

    case_id: str
    run: RealRunFacts
    task_node: str
    same_node: bool
    task_real_s: float
    task_predicted_s: float | None
    confirmation: str
    """:func:`kb.provenance.standing`'s words: confirmed when stored, and again now."""
    written_by: str


class UnconfirmedCaseFacts(TypedDict):
    """A ``slurm:`` case that claims a real run sacct does not confirm: never cited as one."""

    case_id: str
    source: str
    written_by: str
    why: str


class PlacementFacts(TypedDict, total=False):
    """What ``explain_placement`` returns (kind ``placement``): where the task's data was, the
    run re-simulated with the task on each other node, and the similar past cases; with
    ``best_case_plan`` when the best case ran the same graph."""

    kind: str
    run_id: str
    run_source: str
    workflow: str
    platform: str
    scheduler: str
    task: str
    chosen_node: str
    asked_node: str | None
    run_makespan_s: float
    locality: Locality
    baseline_makespan_s: float
    network_model: str
    alternatives: list[Alternative]
    unfit_nodes: list[str]
    cases: list[CaseFacts]
    best_case_plan: BestCasePlan
    real_case: RealCaseFacts
    unconfirmed_cases: list[UnconfirmedCaseFacts]


def best_case(cases: Sequence[Mapping[str, Any]], workflow: str) -> Mapping[str, Any] | None:
    """The fastest retrieved simulated case of ``workflow`` (of any workflow when none is), the
    most similar on ties; ``None`` when there is none. Real runs are left to their own sentence
    (``real_case``): a measured makespan is no plan the simulator's figures compare with."""
    cases = [c for c in cases if not c.get("real")]
    if not cases:
        return None
    same = [c for c in cases if c.get("workflow") == workflow]
    return min(same or cases, key=lambda c: (c["makespan_s"], -c["similarity"]))


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


def placement_verdict(f: Mapping[str, Any]) -> dict[str, Any]:
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


def _later(delta: float) -> str:
    if abs(delta) < 0.05:
        return "at the same time"
    return f"{seconds(abs(delta))} {'later' if delta > 0 else 'earlier'}"


def render_placement(f: Facts) -> str:
    """Why a task went where it did: the verdict, then locality, counterfactuals, similar cases,
    then the sources."""
    lines = [
        _placement_words(f, f.get("verdict") or placement_verdict(f)),
        "",
        f"**Evidence.** Task {lit(f['task'])} of run {lit(f['run_id'])} ran on "
        f"{lit(f['chosen_node'])} (scheduler {lit(f['scheduler'])}; workflow "
        f"{lit(f['workflow'])}, simulated makespan {seconds(f['baseline_makespan_s'])}).",
    ]
    asked = f.get("asked_node")
    if asked and asked != f["chosen_node"]:
        lines.append(f"Note: the run placed it on {lit(f['chosen_node'])}, not {lit(asked)}.")
    loc = f["locality"]
    lines += [
        "",
        f"**Data locality:** the task reads {size(loc['input_bytes'])} "
        f"({loc['input_bytes']} bytes); {size(loc['local_on_chosen_bytes'])} of it was already "
        f"on {lit(f['chosen_node'])}.",
        "",
        "**Counterfactual** (the same run re-simulated with only this task moved):",
    ]
    for alt in f["alternatives"]:
        line = f"- on {lit(alt['node'])}: makespan {seconds(alt['makespan_s'])}, " + (
            f"the workflow would have finished {_later(alt['delta_s'])} "
            f"({percent(alt['delta_pct'])})"
        )
        big = alt.get("largest_moved_file")
        if big and alt["delta_s"] > 0.05:
            line += (
                f", because file {lit(big['file'])} of {size(big['bytes'])} would have "
                f"crossed the network ({size(alt['moved_bytes'])} moved for this task)"
            )
        lines.append(line)
    for node in f.get("unfit_nodes", []):
        lines.append(f"- {lit(node)}: the task does not fit there")
    lines += ["", f"**Similar past cases** (top {len(f['cases'])}):", *render_cases(f["cases"])]
    lines += ["", _sources(f)]
    return "\n".join(lines)


def _sources(f: Facts) -> str:
    """The run and the cases an answer rests on (real runs' cases named as such)."""
    parts = [f"run {lit(f['run_id'])} ({lit(f.get('run_source', 'decision log'))})"]
    real = f.get("real_case")
    if real:
        parts.append(f"case {lit(real['case_id'])} (real run {lit(real['run']['run_id'])})")
    parts += [
        f"case {lit(c['case_id'])}" + (" (real)" if c.get("real") else "")
        for c in f.get("cases", [])
        if not real or c["case_id"] != real["case_id"]
    ]
    parts += [
        f"case {lit(u['case_id'])} ({lit(u['source'])}, written by "
        f"{lit(u['written_by'] or 'unknown')}; {u['why']}: not cited as a real run)"
        for u in f.get("unconfirmed_cases", [])
    ]
    return "**Sources:** " + ", ".join(parts) + "."


KIND = Kind(
    "placement",
    "why a task ran on its node: the counterfactuals, data locality, similar past cases",
    render_placement,
    facts=PlacementFacts,
    verdict=placement_verdict,
)
