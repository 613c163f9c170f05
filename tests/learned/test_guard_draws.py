"""``rag-guarded`` under uncertainty: judging candidates on executions drawn from predictions.

Tiny demo instances; the real simulator and the shipped checkpoint.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from policy.heft import HEFT
from policy.learned.rag_guarded import TIE, ClassicChooser, RagGuarded, regret_quantile
from policy.peft import PEFT
from policy.planning_views import instance_views, plan, replay
from policy.validate import validate_schedule
from sim.demo import demo_platform, demo_workflow
from sim.engine import simulate
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy
from sim.predicted import CategoryDraw, draw_model, predicted_realisation, view_seed
from sim.schedule import StaticSchedule
from sim.uncertainty import (
    CategoryPrediction,
    RuntimePredictions,
    UncertaintyConfig,
    task_category,
)


def _predictions(workflow: Workflow, ratio: float = 0.25) -> RuntimePredictions:
    """What a history could say of ``workflow``: each category's median nominal runtime
    (``fork`` left out, as a category the history never saw)."""
    runtimes: dict[str, list[float]] = {}
    for t in workflow.tasks:
        runtimes.setdefault(task_category(t), []).append(t.runtime)
    categories = {
        c: CategoryPrediction(float(np.median(v)), 0.3, 8)
        for c, v in runtimes.items()
        if c != "fork"
    }
    return RuntimePredictions(categories, {}, ratio, 8)


def _views(task_sigma: float = 0.3):  # type: ignore[no-untyped-def]
    cfg = replace(UncertaintyConfig(), task_sigma=task_sigma)
    wf, pf = demo_workflow("fork-join-20"), demo_platform()
    return instance_views(wf, pf, 3, "user", cfg, _predictions(wf))


def test_draws_are_deterministic_per_seed_and_keep_the_tasks() -> None:
    views = _views()
    request = views.planning[0]
    assert views.predictions is not None
    model = draw_model(request, views.predictions, request)
    a = predicted_realisation(request, model, np.random.default_rng(7))
    b = predicted_realisation(request, model, np.random.default_rng(7))
    c = predicted_realisation(request, model, np.random.default_rng(8))
    works = [t.work for t in a.tasks]
    assert works == [t.work for t in b.tasks]
    assert works != [t.work for t in c.tasks]
    assert [t.id for t in a.tasks] == [t.id for t in request.tasks]
    assert a.files == request.files
    seed = view_seed(*views.planning)
    assert seed == view_seed(*views.planning) and seed != view_seed(
        views.planning[0], views.actual[1]
    )


def test_a_request_far_above_the_prediction_makes_one_task_of_its_category_long() -> None:
    wf = demo_workflow("fork-join-20")
    calibrated = Workflow(
        wf.name, tuple(replace(t, work=t.work) for t in wf.tasks), wf.files, wf.description
    )
    request = Workflow(
        wf.name,
        tuple(
            replace(t, work=t.work * (100.0 if task_category(t) == "work" else 1.0))
            for t in wf.tasks
        ),
        wf.files,
        wf.description,
    )
    flat = {
        c: replace(p, log_spread=0.0) for c, p in _predictions(wf, ratio=0.5).categories.items()
    }
    predictions = RuntimePredictions(flat, {}, 0.5, 8)
    model = draw_model(calibrated, predictions, request)
    assert model["work"].tail > 1.0 and model["join"].tail == 1.0
    drawn = predicted_realisation(calibrated, model, np.random.default_rng(0))
    grown = [d.work / t.work for d, t in zip(drawn.tasks, calibrated.tasks, strict=True)]
    long_ones = [g for g, t in zip(grown, wf.tasks, strict=True) if g > 1.5]
    assert len(long_ones) == 1 and task_category(wf.tasks[grown.index(long_ones[0])]) == "work"
    # Without the requests (kb estimates), no tail: with zero spread every task keeps its work.
    plain = predicted_realisation(
        calibrated, draw_model(calibrated, predictions), np.random.default_rng(0)
    )
    assert [t.work for t in plain.tasks] == [t.work for t in calibrated.tasks]


def test_without_predictions_the_guard_judges_on_the_planning_view_as_before() -> None:
    views = _views()
    workflow, platform = views.planning
    guard = RagGuarded()
    chosen = guard.schedule(workflow, platform)
    choice = guard.last_choice
    assert choice is not None and choice.draws == 0
    assert set(choice.makespans) == {"policy", "heft", "peft"}
    assert choice.makespans == choice.planned == choice.scores
    for name, s in (
        ("heft", HEFT().schedule(workflow, platform)),
        ("peft", PEFT().schedule(workflow, platform)),
    ):
        assert choice.makespans[name] == simulate(workflow, platform, s).makespan
    assert chosen.planned_makespan == min(choice.makespans.values())


def test_with_predictions_the_guard_judges_on_draws_and_never_reads_the_actual_view() -> None:
    quiet, noisy = _views(task_sigma=0.0), _views(task_sigma=0.6)
    assert quiet.planning == noisy.planning and quiet.actual != noisy.actual
    schedules = []
    for views in (quiet, noisy, quiet):
        guard = RagGuarded(draws=8)
        schedule = plan(guard, views, "fair")
        assert validate_schedule(*views.actual, replay(schedule, views, "fair")[0]) == []
        schedules.append((schedule.assignment, schedule.order))
    # plan() handed the predictions: the copy it made judged on 8 draws (the original is untouched).
    assert guard.last_choice is None
    assert schedules[0] == schedules[1] == schedules[2]
    judging = RagGuarded(draws=8).with_predictions(quiet.predictions, False)  # type: ignore[arg-type]
    judging.schedule(*quiet.planning)
    choice = judging.last_choice
    assert choice is not None and choice.draws == 8
    assert set(choice.scores) == {"policy", "heft", "peft", "heft-kb", "peft-kb"}
    assert choice.makespans != choice.planned  # the mean over draws, not the requests' view
    assert choice.scores[choice.winner] == min(choice.scores.values())


class _Fixed(RagGuarded):
    """Draws on which every candidate takes :meth:`span` on every one."""

    def span(self, name: str) -> float:
        return 100.0

    def draw_makespans(
        self,
        schedules: dict[str, StaticSchedule],
        workflow: Workflow,
        platform: Platform,
        occupancy: Occupancy | None = None,
    ) -> dict[str, np.ndarray]:
        return {name: np.full(self.draws, self.span(name)) for name in schedules}


class _Rigged(_Fixed):
    """The planning view prefers HEFT; the draws say PEFT is better on every one."""

    def span(self, name: str) -> float:
        return 80.0 if name == "peft" else 100.0


def test_the_candidate_better_on_the_draws_wins() -> None:
    views = _views()
    guard = _Rigged(draws=4).with_predictions(views.predictions, False)  # type: ignore[arg-type]
    chosen = guard.schedule(*views.planning)
    assert guard.last_choice is not None and guard.last_choice.winner == "peft"
    peft = PEFT().schedule(*views.planning)
    assert (chosen.assignment, chosen.order) == (peft.assignment, peft.order)
    scores = regret_quantile(
        {"a": np.array([1.0, 2.0]), "heft": np.array([2.0, 2.0]), "peft": np.array([3.0, 1.0])},
        q=1.0,
    )
    assert scores == {"a": 2.0, "heft": 2.0, "peft": 1.5}


class _NearTie(_Fixed):
    """On every draw the learned plan is ``share`` faster than HEFT, PEFT slower still."""

    share = 0.0

    def span(self, name: str) -> float:
        return {"heft": 100.0, "policy": 100.0 * (1.0 - self.share)}.get(name, 120.0)


@pytest.mark.parametrize(("share", "winner"), [(TIE / 2, "heft"), (TIE * 10, "policy")])
def test_a_near_tie_on_the_draws_goes_to_the_classic(share: float, winner: str) -> None:
    views = _views()
    guard = _NearTie(draws=4).with_predictions(views.predictions, False)  # type: ignore[arg-type]
    guard.share = share
    chosen = guard.schedule(*views.planning)
    assert guard.last_choice is not None and guard.last_choice.winner == winner
    assert guard.last_choice.scores["policy"] < guard.last_choice.scores["heft"]
    if winner == "heft":
        heft = HEFT().schedule(*views.planning)
        assert (chosen.assignment, chosen.order) == (heft.assignment, heft.order)


class _RiggedChooser(_Rigged, ClassicChooser):
    """The chooser on the same rigged draws."""


def test_the_classic_chooser_judges_like_the_guard_but_picks_only_a_classic() -> None:
    views = _views()
    guard = RagGuarded(draws=8).with_predictions(views.predictions, False)  # type: ignore[arg-type]
    guard.schedule(*views.planning)
    chooser = ClassicChooser(draws=8).with_predictions(views.predictions, False)  # type: ignore[arg-type]
    chosen = chooser.schedule(*views.planning)
    g, c = guard.last_choice, chooser.last_choice
    assert g is not None and c is not None and set(c.scores) == {"heft", "peft"}
    # the same draws and criterion: the classics are judged as the guard judged them
    assert c.scores == {n: g.scores[n] for n in ("heft", "peft")}
    assert c.makespans == {n: g.makespans[n] for n in ("heft", "peft")}
    best = (HEFT if c.winner == "heft" else PEFT)().schedule(*views.planning)
    assert (chosen.assignment, chosen.order) == (best.assignment, best.order)
    rigged = _RiggedChooser(draws=4).with_predictions(views.predictions, False)  # type: ignore[arg-type]
    picked = rigged.schedule(*views.planning)
    peft = PEFT().schedule(*views.planning)
    assert rigged.last_choice is not None and rigged.last_choice.winner == "peft"
    assert (picked.assignment, picked.order) == (peft.assignment, peft.order)
    # without predictions (exact runtimes) it is min(HEFT, PEFT) on the view
    plain = ClassicChooser()
    made = plain.schedule(*views.planning)
    spans = [
        simulate(*views.planning, s).makespan for s in (HEFT().schedule(*views.planning), peft)
    ]
    assert plain.last_choice is not None and made.planned_makespan == min(spans)


def test_earlier_runs_replace_a_covered_categorys_shift_and_tail_by_the_run_spread() -> None:
    wf = demo_workflow("fork-join-20")
    request = Workflow(
        wf.name, tuple(replace(t, work=t.work * 100.0) for t in wf.tasks), wf.files, wf.description
    )
    generic = _predictions(wf, ratio=0.5)
    work_ids = [t.id for t in wf.tasks if task_category(t) == "work"]
    recurring = replace(generic, tasks={i: 1.0 for i in work_ids[:-1]}, task_log_spread=0.1, runs=3)
    assert draw_model(wf, recurring, request)["work"].tail > 1.0  # one task not covered
    covered = replace(recurring, tasks={i: 1.0 for i in work_ids})
    model = draw_model(wf, covered, request)
    assert model["work"] == CategoryDraw(0.0, 0.1 * np.sqrt(1 + 1 / 3))  # no shift, no tail
    assert model["join"] == draw_model(wf, generic, request)["join"]  # others as before
