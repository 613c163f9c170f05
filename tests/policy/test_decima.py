"""The Decima-style scheduler: a graph network scores the executable tasks of every arrived
workflow, DEFT places them with copies; training is seeded; the shipped network is trained."""

from __future__ import annotations

import torch

from policy.bench.arrivals import run_on_stream
from policy.duplication import CopyPlan
from policy.learned.decima import (
    Decima,
    DecimaBacklog,
    graph_state,
    shipped_net,
    untrained,
)
from policy.learned.decima_config import CHECKPOINT, DecimaTraining
from policy.learned.decima_model import initial_net
from policy.learned.decima_train import train_decima
from policy.validate import validate_schedule
from sim.arrivals import StreamSpec, merge_stream, poisson_stream
from sim.engine import simulate
from sim.model import Platform, Workflow
from sim.platforms import generate_platform, gpu_cluster_spec


def _stream(seed: int, count: int = 5, nodes: int = 5) -> tuple[Workflow, Platform]:
    spec = StreamSpec(count=count, window=200.0, tasks=(4, 14), ccr=1.0 + seed)
    return merge_stream(poisson_stream(spec, seed)), generate_platform(
        gpu_cluster_spec(nodes), seed
    )


class _AuditedBacklog(DecimaBacklog):
    """Checks each task the selector hands out against the plan at that instant."""

    def begin(self, plan: CopyPlan) -> None:
        super().begin(plan)
        state, candidates = graph_state(self, plan.now)
        self.plan = plan
        self.masked = getattr(self, "masked", 0) + len(state.features) - len(candidates)

    def pop(self) -> str:
        task = super().pop()
        spec = self.workflow.task_by_id[task]
        assert spec.release <= self.plan.now, f"{task} chosen before its workflow arrived"
        for parent in self.workflow.parents[task]:
            assert self.plan.finish[parent] <= self.plan.now, f"{task} chosen before {parent}"
        return task


def test_a_task_that_is_not_executable_is_never_chosen() -> None:
    from policy.dispatch import dispatch_plan

    workflow, platform = _stream(1, count=6)
    for sampler in (None, torch.Generator().manual_seed(3)):
        backlog = _AuditedBacklog(initial_net(0), workflow, platform, sampler)
        with torch.no_grad():
            plan = dispatch_plan(workflow, platform, backlog, patience=4)
        assert len(plan.placement) == len(workflow.tasks)
        assert backlog.masked > 0  # tasks in the graph the softmax had to leave out


def test_every_decima_schedule_passes_the_validator_copies_included() -> None:
    copies = 0
    for seed in range(3):
        workflow, platform = _stream(seed, count=6 + 3 * seed)
        for decima in (Decima(shipped_net()), untrained()):
            plan = decima.plan(workflow, platform)
            assert validate_schedule(workflow, platform, plan.to_result("d"), copies=True) == []
            run = plan.to_copy_schedule(decima.name)
            result = run.original_result(simulate(run.expanded, platform, run.schedule, "fair"))
            assert validate_schedule(workflow, platform, result, copies=True) == []
            copies += plan.copy_count
    assert copies > 0  # duplication happened, so the validator saw copies
    workflow, platform = _stream(7)
    for name in ("decima", "decima-untrained"):
        result, run_copies, seconds = run_on_stream(name, workflow, platform, "fair")  # validated
        assert len(result.tasks) == len(workflow.tasks) + run_copies and seconds > 0


def test_a_few_training_steps_change_the_weights_the_same_way_for_a_seed() -> None:
    cfg = DecimaTraining(steps=2, rollouts=2, validation_streams=0)
    first, second = train_decima(cfg).net.state_dict(), train_decima(cfg).net.state_dict()
    start = initial_net(cfg.seed).state_dict()
    assert all(torch.equal(first[k], second[k]) for k in first)
    assert any(not torch.equal(first[k], start[k]) for k in first)


def test_the_shipped_checkpoint_loads_small_and_scores_unlike_its_initialisation() -> None:
    assert CHECKPOINT.stat().st_size < 200_000
    workflow, platform = _stream(2, count=6)
    trained, fresh = shipped_net(), untrained().net
    assert fresh is not None
    backlog = DecimaBacklog(trained, workflow, platform)
    plan = CopyPlan(workflow, platform)
    backlog.arrive(plan, tuple(t for t in workflow.topological_order if t.startswith("w000/")))
    for task in workflow.entry_tasks:
        if task.startswith("w000/"):
            backlog.add(task)
    state, candidates = graph_state(backlog, 0.0)
    with torch.no_grad():
        ours, theirs = trained.logits(state), fresh.logits(state)
    assert len(candidates) > 1 and ours.shape == theirs.shape
    assert not torch.allclose(ours, theirs)
