"""The submission journal and the decision log without a cluster: what a killed submission leaves
is read back whole, a record that cannot be read hides no other run (the live faults are in
test_submission_faults.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sim.atomic_files import OutputError
from sim.errors import InputError
from tests.kb.learn_killed import example_platform, example_workflow
from wass_chat.run_journal import SubmissionJournal, journal_path, read_journal, submitter_alive
from wass_chat.runlog import NOT_SUBMITTED, SUBMITTING, RunLog, begin_submission
from wass_chat.slurm.commands import NamedJob, SlurmCommands
from wass_chat.slurm.plan_digest import plan_digest, plan_document
from wass_chat.slurm.recovery import CREDENTIAL_LIFE, reconcile
from wass_chat.slurm.resume import resumption
from wass_chat.slurm.runs import planned_record
from wass_chat.slurm.submission import plan_submission

RUN = "20261202-010000-beef"
TASKS = ["prep", "work_a", "work_b", "merge"]


def planned(runlog: RunLog, tmp_path: Path) -> None:
    """The example's record as a submission writes it before its first sbatch (its plan
    approved), journal open."""
    plan = plan_submission(example_workflow(), example_platform(), "heft", RUN, tmp_path / "out")
    approved = (plan_digest(plan), plan_document(plan))
    journal = begin_submission(runlog, planned_record(plan, approved))
    journal.__exit__(None, None, None)  # as a killed submitter leaves it: lock gone


class NoJobs(SlurmCommands):
    """A controller that has no job of any name (no cluster needed)."""

    def jobs_named(self, names: object, since: str) -> list[NamedJob]:
        return []


def test_a_journal_reads_back_its_lines_not_a_torn_one_nor_the_reserved_room(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jobs"
    with SubmissionJournal(path, TASKS) as journal:
        assert submitter_alive(path)  # the lock is held from the first look
        journal.attempting("prep")
        journal.submitted("prep", "101")
        journal.attempting("work_a")
        live = read_journal(path)
        assert live is not None and live.live and live.state == "submitting"
    raw = path.read_bytes()
    assert raw.endswith(b"\0") and len(raw) > 200  # room reserved for every line to come
    end = raw.index(b"\0")
    path.write_bytes(raw[:end] + b'{"job":"work_a","i' + raw[end + 18 :])  # a write cut short
    state = read_journal(path)
    assert state is not None and not state.live
    assert state.jobs == {"prep": "101"} and state.uncertain == ("work_a",)
    assert state.state == "interrupted"
    assert read_journal(tmp_path / "none.jobs") is None


def test_a_refused_sbatch_and_a_stop_are_journaled(tmp_path: Path) -> None:
    path = tmp_path / "run.jobs"
    with SubmissionJournal(path, TASKS) as journal:
        journal.attempting("prep")
        journal.refused("prep")
        journal.stopped("x" * 10_000)  # cut to the room reserved for it
    state = read_journal(path)
    assert state is not None and state.state == "partly submitted"
    assert state.uncertain == () and state.refused == {"prep"}
    assert state.stopped is not None and 0 < len(state.stopped) < 2048


def test_a_killed_submission_reads_interrupted_with_every_job_it_journaled(
    tmp_path: Path,
) -> None:
    runlog = RunLog(tmp_path / "runs")
    planned(runlog, tmp_path)
    path = journal_path(runlog.path(RUN))
    with path.open("r+b") as fh:  # what the killed process had written
        fh.write(b'{"sbatch":"prep"}\n{"job":"prep","id":"7"}\n{"sbatch":"work_a"}\n')
    record = runlog.get(RUN)
    assert record.state == "interrupted" and record.job_ids == ("7",)
    states = {d.task: d.state for d in record.decisions}
    assert states["prep"] == "SUBMITTED" and states["work_a"] == SUBMITTING
    assert record.decision("prep").output == str(tmp_path / "out" / f"wass-{RUN}-prep-7.out")
    assert record.jobs_line == "1 of 4 jobs"


def test_an_unanswered_sbatch_stays_uncertain_while_slurm_may_still_take_it_in(
    tmp_path: Path,
) -> None:
    """A frozen controller serves a waiting sbatch when it resumes: until that sbatch's
    credential expires, no job in Slurm is not "no job", and resume refuses to double it."""
    runlog = RunLog(tmp_path / "runs")
    planned(runlog, tmp_path)
    path = journal_path(runlog.path(RUN))
    before = int(time.time())
    with SubmissionJournal(path, TASKS) as journal:  # room for a line with its time
        journal.attempting("prep")
    began = read_journal(path)
    assert began is not None and before <= began.attempted_at["prep"] <= time.time()
    record = reconcile(runlog.get(RUN), NoJobs(), runlog)
    assert record.decision("prep").state == SUBMITTING and record.state == "partly submitted"
    assert runlog.get(RUN).decision("prep").sbatch_at is not None  # kept once settled
    with pytest.raises(InputError, match="may still take it in until"):
        resumption(runlog.get(RUN), NoJobs(), runlog)
    for _ in range(2):
        again = reconcile(runlog.get(RUN), NoJobs(), runlog)
    assert (again.error or "").count("no job of prep yet") == 1, again.error  # said once
    # Once the credential has expired, Slurm cannot take it in any more: not submitted
    late = RunLog(tmp_path / "late")
    planned(late, tmp_path)
    with journal_path(late.path(RUN)).open("r+b") as fh:
        fh.write(b'{"sbatch":"prep","at":%d}\n' % int(time.time() - CREDENTIAL_LIFE - 1))
    settled = reconcile(late.get(RUN), NoJobs(), late)
    assert settled.decision("prep").state == NOT_SUBMITTED and settled.state == "failed"


def test_no_journal_no_record_and_no_submission_when_the_journal_cannot_be_made(
    tmp_path: Path,
) -> None:
    (tmp_path / "runs").write_text("a file where the folder should be")
    runlog = RunLog(tmp_path / "runs")
    plan = plan_submission(example_workflow(), example_platform(), "heft", RUN, tmp_path / "out")
    with pytest.raises(OutputError):
        begin_submission(runlog, planned_record(plan))


def test_a_broken_record_is_one_line_and_hides_no_other_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    runlog = RunLog(home / "runs")
    planned(runlog, tmp_path)
    journal_path(runlog.path(RUN)).unlink()  # died before its first sbatch: nothing submitted
    good = runlog.path(RUN).read_text()
    (home / "runs" / "20261202-020000-0001.json").write_text(good[: len(good) // 2])
    doc = json.loads(good)
    del doc["scheduler"]
    (home / "runs" / "20261202-020000-0002.json").write_text(json.dumps(doc))
    (home / "runs" / "20261202-020000-0003.json").write_text("[1, 2]")
    records, broken = runlog.scan()
    assert [r.run_id for r in records] == [RUN] and records[0].state == "interrupted"
    assert [line.split(" not listed:")[0] for line in broken] == [
        "run 20261202-020000-0001",
        "run 20261202-020000-0002",
        "run 20261202-020000-0003",
    ]
    assert all("\n" not in line for line in broken)
    done = subprocess.run(
        [sys.executable, "-m", "wass_chat.cli", "runs", "--no-learn", "--json"],
        env={**os.environ, "WASS_HOME": str(home), "SLURM_CONF": str(tmp_path / "no-slurm")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [r["run_id"] for r in json.loads(done.stdout)] == [RUN]
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: run ")]
    assert len(warnings) == 3 and "scheduler" in warnings[1], done.stderr
    assert "not reconciled with Slurm" in done.stderr  # Slurm away here: shown as logged
