"""Learning a decision-log run without a cluster: the run's record, the jobs' own stamps or
sacct's times, the accounting cache; what the Slurm test (test_kb_learn.py) then runs for real.
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from kb.real_runs import failed_runs, learned_cases, real_case_id
from kb.store import KnowledgeBase
from sim.wfformat import workflow_to_dict
from tests.kb.learn_killed import example_platform, example_workflow
from wass_chat.learn.from_sacct import learn_from_sacct, run_of
from wass_chat.learn.learner import learn_finished
from wass_chat.learn.run_cases import finished_run, run_ended
from wass_chat.runlog import NOT_SUBMITTED, RunLog, RunRecord
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.parse import parse_sacct_text
from wass_chat.slurm.job_stamps import read_stamps, stamped_command
from wass_chat.slurm.runs import TaskStatus, platform_summary
from wass_chat.slurm.submission import job_name, plan_submission

RUN = "20260921-141320-abcd"
T0 = datetime(2026, 9, 21, 14, 13, 20)
REAL = {"prep": (0.0, 2.0), "work_a": (3.0, 4.0), "work_b": (3.0, 4.5), "merge": (6.0, 6.5)}
"""Seconds after T0 each task's job ran (sacct's whole seconds round these)."""


def test_a_stamped_command_keeps_its_exit_status_and_still_stamps_its_end(tmp_path: Path) -> None:
    out = tmp_path / "job.out"
    with out.open("w") as stdout:
        script = stamped_command(["sh", "-c", "sleep 0.1; exit 3"])
        done = subprocess.run(["sh", "-c", script], stdout=stdout)
    assert done.returncode == 3
    stamps = read_stamps(out)
    assert stamps is not None and stamps[1] - stamps[0] >= 0.1


def submitted(runlog: RunLog, out: Path, run_id: str = RUN) -> RunRecord:
    """The example planned as `submit` plans it, logged with job ids as `submit` logs them."""
    plan = plan_submission(example_workflow(), example_platform(), "heft", run_id, out)
    record = runlog.create(
        plan.workflow.name,
        workflow_to_dict(plan.workflow),
        platform_summary(plan),
        plan.scheduler,
        plan.planned_makespan,
        plan.decisions,
        run_id=run_id,
        occupancy=plan.occupancy.to_dict(),
        estimates=plan.estimates,
    )
    decisions = tuple(
        replace(d, job_id=str(200 + i), state="SUBMITTED", output=str(out / f"{d.task}.out"))
        for i, d in enumerate(record.decisions)
    )
    return runlog.update(record.run_id, state="submitted", decisions=decisions)


def statuses(record: RunRecord, state: str = "COMPLETED") -> list[TaskStatus]:
    """What squeue/sacct say of each job once the run ended (whole seconds, local time)."""
    found = []
    for d in record.decisions:
        start, end = REAL[d.task]
        found.append(
            TaskStatus(
                d.task,
                d.job_id,
                d.node,
                state if d.task == "merge" else "COMPLETED",
                d.node,
                _iso(start),
                _iso(end),
                "",
            )
        )
    return found


class SeenAccounting:
    """sacct's rows of the run's jobs as ``seen`` gives them: Slurm's accounting where there is
    no cluster (the store confirms a real run against it before writing its case)."""

    def __init__(self, record: RunRecord, seen: list[TaskStatus]) -> None:
        self.rows = {
            s.job_id: {
                "JobID": s.job_id,
                "JobName": job_name(record.run_id, s.task),
                "State": s.state,
                "NodeList": s.node or "None assigned",
                "Start": s.start,
                "End": s.end,
            }
            for s in seen
            if s.job_id
        }

    def accounting(self, job_ids: Any, fields: Any = ()) -> dict[str, dict[str, str]]:
        return {j: self.rows[j] for j in job_ids if j in self.rows}


def learn(record: RunRecord, seen: list[TaskStatus], kb: KnowledgeBase, runlog: RunLog) -> Any:
    """:func:`learn_finished` with ``seen`` as Slurm's accounting too."""
    kb.accounting = SeenAccounting(record, seen)
    return learn_finished(record, seen, kb, runlog)


def _iso(offset: float) -> str:
    return datetime.fromtimestamp(T0.timestamp() + int(offset)).isoformat()


def stamp(record: RunRecord) -> None:
    """Each job's own stamps, as its output file holds them (sub-second)."""
    for d in record.decisions:
        start, end = REAL[d.task]
        Path(d.output or "").write_text(
            f"wass-start {T0.timestamp() + start + 0.25}\nwass-end {T0.timestamp() + end + 0.25}\n"
        )


def test_a_run_has_ended_when_every_job_is_final_with_its_end(tmp_path: Path) -> None:
    record = submitted(RunLog(tmp_path / "runs"), tmp_path / "out")
    done = statuses(record)
    assert run_ended(record, done)
    assert not run_ended(record, [replace(done[0], state="RUNNING", end=""), *done[1:]])
    assert not run_ended(record, [replace(done[0], end="Unknown"), *done[1:]])  # sacct lags


def test_a_run_is_learned_from_its_stamps_once_and_the_log_says_so(tmp_path: Path) -> None:
    runlog = RunLog(tmp_path / "runs")
    record = submitted(runlog, tmp_path / "out")
    (tmp_path / "out").mkdir()
    stamp(record)
    kb = KnowledgeBase(tmp_path / "kb")
    try:
        learned = learn(record, statuses(record), kb, runlog)
        assert learned.added and learned.state == "COMPLETED" and learned.timing == "job stamps"
        assert learned.case_id == real_case_id(RUN)
        assert learned.real_makespan_s == pytest.approx(6.5)
        assert learned.predicted_makespan_s == pytest.approx(record.planned_makespan)
        logged = runlog.get(RUN)
        assert logged.state == "completed" and logged.learned == learned.case_id
        again = learn(logged, statuses(logged), kb, runlog)
        assert not again.added and "already learned" in again.line()
        (case,) = learned_cases(kb)
        assert case.real is not None and case.real.occupancy is not None
        assert case.real.estimates == "workflow"
        assert case.timeline["work_b"][1:] == pytest.approx((3.0, 4.5))
    finally:
        kb.close()


def test_without_every_stamp_the_times_are_sacct_seconds(tmp_path: Path) -> None:
    runlog = RunLog(tmp_path / "runs")
    record = submitted(runlog, tmp_path / "out")
    (tmp_path / "out").mkdir()
    stamp(record)
    Path(record.decisions[0].output or "").unlink()
    run = finished_run(record, statuses(record))
    assert run.known.timing == "sacct"
    assert run.tasks["work_b"].end - run.tasks["work_b"].start == 1.0  # type: ignore[operator]


def test_a_failed_run_is_logged_failed_and_kept_apart(tmp_path: Path) -> None:
    runlog = RunLog(tmp_path / "runs")
    record = submitted(runlog, tmp_path / "out")
    kb = KnowledgeBase(tmp_path / "kb")
    try:
        learned = learn(record, statuses(record, "FAILED"), kb, runlog)
        assert learned.kept_apart and "kept apart" in learned.line()
        assert runlog.get(RUN).state == "failed" and kb.count() == 0
    finally:
        kb.close()


def test_a_partly_submitted_run_whose_pending_jobs_were_cancelled_is_learned(
    tmp_path: Path,
) -> None:
    """sacct gives a job cancelled while pending a Start (its cancellation) and no node: it did
    not run. Learning such a run raised KeyError (its task had a time but no placement), and
    with it every `wass-chat runs`."""
    runlog = RunLog(tmp_path / "runs")
    record = submitted(runlog, tmp_path / "out")
    never = {"work_b": "CANCELLED", "merge": NOT_SUBMITTED}
    decisions = tuple(
        replace(d, job_id=None, state=NOT_SUBMITTED) if d.task == "merge" else d
        for d in record.decisions
    )
    record = runlog.update(RUN, state="partly submitted", decisions=decisions)
    seen = [
        replace(s, state="CANCELLED", node="", end=s.start) if s.task == "work_b" else s
        for s in statuses(record)
        if s.task != "merge"
    ]
    seen.append(TaskStatus("merge", None, "n1", NOT_SUBMITTED, "", "", "", ""))
    assert run_ended(record, seen)
    kb = KnowledgeBase(tmp_path / "kb")
    try:
        learned = learn(record, seen, kb, runlog)
        (case,) = failed_runs(kb)
        assert learned.kept_apart and set(case.timeline) == {"prep", "work_a"}
        assert case.real is not None
        assert {t: case.real.task_states[t] for t in never} == never
        assert runlog.get(RUN).state == "failed"
    finally:
        kb.close()


def test_the_products_jobs_are_told_by_comment_or_name() -> None:
    assert run_of(f"wass:v1:run={RUN};task=work_a;node=n1", None) == (RUN, "work_a")
    assert run_of(None, f"wass-{RUN}-work_a") == (RUN, "work_a")
    assert run_of("my own job", "analysis") is None and run_of(None, "wass-notarun") is None


def cached(tmp_path: Path, record: RunRecord, state: str = "COMPLETED") -> SacctCache:
    """The accounting cache after `wass-chat sacct import` of the run's jobs (sacct -P text)."""
    lines = ["JobID|JobName|State|NodeList|Submit|Start|End|Comment"]
    for d in record.decisions:
        start, end = REAL[d.task]
        final = state if d.task == "merge" else "COMPLETED"
        ended = "Unknown" if final == "RUNNING" else _iso(end)
        lines.append(
            f"{d.job_id}|wass-{RUN}-{d.task}|{final}|{d.node}|{_iso(-1)}|{_iso(start)}|"
            f"{ended}|wass:v1:run={RUN};task={d.task};node={d.node}"
        )
    lines.append(f"999|analysis|COMPLETED|n1|{_iso(-1)}|{_iso(0)}|{_iso(9)}|")
    lines.append(f"998|wass-20260101-000000-0000-x|COMPLETED|n1|{_iso(-1)}|{_iso(0)}|{_iso(9)}|")
    cache = SacctCache(tmp_path / "sacct")
    cache.write(parse_sacct_text("\n".join(lines)).jobs)
    return cache


def test_past_runs_are_learned_from_the_accounting_cache_as_live(tmp_path: Path) -> None:
    runlog = RunLog(tmp_path / "runs")
    record = submitted(runlog, tmp_path / "out")
    cache = cached(tmp_path, record)
    kb = KnowledgeBase(tmp_path / "kb", accounting=SeenAccounting(record, statuses(record)))
    try:
        found = learn_from_sacct(cache, runlog, kb)
        assert found.jobs == 5 and [x.case_id for x in found.learned] == [real_case_id(RUN)]
        assert "not in the decision log" in found.skipped["20260101-000000-0000"]
        assert found.learned[0].timing == "sacct"
        assert found.learned[0].real_makespan_s == pytest.approx(6.0)  # whole seconds
        again = learn_from_sacct(cache, runlog, kb)  # idempotent
        assert [x.added for x in again.learned] == [False] and kb.count() == 1
    finally:
        kb.close()


def test_a_run_still_going_in_the_cache_waits(tmp_path: Path) -> None:
    runlog = RunLog(tmp_path / "runs")
    record = submitted(runlog, tmp_path / "out")
    kb = KnowledgeBase(tmp_path / "kb")
    try:
        found = learn_from_sacct(cached(tmp_path, record, "RUNNING"), runlog, kb, only=RUN)
        assert found.learned == [] and "not ended in the cache" in found.skipped[RUN]
    finally:
        kb.close()


def test_runs_with_slurm_away_lists_the_runs_as_logged_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from wass_chat.cli import main
    from wass_chat.config import settings

    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "no-such" / "slurm.conf"))
    settings.cache_clear()
    try:
        submitted(RunLog(tmp_path / "home" / "runs"), tmp_path / "out")
        assert main(["runs", "--json"]) == 0
        captured = capsys.readouterr()
        (row,) = json.loads(captured.out)
        assert row["run_id"] == RUN and row["state"] == "submitted" and row["learned"] is None
        assert "states as last logged" in captured.err and "slurm.conf" in captured.err
    finally:
        settings.cache_clear()


def test_kb_learn_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from wass_chat.cli import main
    from wass_chat.config import settings

    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    settings.cache_clear()
    try:
        assert main(["kb", "learn"]) == 2
        assert "give a run id, or --from-sacct" in capsys.readouterr().err
        assert main(["kb", "learn", "20260101-000000-0000"]) == 2
        assert "No run '20260101-000000-0000'" in capsys.readouterr().err
        assert main(["submit", "demo:fork-join-20", "--estimates", "guess", "--yes"]) == 2
        assert "choose workflow or kb" in capsys.readouterr().err
        assert not (tmp_path / "home" / "runs").exists()  # nothing half-written
        assert main(["sim-to-real", "report", "--kb", str(tmp_path / "kb")]) == 0
        assert "no learned run yet" in capsys.readouterr().out
    finally:
        settings.cache_clear()


def test_a_forged_timeline_sacct_does_not_confirm_is_refused(tmp_path: Path) -> None:
    """A job output file edited to stretch a task (to steer ``--estimates kb``) disagrees with
    sacct's times for that job: the run is not learned and the store is left as it was."""
    from wass_chat.learn.run_cases import SacctDisagrees

    runlog = RunLog(tmp_path / "runs")
    record = submitted(runlog, tmp_path / "out")
    (tmp_path / "out").mkdir()
    stamp(record)
    forged = next(d for d in record.decisions if d.task == "work_a")
    start = T0.timestamp() + REAL["work_a"][0]
    Path(forged.output or "").write_text(f"wass-start {start}\nwass-end {start + 8471.0}\n")
    kb = KnowledgeBase(tmp_path / "kb")
    try:
        with pytest.raises(SacctDisagrees, match=r"task work_a: its stamps say 8471\.0 s"):
            learn(record, statuses(record), kb, runlog)
        assert kb.count() == 0 and learned_cases(kb) == []
        assert runlog.get(RUN).learned is None
    finally:
        kb.close()
