"""Deterministic Markdown renderings of the facts each tool returns.

The offline mode answers with these; the online mode falls back to them when the model's text
fails verification; tool results show them as their human summary. Every number printed here
comes from the facts dict at the precision the verifier accepts, and every string that came
from outside (names of workflows, tasks, jobs, files, users, comments) is shown through
:func:`~wass_chat.agent.safety.literal`, never as Markdown.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import Any

from wass_chat.agent.answers.render_batch import BATCH_RENDERERS
from wass_chat.agent.answers.render_cluster import CLUSTER_RENDERERS, plain
from wass_chat.agent.facts.verdicts import verdict_sentences
from wass_chat.agent.safety import literal as lit
from wass_chat.agent.units import percent, seconds, size

Facts = Mapping[str, Any]


def _later(delta: float) -> str:
    if abs(delta) < 0.05:
        return "at the same time"
    return f"{seconds(abs(delta))} {'later' if delta > 0 else 'earlier'}"


def render_cases(cases: list[Mapping[str, Any]]) -> list[str]:
    """One bullet per retrieved case: id, similarity, scheduler, outcome."""
    if not cases:
        return ["- no similar past cases in the knowledge base yet"]
    return [
        f"- case {lit(c['case_id'])} (similarity {c['similarity']:.3f}): {lit(c['workflow'])} "
        f"with {lit(c['scheduler'])}, makespan {seconds(c['makespan_s'])}"
        + (f", {c['outcome']}" if c.get("outcome") else "")
        for c in cases
    ]


def render_placement(f: Facts) -> str:
    """Why a task went where it did: the verdict, then locality, counterfactuals, similar cases,
    then the sources."""
    lines = [
        verdict_sentences(f),
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


def render_cases_fact(f: Facts) -> str:
    return "\n".join(
        [
            verdict_sentences(f),
            "",
            f"**Past cases most similar to {lit(f['subject'])}:**",
            *render_cases(f["cases"]),
        ]
    )


def _outcome(label: str, o: Mapping[str, Any]) -> str:
    return (
        f"- {label}: {o['nodes']} nodes on {lit(o['platform'])}, {lit(o['scheduler'])}: "
        f"makespan {seconds(o['makespan_s'])}, {size(o['cross_node_bytes'])} across the network"
    )


def render_simulation(f: Facts) -> str:
    """A simulation, and with what-if changes, the change against the baseline."""
    subject = f"run {lit(f['run_id'])}" if f.get("run_id") else lit(f["workflow"])
    head = (
        f"**Simulation of {subject}** ({lit(f['workflow'])}, {lit(f['baseline']['scheduler'])}; "
        f"{f['network_model']} network model)"
    )
    lines = [verdict_sentences(f), "", head, _outcome("baseline", f["baseline"])]
    variant = f.get("variant")
    if variant is not None:
        lines.append(_outcome("what-if (" + "; ".join(f["change_notes"]) + ")", variant))
        delta = f["delta_s"]
        if abs(delta) < 0.05:
            lines += [
                "",
                "The makespan does not change: the added capacity is not on the "
                "critical path under this scheduler.",
            ]
        else:
            verdict = "shorter" if delta < 0 else "longer"
            lines += [
                "",
                f"The makespan changes by {seconds(delta)} ({percent(f['delta_pct'])}): "
                f"{seconds(abs(delta))} {verdict} than the baseline.",
            ]
    return "\n".join(lines)


def render_comparison(f: Facts) -> str:
    lines = [
        verdict_sentences(f),
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


PENDING_PREFIX = "Nothing has been submitted."
"""How the plan's last line, true while it waits, begins; a front end that shows the decision's
outcome drops that line (one truthful outcome line, not "nothing submitted" above "submitted")."""
PENDING_PLAN_LINE = f"{PENDING_PREFIX} Approve, edit or reject this plan to continue."


def render_submission_plan(f: Facts) -> str:
    lines = [
        f"**Plan to submit {lit(f['workflow'])}** with {lit(f['scheduler'])} on "
        f"{lit(f['platform'])}: {len(f['jobs'])} jobs, predicted makespan "
        f"{seconds(f['predicted_makespan_s'])}.",
    ]
    for job in f["jobs"]:  # every job: a person approves all of them, not the first twenty
        after = ", ".join(lit(a) for a in job["after"]) or "none"
        lines.append(
            f"- {lit(job['task'])} -> {lit(job['node'])} ({job['cores']} cores; after {after})"
        )
        if "command" in job:
            runs = lit(shlex.join(job["command"]), 400) if job["command"] else "sleeps"
            lines.append(f"  runs {runs}; sbatch {lit(' '.join(job['sbatch']), 600)}")
    if f.get("plan_digest"):
        lines.append(f"Plan digest {lit(str(f['plan_digest'])[:12])} (what approving names).")
    if f.get("cluster"):
        lines.append(f"Planned from now: {f['cluster']}.")
    for said in f.get("predicted_start", []):
        lines.append(f"- {lit(said, 400)}")
    for busy in f.get("busy_jobs", [])[:20]:
        lines.append(f"- held by {lit(busy, 240)}")
    lines.append("")
    if str(f.get("platform_ref") or "").lower() == "demo":
        note = (str(f.get("note") or "").strip().splitlines() or [""])[0]
        lines.append(
            f"{PENDING_PREFIX} This plan uses the demo platform's nodes"
            + (f" ({lit(note)})" if note else "")
            + ", which the cluster does not have: it cannot be submitted."
        )
    else:
        lines.append(PENDING_PLAN_LINE)
    return "\n".join(lines)


def render_submission_outcome(f: Facts) -> str:
    if not f.get("executed"):
        return "The submission was rejected; nothing was sent to the cluster."
    jobs = f.get("job_ids", [])
    return (
        f"Submitted run {lit(f.get('run_id', '?'))}: {len(jobs)} jobs "
        f"({', '.join(lit(j) for j in jobs[:10])}{', ...' if len(jobs) > 10 else ''})."
    )


def render_run_status(f: Facts) -> str:
    counts = ", ".join(f"{n} {lit(state)}" for state, n in f["state_counts"].items())
    lines = [f"**{plain(f['verdict'])}**", ""] if f.get("verdict") else []
    lines.append(f"Run {lit(f['run_id'])} ({lit(f['workflow'])}, {lit(f['scheduler'])}): {counts}.")
    for t in f["tasks"][:15]:
        job = f" job {lit(t['job_id'])}" if t.get("job_id") else ""
        lines.append(f"- {lit(t['task'])} on {lit(t['node'])}: {lit(t['state'])}{job}")
    if len(f["tasks"]) > 15:
        lines.append(f"- ... and {len(f['tasks']) - 15} more tasks")
    return "\n".join(lines)


def render_report(f: Facts) -> str:
    return f"Report written to {lit(f['path'])} ({f['format']}, period {lit(f['period'])})."


def render_help(f: Facts) -> str:
    return str(f["text"])


def render_error(f: Facts) -> str:
    """The error in one line; a name that names nothing is refused with the nearest real ones
    and the names there are (the person picks: nothing was silently replaced)."""
    unknown = f.get("unknown")
    if not unknown:
        return f"I could not answer that: {f['error']}"
    text = f"There is no {unknown['what']} {lit(unknown['name'])}, so I did not answer."
    nearest = unknown.get("nearest") or []
    known = unknown.get("known") or []
    if nearest:
        text += f" Did you mean {' or '.join(lit(n) for n in nearest)}?"
    if known:
        what = str(unknown["what"])
        plural = what if what.isupper() else what + "s"  # QOS
        more = unknown.get("known_count", len(known)) - len(known)
        text += f" {plural[0].upper()}{plural[1:]}: {', '.join(lit(k) for k in known)}"
        text += f" and {more} more." if more > 0 else "."
    elif not nearest:
        what = str(unknown["what"])
        text += f" There are no {what if what.isupper() else what + 's'} to choose from."
    return text + (" Ask again with the right name." if nearest or known else "")


RENDERERS: dict[str, Callable[[Facts], str]] = {
    "placement": render_placement,
    "cases": render_cases_fact,
    "simulation": render_simulation,
    "comparison": render_comparison,
    "submission_plan": render_submission_plan,
    "submission_outcome": render_submission_outcome,
    "run_status": render_run_status,
    "report": render_report,
    "help": render_help,
    "error": render_error,
}


def render_results(f: Facts) -> str:
    """Several tools' facts, one rendering after another."""
    return "\n\n".join(render(part) for part in f["results"])


RENDERERS["results"] = render_results
RENDERERS.update(CLUSTER_RENDERERS)
RENDERERS.update(BATCH_RENDERERS)


def render(facts: Facts) -> str:
    """The Markdown rendering of one tool's facts, chosen by their ``kind``."""
    renderer = RENDERERS.get(str(facts.get("kind")))
    if renderer is None:
        return f"(no rendering for facts of kind {facts.get('kind')!r})"
    return renderer(facts)
