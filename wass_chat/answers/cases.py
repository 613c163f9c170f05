"""Past cases like a workflow or run (kind ``cases``): the verdict and the Markdown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from wass_chat.agent.safety import literal as lit
from wass_chat.agent.units import seconds
from wass_chat.answers.kind import Facts, Kind


class RealRunFacts(TypedDict):
    """The real run a case was learned from (``slurm:<run id>``), as answers cite it."""

    run_id: str
    date: str
    nodes: str
    """The nodes it ran on, in Slurm's compact form (``n[1-3]``)."""
    real_makespan_s: float
    predicted_makespan_s: float | None
    """What our simulation of that very plan said (None: not recorded)."""


class CaseFacts(TypedDict, total=False):
    """One retrieved past execution, as answers quote it (``real`` for a real run's)."""

    case_id: str
    similarity: float
    scheduler: str
    makespan_s: float
    workflow: str
    platform: str
    source: str
    outcome: str
    real: RealRunFacts


class CasesFacts(TypedDict, total=False):
    """What ``similar_cases`` returns (kind ``cases``)."""

    kind: str
    subject: str
    workflow: str
    """The name of the workflow the cases were retrieved for (the subject's)."""
    cases: list[CaseFacts]
    run_id: str


def cases_verdict(f: Mapping[str, Any]) -> dict[str, Any]:
    cases = f.get("cases") or []
    if not cases:
        return {}
    fastest = min(cases, key=lambda c: (c["makespan_s"], -c["similarity"]))
    return {"fastest_case_id": fastest["case_id"], "fastest_case_scheduler": fastest["scheduler"]}


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


def render_cases_fact(f: Facts) -> str:
    return "\n".join(
        [
            _cases_words(f, f.get("verdict") or cases_verdict(f)),
            "",
            f"**Past cases most similar to {lit(f['subject'])}:**",
            *render_cases(f["cases"]),
        ]
    )


KIND = Kind(
    "cases",
    "the past cases most similar to a workflow or run",
    render_cases_fact,
    facts=CasesFacts,
    verdict=cases_verdict,
)
