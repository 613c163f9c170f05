"""Every kind of answer, in one table: :data:`KINDS`, and what reads it.

The chat (offline, and online when the model's text fails verification), ``ask`` and the MCP
server answer with :func:`render`; the toolbox adds each kind's verdict numbers to the facts
with :func:`with_verdict`. A new kind of answer is one module of this package holding its facts'
TypedDict (or naming where they are made), its verdict and its rendering, and one row here
(then its tool in ``TOOL_SPECS`` and its intent in the intent table).
"""

from __future__ import annotations

from typing import Any

from wass_chat.answers import (
    cancel_outcome,
    cancel_plan,
    cases,
    cluster,
    cluster_whatif,
    comparison,
    efficiency,
    energy,
    error,
    gpu_cancel_plan,
    gpu_usage,
    help,
    job_why,
    placement,
    queue,
    report,
    run_status,
    sacct_summary,
    simulation,
    submission_outcome,
    submission_plan,
    waiters,
)
from wass_chat.answers.kind import Facts, Kind


def render_results(f: Facts) -> str:
    """Several tools' facts, one rendering after another."""
    return "\n\n".join(render(part) for part in f["results"])


RESULTS = Kind("results", "several tools' answers, one after another", render_results)

KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        placement.KIND,
        cases.KIND,
        simulation.KIND,
        comparison.KIND,
        submission_plan.KIND,
        submission_outcome.KIND,
        run_status.KIND,
        report.KIND,
        help.KIND,
        error.KIND,
        RESULTS,
        job_why.KIND,
        queue.KIND,
        waiters.KIND,
        cluster.KIND,
        sacct_summary.KIND,
        efficiency.KIND,
        gpu_usage.KIND,
        cluster_whatif.KIND,
        energy.KIND,
        cancel_plan.KIND,
        gpu_cancel_plan.KIND,
        cancel_outcome.KIND,
    )
}
"""Kind name -> its row."""


def render(facts: Facts) -> str:
    """The Markdown rendering of one tool's facts, chosen by their ``kind``."""
    kind = KINDS.get(str(facts.get("kind")))
    if kind is None:
        return f"(no rendering for facts of kind {facts.get('kind')!r})"
    return kind.render(facts)


def with_verdict(facts: dict[str, Any]) -> dict[str, Any]:
    """``facts`` with its ``verdict`` numbers, when its kind has one (otherwise unchanged)."""
    kind = KINDS.get(str(facts.get("kind")))
    if kind is None or kind.verdict is None or "verdict" in facts:
        return facts
    verdict = kind.verdict(facts)
    return {**facts, "verdict": verdict} if verdict else facts
