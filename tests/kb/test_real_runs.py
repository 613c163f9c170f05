"""Cases of real runs: built from what Slurm measured, stored once, kept apart when they failed,
preferred over simulated ones, read by the estimates and the sim-to-real report; and a learning
process killed with SIGKILL at any point leaves a store that is either as it was or complete."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kb.calibration import calibration_report
from kb.chroma_client import ChromaTarget
from kb.codec import case_from_bytes, case_to_bytes
from kb.curate import plan_curation
from kb.decisions import decisions_from_case
from kb.estimates import history_words, retrieve_predictions
from kb.provenance import Standing, standing
from kb.real_runs import (
    TaskExecution,
    case_from_run,
    failed_runs,
    learned_cases,
    per_task_mape,
    real_case_id,
    task_errors,
)
from kb.records import case_from_result, is_real
from kb.store import KnowledgeBase
from policy.base import plan_and_simulate
from policy.registry import get_scheduler
from sim.errors import ServiceUnavailable
from sim.uncertainty import estimate_from_history
from tests.kb.learn_killed import (
    POINTS,
    RecordedAccounting,
    example_case,
    example_platform,
    example_run,
    example_workflow,
    learn,
    written_around_the_checks,
)
from tests.kb.served_server import served_kb

kb_server = served_kb

ROOT = Path(__file__).resolve().parents[2]


def simulated_case():
    """HEFT's simulated execution of the example on its platform (the stated runtimes)."""
    wf, pf = example_workflow(), example_platform()
    return case_from_result(wf, pf, plan_and_simulate(get_scheduler("heft"), wf, pf))


def test_a_finished_run_becomes_a_case_timed_from_its_first_start() -> None:
    case = example_case("run-1")
    assert case.case_id == real_case_id("run-1") == example_case("run-1").case_id
    assert case.source == "slurm:run-1" and is_real(case.source)
    assert case.placements == {"prep": "n1", "work_a": "n1", "work_b": "n2", "merge": "n3"}
    assert case.timeline["prep"] == (0.0, 0.0, 2.0)
    ready, start, end = case.timeline["merge"]
    assert (ready, start) == pytest.approx((3.8, 4.1)) and end == pytest.approx(4.6)
    assert case.order == {"n1": ("prep", "work_a"), "n2": ("work_b",), "n3": ("merge",)}
    assert case.metrics.makespan == pytest.approx(4.6)
    assert case.real is not None and case.real.completed
    assert (
        case.real.started_at == "2026-09-21T14:13:20+00:00"
        and case.recorded_at == case.real.started_at
    )
    first = int(case.real.job_ids["prep"])  # each run's own job ids, in task order
    assert case.real.job_ids == {
        t: str(first + i) for i, t in enumerate(("prep", "work_a", "work_b", "merge"))
    }
    # the plan said 8, 4, 4, 2 s; the tasks took 2, 1, 1.5, 0.5 s
    assert task_errors(case)["work_b"] == pytest.approx((4.0, 1.5))
    assert per_task_mape(case) == pytest.approx((3 + 3 + 2.5 / 1.5 + 3) / 4)


def test_a_scaled_run_is_kept_in_the_workflows_seconds_and_reported_in_real_ones() -> None:
    case = example_case("run-s", scale=0.5)
    assert case.timeline["prep"] == (0.0, 0.0, 4.0)  # 2 real seconds at scale 0.5
    assert case.real is not None and case.real.scale == 0.5
    assert task_errors(case)["prep"] == pytest.approx((4.0, 2.0))  # real seconds both


def test_the_record_survives_encoding() -> None:
    case = example_case()
    back = case_from_bytes(case_to_bytes(case))
    assert back.real == case.real and back.timeline == case.timeline
    assert back.placements == case.placements and back.source == case.source
    plain = case_from_bytes(case_to_bytes(simulated_case()))
    assert plain.real is None


def test_learning_twice_stores_one_case_with_its_decisions(kb: KnowledgeBase) -> None:
    case = example_case()
    decisions = decisions_from_case(case, 4)
    assert learn(kb, case, decisions) is True
    assert learn(kb, case, decisions) is False
    assert kb.count() == 1 and kb.cases.count() == 1
    assert kb.sidecar.count("decisions") == len(decisions) == kb.decisions.count()
    assert [c.case_id for c in learned_cases(kb)] == [case.case_id]


def test_a_failed_run_is_kept_apart_and_never_retrieved(kb: KnowledgeBase) -> None:
    run = example_run("run-failed")
    tasks = {**run.tasks, "merge": replace(run.tasks["merge"], state="FAILED")}
    case = case_from_run(replace(run, tasks=tasks))
    assert case.real is not None and case.real.state == "FAILED"
    assert learn(kb, case, decisions_from_case(case, 4)) is True
    assert learn(kb, case) is False
    assert kb.count() == 0 and kb.cases.count() == 0 and learned_cases(kb) == []
    assert [c.case_id for c in failed_runs(kb)] == [case.case_id]
    kb.add_cases([simulated_case()])
    hits = kb.query(example_workflow(), example_platform(), k=5)
    assert case.case_id not in {h.case_id for h in hits}
    predictions = retrieve_predictions(kb, example_workflow(), example_platform())
    assert not any(is_real(s) for s in predictions.sources)


def test_a_task_cancelled_while_pending_has_no_timeline_but_its_state() -> None:
    run = example_run("run-cancelled")
    tasks = {**run.tasks, "merge": TaskExecution("", None, None, "CANCELLED", "103")}
    case = case_from_run(replace(run, tasks=tasks))
    assert case.real is not None and case.real.state == "CANCELLED"
    assert "merge" not in case.timeline and case.real.task_states["merge"] == "CANCELLED"


def test_a_real_run_ranks_before_an_equally_similar_simulated_one(kb: KnowledgeBase) -> None:
    simulated = simulated_case()
    real = example_case(slower=5.0)  # slower than the simulation: ranked first all the same
    assert real.metrics.makespan > simulated.metrics.makespan
    kb.add_cases([simulated])
    learn(kb, real)
    hits = kb.query(example_workflow(), example_platform(), k=2)
    assert [h.case_id for h in hits] == [real.case_id, simulated.case_id]
    assert hits[0].real and not hits[1].real
    assert math.isclose(hits[0].similarity, hits[1].similarity, abs_tol=1e-6)


def test_estimates_use_the_real_runs_when_there_are_some(kb: KnowledgeBase) -> None:
    wf, pf = example_workflow(), example_platform()
    kb.add_cases([simulated_case()])
    simulated_only = retrieve_predictions(kb, wf, pf)
    assert simulated_only.sources == ("simulated",)
    assert "1 simulated case (no real run matched)" in history_words(simulated_only)
    planned = estimate_from_history(wf, simulated_only).task_by_id["prep"]
    assert planned.runtime == pytest.approx(8.0, rel=0.01)  # as stated

    learn(kb, example_case("run-a"))
    learn(kb, example_case("run-b", slower=1.1, submitted_at="2026-09-22"))
    learned = retrieve_predictions(kb, wf, pf)
    assert sorted(learned.sources) == ["slurm:run-a", "slurm:run-b"]
    assert learned.runs == 2 and "2 real runs (run-a, run-b)" in history_words(learned)
    node = pf.node_by_name["n1"]
    prep = learned.runtime_of(wf.task_by_id["prep"])
    assert prep is not None and 2.0 <= prep * learned.slowdown_of(node) <= 2.2
    merge = estimate_from_history(wf, learned).task_by_id["merge"]
    assert merge.runtime * learned.slowdown_of(pf.node_by_name["n3"]) == pytest.approx(
        0.5 * math.sqrt(1.1), rel=0.05
    )


def test_real_runs_teach_a_slow_nodes_slowdown_and_a_categorys_runtime(
    kb: KnowledgeBase,
) -> None:
    """n2 runs 1.5x slower: work_b, on n2 in one run and on n1 in the next, says so; and a new
    workflow of the same categories plans on what the real runs measured, not on its own."""
    wf, pf = example_workflow(), example_platform()
    run = example_run("run-n2")
    slow = replace(run.tasks["work_b"], end=run.tasks["work_b"].start + 1.5 * 1.5)  # type: ignore[operator]
    learn(kb, case_from_run(replace(run, tasks={**run.tasks, "work_b": slow})))
    moved = example_run("run-n1")
    learn(
        kb,
        case_from_run(
            replace(
                moved, tasks={**moved.tasks, "work_b": replace(moved.tasks["work_b"], node="n1")}
            )
        ),
    )
    learned = retrieve_predictions(kb, wf, pf)
    assert (
        learned.slowdown_of(pf.node_by_name["n2"]) / learned.slowdown_of(pf.node_by_name["n1"])
        > 1.1
    )

    other = replace(wf, name="other", tasks=tuple(replace(t, work=t.work * 3) for t in wf.tasks))
    assert other != wf  # another graph (its stated runtimes differ): no run of its own
    predictions = retrieve_predictions(kb, other, pf)
    assert predictions.runs == 0 and predictions.sources  # real runs, by category
    assert set(predictions.categories) == {"prep", "work", "merge"}
    assert predictions.categories["prep"].runtime == pytest.approx(2.0, rel=0.1)  # not 24 s


def test_the_sim_to_real_report_over_learned_runs() -> None:
    first = example_case("run-1")
    better = example_run(
        "run-2",
        predicted={
            "prep": (0.0, 2.2),
            "work_a": (2.2, 3.2),
            "work_b": (2.2, 3.7),
            "merge": (3.7, 4.2),
        },
        predicted_makespan=4.2,
    )
    report = calibration_report([first, case_from_run(better)], failed_runs=1)
    one, two = report.runs
    assert one.per_task_mape == pytest.approx(per_task_mape(first))
    assert two.per_task_mape == pytest.approx((0.1 + 0 + 0 + 0) / 4)
    assert one.makespan_error == pytest.approx(abs(4.6 - 14.0) / 14.0)
    assert two.makespan_error == pytest.approx(0.4 / 4.2)
    by_node = {g.key: g for g in report.by_node}
    assert by_node["n1"].tasks == 4 and by_node["n3"].tasks == 2
    assert by_node["n3"].ratio == pytest.approx((0.25 + 1.0) / 2)  # median of 0.5/2, 0.5/0.5
    by_category = {g.key: g for g in report.by_category}
    assert set(by_category) == {"prep", "work", "merge"} and by_category["work"].tasks == 4
    assert report.failed_runs == 1
    assert report.per_task_mape == pytest.approx(
        (4 * per_task_mape(first) + 0.1) / 8  # type: ignore[operator]
    )


def test_curation_never_merges_or_prunes_a_real_run_as_dominated(kb: KnowledgeBase) -> None:
    kb.add_cases([simulated_case()])
    learn(kb, example_case("run-slow", slower=10.0))  # 3x the simulated makespan
    learn(kb, example_case("run-slow-2", slower=10.0))  # an identical real run
    plan = plan_curation(kb.sidecar.case_rows())
    assert plan.removed == []


@pytest.mark.parametrize("point", POINTS)
def test_a_sigkill_while_learning_leaves_the_store_as_it_was_or_complete(
    tmp_path: Path, point: str
) -> None:
    directory = tmp_path / "kb"
    before = KnowledgeBase(directory)
    before.add_cases([simulated_case()])
    before.close()
    child = subprocess.run(
        [sys.executable, "-m", "tests.kb.learn_killed", str(directory), point],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    killed = child.returncode == -9
    assert killed == (point != "never"), child.stderr
    case = example_case()
    reopened = KnowledgeBase(directory)  # reconciles Chroma with the sidecar if pending
    try:
        learned = [c.case_id for c in learned_cases(reopened)]
        if point == "mid-transaction":  # killed before the commit: nothing of it stored
            assert learned == [] and reopened.count() == 1
            assert reopened.sidecar.count("decisions") == 0 and reopened.decisions.count() == 0
        else:  # killed after the commit: complete once reopened
            assert learned == [case.case_id] and reopened.count() == 2
            assert reopened.sidecar.count("decisions") == 4 == reopened.decisions.count()
        assert reopened.cases.count() == reopened.count()  # every case has its vector
        assert learn(reopened, case, decisions_from_case(case, 4)) == (point == "mid-transaction")
        assert reopened.count() == 2 and reopened.cases.count() == 2
        assert reopened.sidecar.count("decisions") == 4 == reopened.decisions.count()
        assert reopened.query(example_workflow(), example_platform(), 1)[0].case_id == case.case_id
    finally:
        reopened.close()


@pytest.mark.slow
def test_a_served_store_learns_real_runs_the_same_way(kb_server: ChromaTarget) -> None:
    """scripts/kb-server: the same case once, a failed run apart, real runs ranked first."""
    kb = KnowledgeBase(kb_server)
    try:
        case = example_case("run-served")
        assert learn(kb, case, decisions_from_case(case, 4)) is True
        assert learn(kb, case, decisions_from_case(case, 4)) is False
        run = example_run("run-served-failed")
        failed = case_from_run(
            replace(run, tasks={**run.tasks, "prep": replace(run.tasks["prep"], state="FAILED")})
        )
        assert learn(kb, failed) is True and learn(kb, failed) is False
        kb.add_cases([simulated_case()])
    finally:
        kb.close()
    other = KnowledgeBase(kb_server)  # another client of the same server
    try:
        assert [c.case_id for c in learned_cases(other)] == [case.case_id]
        assert [c.case_id for c in failed_runs(other)] == [failed.case_id]
        assert other.count() == 2 and other.sidecar.count("decisions") == 4
        assert other.query(example_workflow(), example_platform(), 1)[0].case_id == case.case_id
    finally:
        other.close()


class _SacctAway:
    """sacct that does not answer (the controller or slurmdbd down)."""

    def accounting(self, job_ids: Sequence[str], fields: Sequence[str] = ()) -> dict[str, Any]:
        raise ServiceUnavailable("sacct: slurmdbd does not answer")


def test_a_real_case_is_confirmed_at_read_time_only_as_far_as_sacct_can_say(
    tmp_path: Path,
) -> None:
    """:func:`kb.provenance.standing`: a stored case (stamped on write) is confirmed by the
    sacct that has its jobs, unconfirmed by one whose jobs are another run's; no sacct, or one
    that does not answer, leaves it "not re-checked" if stamped and unconfirmed if not; a case
    from before the stamp is confirmed by sacct alone."""
    genuine = example_case("20261202-110000-1111")
    kb = KnowledgeBase(tmp_path / "kb")
    assert learn(kb, genuine)
    stored = kb.get_cases([genuine.case_id])[genuine.case_id]
    kb.close()
    assert stored.real is not None and stored.real.confirmed  # stamped by the write path
    sacct, other = RecordedAccounting(genuine), RecordedAccounting(example_case("20261202-1"))
    assert standing(stored, sacct) == Standing(True, "confirmed by sacct, checked again now")
    refused = standing(stored, other)
    assert not refused.confirmed and refused.words.startswith("unconfirmed: sacct disagrees")
    offline = standing(stored, None)
    assert offline.confirmed and "not re-checked here" in offline.words
    assert standing(stored, _SacctAway()).confirmed
    assert "sacct did not answer" in standing(stored, _SacctAway()).words
    assert genuine.real is not None and not genuine.real.confirmed  # as before the stamp
    assert standing(genuine, sacct).words.startswith("confirmed by sacct now")
    assert not standing(genuine, None).confirmed
    assert not standing(genuine, _SacctAway()).confirmed


def test_estimates_leave_out_a_real_run_sacct_does_not_confirm(tmp_path: Path) -> None:
    """#45: a forged real run written around the write-time check (work_a 8,471 s slower)
    would move the plan under ``--estimates kb``; the estimates use only the real runs the
    reader's sacct confirms, so the genuine run alone sets each task's runtime."""
    genuine = example_case("20261202-120000-2222")
    forged = example_case("20261202-120500-3333")
    work = forged.timeline["work_a"]
    forged = replace(
        forged, timeline={**forged.timeline, "work_a": (work[0], work[1], work[1] + 8471.0)}
    )
    forged = replace(forged, metrics=replace(forged.metrics, makespan=work[1] + 8471.0))
    kb = KnowledgeBase(tmp_path / "kb")
    try:
        assert learn(kb, genuine)
        written_around_the_checks(kb, forged)
        predictions = retrieve_predictions(kb, example_workflow(), example_platform())
        assert [s for s in predictions.sources if is_real(s)] == [genuine.source]
        assert predictions.tasks["work_a"] < 100.0  # the genuine run's second, not 8,471 s
    finally:
        kb.close()
