"""Verdict first: the leading sentences are computed from the facts and pass the verifier."""

from __future__ import annotations

from typing import Any

from wass_chat.answers.checks.verify import verify_answer
from wass_chat.answers.kinds import render, with_verdict


def _case(case_id: str, workflow: str, scheduler: str, makespan: float, sim: float) -> dict:
    return {
        "case_id": case_id,
        "similarity": sim,
        "scheduler": scheduler,
        "makespan_s": makespan,
        "workflow": workflow,
        "platform": "demo-cluster",
        "source": "simulated",
        "outcome": f"{scheduler} achieved {makespan:.1f} s (simulated)",
    }


PLACEMENT: dict[str, Any] = {
    "kind": "placement",
    "run_id": "demo-genomics-49-heft",
    "run_source": "planned",
    "workflow": "genomics-49",
    "platform": "demo-cluster",
    "scheduler": "heft",
    "task": "merge_bams",
    "chosen_node": "gpu02",
    "asked_node": "gpu02",
    "baseline_makespan_s": 510.5,
    "locality": {"input_bytes": 1000, "local_on_chosen_bytes": 250},
    "alternatives": [
        {
            "node": "gpu01",
            "makespan_s": 573.9,
            "delta_s": 63.4,
            "delta_pct": 12.42,
            "moved_bytes": 900,
            "largest_moved_file": {"file": "f1", "bytes": 600},
        },
        {
            "node": "cpu06",
            "makespan_s": 900.0,
            "delta_s": 389.5,
            "delta_pct": 76.3,
            "moved_bytes": 900,
            "largest_moved_file": {"file": "f1", "bytes": 600},
        },
    ],
    "unfit_nodes": [],
    "cases": [
        _case("case-a", "genomics-49", "heft", 493.3, 1.0),
        _case("case-b", "genomics-49", "cpop", 446.3, 0.99),
        _case("case-c", "fork-join-20", "wass", 100.0, 0.5),
    ],
}


def test_the_why_answer_starts_with_why_and_what_retrieval_adds() -> None:
    facts = with_verdict(PLACEMENT)
    text = render(facts)
    first = text.split("\n\n")[0]
    assert first.startswith("Task `merge_bams` ran on `gpu02` because every other node")
    assert "`gpu01`" in first and "63.4 s later" in first
    # the best case of the same workflow (not the faster case of another workflow), and by how much
    assert "`case-b`" in first and "12.6% faster" in first and "446.3 s" in first
    assert "`cpop` instead of `heft`" in first
    assert text.index("**Evidence.**") < text.index("**Sources:**")
    assert verify_answer(text, facts).ok, verify_answer(text, facts).reason()


def test_a_better_node_is_said_plainly() -> None:
    better = {
        **PLACEMENT,
        "alternatives": [{**PLACEMENT["alternatives"][0], "delta_s": -20.0, "delta_pct": -3.9}],
    }
    first = render(with_verdict(better)).split("\n\n")[0]
    assert first.startswith("`gpu02` was not the best node for task `merge_bams`")
    assert "20.0 s earlier" in first


def test_a_comparison_names_the_winner_and_its_margin_first() -> None:
    facts = with_verdict(
        {
            "kind": "comparison",
            "workflow": "montage-60",
            "platform": "demo-cluster",
            "network_model": "fair",
            "results": [
                {"scheduler": "cpop", "makespan_s": 480.0, "cross_node_bytes": 10},
                {"scheduler": "heft", "makespan_s": 500.0, "cross_node_bytes": 10},
            ],
            "best": "cpop",
            "tied_best": ["cpop"],
        }
    )
    text = render(facts)
    assert text.startswith("`cpop` is the fastest on `montage-60` at 480.0 s; the next best")
    assert "20.0 s (4.0%) slower" in text
    assert verify_answer(text, facts).ok, verify_answer(text, facts).reason()


PLAN = {
    "case_id": "case-b",
    "task_node": "gpu01",
    "tasks_compared": 49,
    "tasks_placed_differently": 19,
    "task_local_input_bytes": 600,
    "remote_input_bytes": 1_290_000_000_000,
    "run_remote_input_bytes": 2_270_000_000_000,
}


def test_the_why_answer_says_where_the_best_case_put_the_task_and_what_stayed_local() -> None:
    facts = with_verdict({**PLACEMENT, "best_case_plan": PLAN})
    assert facts["verdict"]["best_case_local_input_pct"] == 60.0
    first = render(facts).split("\n\n")[0]
    assert "It put `merge_bams` on `gpu01` instead of `gpu02`" in first
    assert "placed 19 of the 49 tasks on another node" in first
    assert "600 B (60.0%) of the task's input was local on `gpu01`" in first
    assert "against 25.0% on `gpu02` in this run" in first
    assert "read 1.29 TB from other nodes' outputs, against 2.27 TB" in first
    assert verify_answer(render(facts), facts).ok, verify_answer(render(facts), facts).reason()
    # a number the facts do not hold would not pass
    forged = render(facts).replace("19 of the 49", "17 of the 49")
    assert not verify_answer(forged, facts).ok


def test_the_same_node_and_the_same_placements_are_said_plainly() -> None:
    same = {**PLAN, "task_node": "gpu02", "tasks_placed_differently": 0}
    first = render(with_verdict({**PLACEMENT, "best_case_plan": same})).split("\n\n")[0]
    assert "It put `merge_bams` there too and placed every task where this run did." in first


def test_a_plan_of_another_case_than_the_best_is_not_described() -> None:
    facts = with_verdict({**PLACEMENT, "best_case_plan": {**PLAN, "case_id": "case-a"}})
    assert "best_case_local_input_pct" not in facts["verdict"]
    assert "It put" not in render(facts)


def test_a_runs_verdict_says_how_far_it_is_and_which_job_to_ask_about() -> None:
    from wass_chat.answers.run_status import RunStatusFacts, TaskState, run_verdict

    def run(*states: str) -> RunStatusFacts:
        tasks = [
            TaskState(task=f"t{i}", node="n1", state=s, job_id=str(100 + i))
            for i, s in enumerate(states)
        ]
        counts = {s: states.count(s) for s in states}
        return RunStatusFacts(
            kind="run_status",
            run_id="run-1",
            workflow="w",
            scheduler="heft",
            state_counts=counts,
            tasks=tasks,
            note="",
            verdict="",
        )

    assert run_verdict(run("SIMULATED", "SIMULATED")).startswith(
        "Run run-1 is a simulated plan (w by heft), never submitted to Slurm: its 2 tasks"
    )
    assert run_verdict(run("COMPLETED", "COMPLETED")) == (
        "Run run-1: 2 of 2 jobs completed; the run is finished."
    )
    mixed = run_verdict(run("COMPLETED", "FAILED", "PENDING", "RUNNING"))
    assert mixed.startswith("Run run-1: 1 of 4 jobs completed, 1 failed, 1 pending, 1 running.")
    assert mixed.endswith("Task t1 (job 101, on n1) ended failed.")


def test_an_accounting_periods_verdict_gives_waits_failures_and_requests() -> None:
    from wass_chat.answers.sacct_summary import SacctSummaryFacts, sacct_verdict

    stats = {
        "users": 3.0,
        "wait_median_s": 116.0,
        "wait_p90_s": 1707.0,
        "failure_rate": 0.1,
        "over_request_ratio": 2.86,
    }
    facts = SacctSummaryFacts(
        kind="sacct_summary",
        period="2024-01",
        user=None,
        jobs=1200,
        state_counts={},
        statistics=stats,
        insights=[],
        note="",
        verdict="",
    )
    assert sacct_verdict(facts) == (
        "1,200 jobs (2024-01) from 3 users: half waited under 1 min 56 s to start, 90% under "
        "28 min 27 s. 10.0% of finished jobs failed; completed jobs asked for 2.9x the "
        "walltime they used."
    )
    empty = SacctSummaryFacts(**{**facts, "jobs": 0, "user": "alice"})
    assert sacct_verdict(empty) == "No jobs of user alice in the accounting cache for 2024-01."
