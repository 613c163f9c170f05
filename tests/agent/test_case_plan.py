"""What the best retrieved case did differently: computed from its record, stated in the verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.records import CaseMetrics, CaseRecord
from sim.demo import demo_platform, demo_workflow
from tests.agent.conftest import UNREACHABLE
from wass_chat.agent.facts.case_plan import plan_difference, remote_input_bytes
from wass_chat.agent.facts.counterfactual import RecordedRun
from wass_chat.agent.facts.workflow_tools import WorkflowTools
from wass_chat.answers.checks.verify import verify_answer
from wass_chat.answers.kinds import render, with_verdict
from wass_chat.answers.placement import best_case
from wass_chat.config import Settings

pytestmark = pytest.mark.xdist_group("agent-home")

RUN = "demo-genomics-49-heft"
TASK = "merge_bams"


def _run(placements: dict[str, str]) -> RecordedRun:
    wf = demo_workflow("genomics-49")
    return RecordedRun("r", wf, demo_platform(), "heft", placements, {}, 100.0)


def _case(placements: dict[str, str]) -> CaseRecord:
    wf = demo_workflow("genomics-49")
    return CaseRecord("case-x", wf, demo_platform(), "cpop", placements, {}, CaseMetrics(90.0))


def _local_input_bytes(run: RecordedRun | CaseRecord, task: str) -> int:
    """Independently: bytes of ``task``'s inputs whose producer ran on the task's node."""
    wf = run.workflow
    node = run.placements[task]
    return sum(
        wf.file_by_id[f].size
        for f in wf.task_by_id[task].inputs
        if f in wf.producer and run.placements[wf.producer[f]] == node
    )


def test_one_node_for_everything_reads_nothing_remotely_and_moves_are_counted() -> None:
    wf = demo_workflow("genomics-49")
    nodes = demo_platform().node_names
    together = {t: nodes[0] for t in wf.task_by_id}
    assert remote_input_bytes(_run(together)) == 0
    spread = {t: nodes[i % len(nodes)] for i, t in enumerate(wf.topological_order)}
    assert remote_input_bytes(_run(spread)) > 0
    diff = plan_difference(_run(spread), TASK, _case(together))
    assert diff is not None
    assert diff["task_node"] == nodes[0]
    assert diff["tasks_compared"] == len(wf.tasks)
    assert diff["tasks_placed_differently"] == sum(spread[t] != nodes[0] for t in wf.task_by_id)
    assert diff["task_local_input_bytes"] == _local_input_bytes(_case(together), TASK)
    assert diff["remote_input_bytes"] == 0
    assert diff["run_remote_input_bytes"] == remote_input_bytes(_run(spread))
    same = plan_difference(_run(spread), TASK, _case(spread))
    assert same is not None and same["tasks_placed_differently"] == 0


def test_a_case_of_another_graph_is_not_compared() -> None:
    wf = demo_workflow("genomics-49")
    run = _run({t: "gpu02" for t in wf.task_by_id})
    other = demo_workflow("fork-join-20")
    case = CaseRecord(
        "case-y",
        other,
        demo_platform(),
        "heft",
        {t: "gpu02" for t in other.task_by_id},
        {},
        CaseMetrics(10.0),
    )
    assert plan_difference(run, TASK, case) is None


def test_the_best_case_prefers_the_same_workflow() -> None:
    cases = [
        {"case_id": "a", "workflow": "w", "makespan_s": 10.0, "similarity": 0.9},
        {"case_id": "b", "workflow": "other", "makespan_s": 1.0, "similarity": 0.99},
        {"case_id": "c", "workflow": "w", "makespan_s": 10.0, "similarity": 0.95},
    ]
    assert best_case(cases, "w")["case_id"] == "c"  # type: ignore[index]
    assert best_case(cases, "nothing")["case_id"] == "b"  # type: ignore[index]
    assert best_case([], "w") is None


def test_the_why_answer_says_what_the_best_case_did_differently(tmp_path: Path) -> None:
    """On a fresh data home (the shipped demo store, whose cases ran the demo graphs: the seeded
    test store's genomics-49 is another graph of that name, which is not compared): the facts
    match the case record, and the verdict says them."""
    facts_layer = WorkflowTools(Settings(home=tmp_path / "home", ollama_host=UNREACHABLE))
    facts = with_verdict(facts_layer.explain_placement(RUN, TASK))
    plan = facts["best_case_plan"]
    best = best_case(facts["cases"], facts["workflow"])
    assert best is not None and plan["case_id"] == best["case_id"]
    record = facts_layer.sources.knowledge_base.get_cases([plan["case_id"]])[plan["case_id"]]
    run = facts_layer.sources.run(RUN)
    assert plan["task_node"] == record.placements[TASK]
    assert plan["tasks_placed_differently"] == sum(
        record.placements[t] != node for t, node in run.placements.items()
    )
    assert plan["task_local_input_bytes"] == _local_input_bytes(record, TASK)
    pct = 100.0 * plan["task_local_input_bytes"] / facts["locality"]["input_bytes"]
    assert facts["verdict"]["best_case_local_input_pct"] == pytest.approx(pct, abs=0.05)

    first = render(facts).split("\n\n")[0]
    assert f"`{best['case_id']}`" in first
    assert f"It put `{TASK}` " in first
    node_words = (
        "there too"
        if plan["task_node"] == facts["chosen_node"]
        else f"on `{plan['task_node']}` instead of `{facts['chosen_node']}`"
    )
    assert node_words in first
    if plan["tasks_placed_differently"]:
        assert f"placed {plan['tasks_placed_differently']} of the 49 tasks" in first
    assert f"({facts['verdict']['best_case_local_input_pct']:.1f}%)" in first
    check = verify_answer(render(facts), facts)
    assert check.ok, check.reason()
