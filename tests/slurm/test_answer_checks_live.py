"""Answers about real jobs finish the thought and hold together (issue 31 item 2), on the local
cluster: a failed job's files, the last lines of its error output and the job it strands; the
efficiency code's advice for a job that used little of what it held; one start time for a job
waiting behind a 16-CPU job named with its whole size; a queue whose reasons tie. Every answer's
numbers and clock times are checked against its facts
(:mod:`wass_chat.answers.checks.answer_check`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.slurm.conftest import Cluster, wait_for_final
from tests.slurm.why_cases import (
    reset_cluster,
    run,
    sbatch,
    shrunk_partition_job,
    wait_for_reasons,
)
from wass_chat.analytics.job_efficiency import efficiency_suggestions
from wass_chat.answers.checks.answer_check import problems
from wass_chat.answers.kinds import render
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.explain import explain_job
from wass_chat.slurm.explain.queue import queue_overview

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]

FAILING = """#!/bin/bash
echo "reading input.csv"
echo "Traceback (most recent call last):" >&2
echo "FileNotFoundError: [Errno 2] No such file or directory: 'input.csv'" >&2
exit 3
"""


@pytest.fixture(scope="module")
def jobs(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A failed job with a dependant, a job that used none of its 4 CPUs, an array whose tasks
    ended differently, then a 16-CPU job
    with a job waiting behind it and two that need a person (too big for its partition, held).
    Whatever it made goes again even when making it fails half-way, so the next module finds
    the idle cluster it needs."""
    reset_cluster()
    try:
        yield _make_jobs(tmp_path_factory.mktemp("answers"))
    finally:
        reset_cluster()


def _make_jobs(work: Path) -> dict[str, str]:
    work.chmod(0o755)
    script = work / "fail.sh"
    script.write_text(FAILING)
    script.chmod(0o755)
    made: dict[str, str] = {}
    made["failed"] = sbatch(
        "-N1",
        "-n1",
        "-J",
        "reader",
        "-D",
        str(work),
        "-o",
        "out-%j.txt",
        "-e",
        "err-%x-%j.txt",
        wrap=f"{script}",
    )
    made["stranded"] = sbatch("-n1", f"--dependency=afterok:{made['failed']}", "-o", "/dev/null")
    made["idle"] = sbatch(
        "-N1", "-n4", "--mem=2000M", "--acctg-freq=1", "-o", "/dev/null", wrap="sleep 4"
    )
    made["array"] = sbatch("-n1", "--array=1-2", wrap="exit $(( SLURM_ARRAY_TASK_ID - 1 ))")
    wait_for_final([made["failed"], made["idle"], f"{made['array']}_1", f"{made['array']}_2"])
    made["hog"] = sbatch("-n16", "--time=30", "-o", "/dev/null")
    wait_for_reasons({made["hog"]: "RUNNING"})
    made["behind"] = sbatch("-n2", "--time=10", "-o", "/dev/null")
    # not --ntasks=64, which 24.11's sbatch refuses at submission: a partition that shrinks
    # under its job, which every version queues as PartitionConfig
    made["too_big"] = shrunk_partition_job()
    made["held"] = sbatch("-H", "-n1", "-o", "/dev/null")
    wait_for_reasons(
        {
            made["behind"]: "Resources",
            made["too_big"]: "PartitionConfig",
            made["stranded"]: "DependencyNeverSatisfied",
        }
    )
    return made


def _answer(job_id: str) -> tuple[dict[str, object], str]:
    # the advice the agent gives: explain_job is told the efficiency code's suggestions
    facts = dict(explain_job(SlurmCommands(timeout=15), job_id, suggestions=efficiency_suggestions))
    text = render(facts)
    assert problems(text, facts) == [], text
    return facts, text


def test_a_failed_job_gives_its_files_its_last_error_lines_and_the_job_it_strands(
    jobs: dict[str, str],
) -> None:
    failed = jobs["failed"]
    facts, text = _answer(failed)
    assert f"Job {failed} failed: its script exited with status 3" in str(facts["verdict"])
    assert f"It strands 1 pending job (job {jobs['stranded']})" in str(facts["verdict"])
    paths = {f["stream"]: f["path"] for f in facts["files"]}  # type: ignore[attr-defined]
    assert paths["output"].endswith(f"/out-{failed}.txt")  # %j expanded by Slurm
    assert paths["error"].endswith(f"/err-reader-{failed}.txt")  # %x and %j
    assert facts["error_tail"] == [
        "Traceback (most recent call last):",
        "FileNotFoundError: [Errno 2] No such file or directory: 'input.csv'",
    ]
    assert "fix the batch script, which exited with status 3" in text
    assert f"- job `{jobs['stranded']}` of `root`: `afterok:{failed}(failed)`" in text


def test_a_job_that_used_none_of_its_4_cpus_gets_the_efficiency_advice(
    jobs: dict[str, str],
) -> None:
    facts, text = _answer(jobs["idle"])
    assert "It kept its 4 CPUs 0% busy" in str(facts["verdict"])
    assert "x 4 CPUs =" in str(facts["verdict"])  # what the CPU time is measured against
    assert "**What to change next time:**" in text and "--mem=256M" in text


def test_an_arrays_id_names_its_task_the_other_tasks_and_the_owner(jobs: dict[str, str]) -> None:
    """``/why 12`` of an array answers about the task Slurm numbers 12 (sacct's JobIDRaw), not
    the first task's accounting beside another task's record, and says how the others ended."""
    array = jobs["array"]
    rows = run(["sacct", "-n", "-P", "-X", "-j", array, "-o", "JobID,JobIDRaw,State"])
    lines = (r.split("|") for r in rows.splitlines())
    tasks = {job: (raw, state.split()[0]) for job, raw, state in lines}
    assert sorted(s for _, s in tasks.values()) == ["COMPLETED", "FAILED"]
    own = next(job for job, (raw, _) in tasks.items() if raw == array)
    facts, _ = _answer(array)
    assert facts["state"] == tasks[own][1]
    others = [{"job_id": j, "state": s} for j, (_, s) in tasks.items() if j != own]
    assert facts["array_tasks"] == others
    verdict = str(facts["verdict"])
    assert f"This is array {array}'s task {own.split('_')[1]}; its other tasks: " in verdict
    assert f"{others[0]['job_id']} {others[0]['state']}" in verdict
    owner = [e["value"] for e in facts["evidence"] if e["field"] in ("UserId", "User")]  # type: ignore[attr-defined]
    assert owner and owner[0].split("(")[0] == "root"


def test_a_job_behind_a_16_cpu_job_gets_one_start_time_and_the_blockers_whole_size(
    jobs: dict[str, str],
) -> None:
    facts, _text = _answer(jobs["behind"])
    verdict = str(facts["verdict"])
    # the nodes Slurm plans on, or every node it could use: either way the job's 16 CPUs
    assert f"job {jobs['hog']} of user root (16 CPUs on n[1-4]) holds all" in verdict or (
        f"job {jobs['hog']} of user root holds all 16 CPUs of n1, n2, n3 and n4" in verdict
    )
    assert "about" not in verdict  # the one start time is the expected start's
    source, note = facts["expected_start_source"], str(facts["expected_start_note"])
    assert facts["expected_start"] and source in {"slurm", "queue model", "replay"}
    assert "Slurm's estimate" in note if source == "slurm" else "our replay" in note


def test_the_queue_headline_counts_who_needs_a_person(jobs: dict[str, str]) -> None:
    facts = dict(queue_overview(SlurmCommands(timeout=15)))
    text = render(facts)
    assert problems(text, facts) == [], text
    pending = len(run(["squeue", "-h", "-t", "PD", "-o", "%i"]).split())
    assert facts["pending"] == pending == 4
    assert "no reason is more common than another" in str(facts["verdict"])
    assert "3 of the 4 need a person to act" in str(facts["verdict"])


def test_the_answers_live_files_are_real(jobs: dict[str, str]) -> None:
    facts, _ = _answer(jobs["failed"])
    for item in facts["files"]:  # type: ignore[attr-defined]
        assert Path(item["path"]).is_file()
