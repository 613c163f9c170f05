"""A comparison ranks the schedulers past cases show beating the list (issue 31 item 4).

The challengers are simulated on the run itself, so the number ranked is this run's, not the
case's; one whose recorded makespan loses to the list is not simulated at all (the lookahead
schedulers cost the most: they are run only when a case says they could win).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from policy.base import plan_and_simulate
from policy.registry import get_scheduler
from sim.demo import demo_platform, demo_workflow
from wass_chat.agent.facts.whatif import compare
from wass_chat.agent.facts.workflow_tools import WorkflowTools, case_challengers
from wass_chat.answers.cases import CaseFacts
from wass_chat.answers.kinds import render, with_verdict
from wass_chat.config import Settings


def _makespan(workflow: str, scheduler: str) -> float:
    run = plan_and_simulate(
        get_scheduler(scheduler, seed=0), demo_workflow(workflow), demo_platform()
    )
    return run.makespan


def test_a_challenger_that_a_case_shows_faster_is_simulated_and_ranked() -> None:
    workflow, platform = demo_workflow("genomics-49"), demo_platform()
    heft, minmin = _makespan("genomics-49", "heft"), _makespan("genomics-49", "minmin")
    assert minmin < heft  # the premise: minmin beats heft on this run
    challengers = [("minmin", minmin), ("cpop", heft + 100.0)]  # cpop's case lost to heft
    facts = compare(workflow, platform, ["heft"], challengers=challengers)
    assert [r["scheduler"] for r in facts["results"]] == ["minmin", "heft"]
    assert facts["best"] == "minmin" and facts["from_cases"] == ["minmin"]
    assert facts["results"][0]["makespan_s"] == minmin  # simulated here, on this run
    text = render(facts)
    assert "`minmin`: makespan" in text and "(best; from past cases)" in text
    assert "Ranked too because past cases of `genomics-49` ran as fast" in text


def test_without_challengers_nothing_is_added() -> None:
    facts = compare(demo_workflow("fork-join-20"), demo_platform(), ["heft", "cpop"])
    assert facts["from_cases"] == []
    assert "Ranked too" not in render(facts)


def test_only_cases_of_the_same_workflow_with_a_registered_scheduler_challenge() -> None:
    def case(workflow: str, scheduler: str, makespan: float) -> CaseFacts:
        return CaseFacts(
            case_id=f"case-{scheduler}",
            similarity=0.9,
            scheduler=scheduler,
            makespan_s=makespan,
            workflow=workflow,
            platform="demo-cluster",
            source="simulated",
            outcome="",
        )

    cases = [
        case("genomics-49", "policy-lookahead", 446.3),
        case("montage-60", "peft", 100.0),  # another workflow: its makespan says nothing here
        case("genomics-49", "retired-scheduler", 10.0),  # not registered any more
    ]
    assert case_challengers(cases, "genomics-49") == [("policy-lookahead", 446.3)]


@pytest.mark.slow  # the default list's learned schedulers import PyTorch
def test_a_knowledge_base_that_does_not_answer_leaves_the_ranking_and_says_so(
    tmp_path: Path,
) -> None:
    """A site's served store that is down costs the challengers, not the comparison."""
    settings = Settings(
        home=tmp_path / "home", chroma_mode="http", chroma_host="127.0.0.1", chroma_port=9
    )
    facts = with_verdict(WorkflowTools(settings).compare_schedulers(workflow="fork-join-20"))
    assert facts["results"] and facts["from_cases"] == []
    assert "127.0.0.1" in facts["cases_unavailable"]
    assert "Past cases were not consulted: " in render(facts)
