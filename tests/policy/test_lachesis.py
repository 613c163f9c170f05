"""The Lachesis-style scheduler: the PPO policy's task scores choose the next task across
arrived workflows, DEFT places it with copies; no copy ever breaks a dependency."""

from __future__ import annotations

import pytest

from policy.bench.arrivals import run_on_stream
from policy.fifo_deft import FifoDeft
from policy.learned.lachesis import Lachesis, PolicyScores, rank_order
from policy.validate import validate_schedule
from sim.arrivals import Arrival, Stream, StreamSpec, merge_stream, poisson_stream
from sim.engine import simulate
from sim.generators import generate_workflow
from sim.model import Node, Platform, Workflow
from sim.platforms import generate_platform, gpu_cluster_spec
from sim.ranks import upward_rank
from sim.schedule import NetworkModel


@pytest.fixture(scope="module")
def ppo_scores() -> PolicyScores:
    return PolicyScores()


@pytest.mark.parametrize("model", ["fair", "ideal"])
def test_every_lachesis_schedule_passes_the_validator_copies_included(
    model: NetworkModel, ppo_scores: PolicyScores
) -> None:
    copies = 0
    for seed in range(3):
        spec = StreamSpec(count=6 + 3 * seed, window=200.0, tasks=(4, 14), ccr=0.5 + seed)
        merged = merge_stream(poisson_stream(spec, seed))
        platform = generate_platform(gpu_cluster_spec(5), seed)
        plan = Lachesis(ppo_scores).plan(merged, platform)
        assert len(plan.placement) == len(merged.tasks)
        assert validate_schedule(merged, platform, plan.to_result("lachesis"), copies=True) == []
        run = plan.to_copy_schedule("lachesis")
        result = run.original_result(simulate(run.expanded, platform, run.schedule, model))
        assert validate_schedule(merged, platform, result, copies=True) == []
        assert len(result.tasks) == len(merged.tasks) + plan.copy_count
        copies += plan.copy_count
    assert copies > 0  # duplication happened, so the validator saw copies


def _two_arrivals() -> tuple[Workflow, Platform]:
    """A fan-in arriving at 0 and a chain at 1 s on one single-core node, with little data:
    one of the fan-in's five entry tasks runs first; when it ends, its other four and the
    chain's first stage are all executable and the dispatcher chooses among them."""
    fan_in = generate_workflow("fan-in", 6, seed=13, ccr=0.01)
    chain = generate_workflow("chain", 6, seed=1, ccr=0.01)
    merged = merge_stream(Stream("two", (Arrival(0.0, fan_in), Arrival(1.0, chain))))
    return merged, Platform("one-core", (Node("n0", 1),))


def _second_choice(workflow: Workflow, first: str) -> list[str]:
    """What is executable when the first task ends: the other entry tasks of both."""
    return [t for t in workflow.entry_tasks if t != first]


def test_the_learned_scores_reorder_arrivals_where_fifo_deft_keeps_them(
    ppo_scores: PolicyScores,
) -> None:
    workflow, platform = _two_arrivals()
    lachesis = Lachesis(ppo_scores)
    order = list(lachesis.plan(workflow, platform).placement)
    scores = lachesis.task_scores
    fan_in_entries = [t for t in workflow.entry_tasks if t.startswith("w000/")]
    assert order[0] == max(fan_in_entries, key=lambda t: scores[t])  # alone at time 0
    expected = max(_second_choice(workflow, order[0]), key=lambda t: scores[t])
    assert expected == "w001/stage_000"  # the PPO scores put the later arrival first here
    assert order[1] == expected
    fifo = list(FifoDeft().plan(workflow, platform).placement)
    assert fifo == sorted(fifo, key=lambda t: t.startswith("w001/"))  # arrival order kept
    assert fifo.index(expected) > fifo.index(order[2])


def test_injected_scores_decide_across_workflows_and_equal_scores_fall_back_to_rank() -> None:
    workflow, platform = _two_arrivals()

    def earlier_first(batch: Workflow, _: Platform) -> dict[str, float]:
        return {t.id: float(t.id.startswith("w000/")) for t in batch.tasks}

    order = list(Lachesis(earlier_first).plan(workflow, platform).placement)
    assert all(t.startswith("w000/") for t in order[:5])  # the fan-in's entries first
    ranked = Lachesis(rank_order, name="lachesis-rank")
    by_rank = list(ranked.plan(workflow, platform).placement)
    rank = upward_rank(workflow, platform)
    assert by_rank[0] == max(
        (t for t in workflow.entry_tasks if t.startswith("w000/")), key=lambda t: rank[t]
    )
    assert by_rank[1] == max(_second_choice(workflow, by_rank[0]), key=lambda t: rank[t])


def test_the_arrivals_bench_runs_lachesis_and_its_ablation_through_the_copies_path() -> None:
    spec = StreamSpec(count=4, window=60.0, tasks=(4, 10), ccr=2.0)
    merged = merge_stream(poisson_stream(spec, 5))
    platform = generate_platform(gpu_cluster_spec(4), 5)
    for name in ("lachesis", "lachesis-rank"):
        result, copies, seconds = run_on_stream(name, merged, platform, "fair")  # validated
        assert len(result.tasks) == len(merged.tasks) + copies and seconds > 0
        assert {r.task for r in result.tasks} == set(merged.task_by_id)
