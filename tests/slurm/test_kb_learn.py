"""The cluster's own runs teach the knowledge base (issue 32), on the real local cluster.

One small workflow (tests/slurm/fixtures/kb-learning.json: four tasks of 0.5-1.5 s of real
work whose stated runtimes are four times too long, as users' requests are) is submitted three
times with ``--estimates kb``, each time with the explicit approval (``--yes``); ``wass-chat
status`` sees each run end and learns it. Checked: three real cases (``slurm:<run id>``); each
plan's runtimes came from the runs before it (the first from none); the third plan's per-task
error (``wass-chat sim-to-real report``) is below the first's, by far: the first planned on 4x
runtimes, the third on measured ones; learning again, live or from the accounting cache, stores
nothing twice; the explanation of a task's node cites a real run. The errors' sizes depend on
the machine's load, so only their order is asserted; the test prints them.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kb.real_runs import learned_cases
from kb.store import KnowledgeBase
from sim.wfformat import read_workflow
from tests.slurm.conftest import Cluster, wait_for_final
from tests.support import data_home
from wass_chat.cli import main

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]

WORKFLOW = Path(__file__).parent / "fixtures" / "kb-learning.json"
REAL_SECONDS = {t.id: float((t.command or ("", "0"))[1]) for t in read_workflow(WORKFLOW).tasks}
"""Each task's command is ``sleep SECONDS``: what it really takes."""
STATED = {t.id: t.runtime / REAL_SECONDS[t.id] for t in read_workflow(WORKFLOW).tasks}["prep"]
"""Stated runtime over real (4 for every task): what the first plan (no history) plans on."""


def cli(*argv: str) -> Any:
    """The real CLI in this process; its ``--json`` document."""
    out = io.StringIO()
    with redirect_stdout(out):
        code = main([*argv, "--json"])
    assert code == 0, out.getvalue()
    return json.loads(out.getvalue())


@dataclass(frozen=True)
class ThreeRuns:
    home: Path
    run_ids: list[str]
    submitted: list[dict[str, Any]]
    statuses: list[dict[str, Any]]
    report: dict[str, Any]


@pytest.fixture(scope="module")
def three_runs(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreeRuns]:
    home = tmp_path_factory.mktemp("kblearn") / "home"
    with data_home(home):
        run_ids, submitted, statuses = [], [], []
        for _ in range(3):
            plan = cli("submit", str(WORKFLOW), "--estimates", "kb", "--yes")
            wait_for_final(list(plan["jobs"].values()), timeout=120)
            status = cli("status", plan["run_id"])  # sees the run end and learns it
            if status["learned"] is None:  # sacct had not the last End yet: look again
                wait_for_final(list(plan["jobs"].values()), timeout=30)
                status = cli("status", plan["run_id"])
            run_ids.append(plan["run_id"])
            submitted.append(plan)
            statuses.append(status)
        yield ThreeRuns(home, run_ids, submitted, statuses, cli("sim-to-real", "report"))


def test_three_submissions_leave_three_real_cases(three_runs: ThreeRuns) -> None:
    for status in three_runs.statuses:
        learned = status["learned"]
        assert learned["added"] and learned["state"] == "COMPLETED"
        assert learned["timing"] == "job stamps"  # the commands stamped their own times
        assert {t["state"] for t in status["tasks"]} == {"COMPLETED"}
    kb = KnowledgeBase(three_runs.home / "kb")
    try:
        cases = learned_cases(kb)
    finally:
        kb.close()
    assert [c.source for c in cases] == [f"slurm:{r}" for r in three_runs.run_ids]
    for case in cases:
        for task, seconds in REAL_SECONDS.items():
            _, start, end = case.timeline[task]
            assert end - start >= seconds  # a sleep lasts at least its time


def test_each_plan_used_the_real_runs_before_it(three_runs: ThreeRuns) -> None:
    first, second, third = (s["estimates"] for s in three_runs.submitted)
    assert "no real run matched" in first or "no similar case" in first
    assert f"1 real run ({three_runs.run_ids[0]})" in second
    assert f"2 real runs ({', '.join(three_runs.run_ids[:2])})" in third


def test_the_third_plans_runtimes_are_closer_to_what_ran_than_the_first(
    three_runs: ThreeRuns,
) -> None:
    report = three_runs.report
    runs = report["runs"]
    assert [r["run_id"] for r in runs] == three_runs.run_ids
    mape = [r["per_task_mape"] for r in runs]
    print(
        "\nper-task runtime error (MAPE) of the three plans: "
        + ", ".join(f"{100 * m:.1f}%" for m in mape)
        + "; makespan error: "
        + ", ".join(f"{100 * r['makespan_error']:.1f}%" for r in runs)
        + " (wass-chat sim-to-real report)"
    )
    assert mape[2] < mape[0]
    assert mape[0] > STATED - 1.5  # planned on 4x the real runtimes: about 300% off
    assert {g["key"] for g in report["by_category"]} == {"kbl-prep", "kbl-work", "kbl-merge"}
    assert sum(g["tasks"] for g in report["by_node"]) == 12
    assert report["failed_runs"] == 0 and report["per_task_mape"] is not None


def test_learning_again_live_or_from_the_accounting_cache_stores_nothing_twice(
    three_runs: ThreeRuns,
) -> None:
    again = cli("kb", "learn", three_runs.run_ids[0])
    assert (
        again["added"] is False and again["case_id"] == three_runs.statuses[0]["learned"]["case_id"]
    )
    now = datetime.now().replace(microsecond=0)
    start, end = now - timedelta(hours=1), now + timedelta(minutes=1)
    cli("sacct", "import", "--start", start.isoformat(), "--end", end.isoformat())
    cached = cli("kb", "learn", "--from-sacct")
    assert sorted(x["run_id"] for x in cached["learned"]) == sorted(three_runs.run_ids)
    assert not any(x["added"] for x in cached["learned"])
    assert cached["jobs"] >= 12
    runs = cli("runs")
    assert [r["learned"] is not None for r in runs] == [True, True, True]
    kb = KnowledgeBase(three_runs.home / "kb")
    try:
        assert len(learned_cases(kb)) == 3
    finally:
        kb.close()


def test_the_explanation_of_a_tasks_node_cites_a_real_run(three_runs: ThreeRuns) -> None:
    from wass_chat.agent.facts.workflow_tools import WorkflowTools
    from wass_chat.answers.kinds import with_verdict
    from wass_chat.answers.placement import render_placement
    from wass_chat.config import Settings

    facts = WorkflowTools(Settings(home=three_runs.home)).explain_placement(
        run=three_runs.run_ids[2], task="work_a"
    )
    real = facts["real_case"]
    assert real["run"]["run_id"] in three_runs.run_ids[:2]  # an earlier run, not itself
    assert real["task_real_s"] >= REAL_SECONDS["work_a"]
    assert real["confirmation"] == "confirmed by sacct, checked again now"  # real sacct, read time
    text = render_placement(with_verdict(facts)).replace("`", "")
    print("\n" + text.split("\n")[0])
    assert f"The real run {real['run']['run_id']} of {real['run']['date']}" in text
    assert "our simulation of it said" in text
    assert any(c.get("real") for c in facts["cases"])  # retrieval ranks the real runs first
