"""A workflow's ``command`` reaches the job as the literal argv of the file (#45 item 4):
``["$(touch FILE)"]`` created FILE on submit, because the words were joined and run by a shell.

The job script is checked twice: run by ``/bin/sh`` here (what sbatch's ``--wrap`` runs), and
submitted to the real cluster, where the job's own output shows each word arrived as written
and no marker file appears.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sim.model import Task, Workflow
from sim.wfformat import read_workflow, write_workflow
from tests.slurm.conftest import Cluster, wait_for_final
from wass_chat.cli import main
from wass_chat.runlog import RunLog
from wass_chat.slurm.job_stamps import stamped_command


def hostile_words(folder: Path) -> tuple[str, ...]:
    """Arguments that a shell would run, expand or split, each naming a marker file."""
    return (
        f"$(touch {folder}/by-substitution)",
        f"`touch {folder}/by-backticks`",
        f"a b; touch {folder}/by-semicolon",
        f"x\ntouch {folder}/by-newline",
        "$HOME",
        "*",
        "it's",
    )


def markers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("by-*"))


def test_the_job_script_passes_every_word_literally(tmp_path: Path) -> None:
    words = hostile_words(tmp_path)
    script = stamped_command(("printf", "<%s>\\n", *words))
    done = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.split("\n", 1)[1].rsplit("\nwass-end", 1)[0]  # between the stamps
    assert printed == "".join(f"<{w}>\n" for w in words).rstrip("\n")
    assert markers(tmp_path) == []


def test_a_workflow_file_keeps_each_argument_as_written(tmp_path: Path) -> None:
    words = hostile_words(tmp_path)
    path = tmp_path / "w.json"
    write_workflow(Workflow("w", (Task("t", 1e9, command=("echo", *words)),), ()), path)
    assert read_workflow(path).tasks[0].command == ("echo", *words)


@pytest.mark.slurm
@pytest.mark.xdist_group("slurm")
def test_the_cluster_runs_the_literal_argv_and_creates_no_file(
    cluster: Cluster, wass_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = hostile_words(tmp_path)
    tasks = (
        Task("first", 1e9, command=("printf", "<%s>\\n", *words)),
        Task("second", 1e9, command=("/bin/echo", *words), parents=("first",)),
    )
    path = tmp_path / "hostile.json"
    write_workflow(Workflow("hostile", tasks, ()), path)
    assert main(["submit", str(path), "--yes"]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "'$(touch" in printed  # the plan shown quotes the words as the job gets them
    record = RunLog(wass_home / "runs").list_runs()[0]
    rows = wait_for_final(list(record.job_ids), timeout=90)
    assert {r["State"].split()[0] for r in rows.values()} == {"COMPLETED"}, rows
    outputs = {d.task: Path(d.output or "").read_text() for d in record.decisions}
    assert "".join(f"<{w}>\n" for w in words) in outputs["first"]
    assert " ".join(words) + "\n" in outputs["second"]
    assert markers(tmp_path) == []
