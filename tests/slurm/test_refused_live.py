"""Refused and impossible requests on the real cluster (issue 41 item 6): a ``--mem`` beyond
every node, which sbatch refuses, and ``-N5`` on a 4-node partition with a drained node.

sbatch refuses ``--mem=64G`` on every version ("Requested node configuration is not
available"; the largest node, n4, has 8000 MB), but what accounting keeps of it differs: Slurm
22.05 records the refusal as a job, ``FAILED`` with exit ``1:0`` and no node, which the
why-answer once read as "its script exited with status 1". The answer must say it never
started and why, and the report must count it as a refusal, not a failure. ``-N5`` on the
4-node partition, n3 drained: 22.05 and 26.05 queue it as PartitionNodeLimit, 24.11 refuses it
at submission (and records it as 22.05 records the ``--mem`` refusal); either answer names the
drained node with the admin's reason and offers ``--nodes=3``, checked with ``sbatch
--test-only``. (26.05 and 24.11 record both refusals too, Start ``None``.) Every answer passes
the answer checker.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest

from tests.slurm.conftest import Cluster
from tests.slurm.why_cases import reset_cluster, run, sbatch, wait_for_reasons
from wass_chat.analytics.analysis import analyze
from wass_chat.analytics.period import FAILURE_STATES, REFUSED, load_period
from wass_chat.answers.checks.answer_check import problems
from wass_chat.answers.kinds import render
from wass_chat.sacct.fetch import fetch_sacct
from wass_chat.sacct.parse import parse_sacct_text
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.explain import explain_job

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]

DRAIN_REASON = "disk swap"
REFUSAL = "Requested node configuration is not available"


@dataclass(frozen=True)
class Made:
    start: datetime
    refused: str | None
    """The job id accounting gave the refused ``--mem=64G`` (None where it keeps none)."""
    wide: str | None
    """The ``-N5`` job's id (queued, or as accounting keeps the refusal)."""
    wide_refused: bool


@pytest.fixture(scope="module")
def made(cluster: Cluster) -> Iterator[Made]:
    reset_cluster()
    try:
        yield _make(cluster)
    finally:
        reset_cluster()


def _make(cluster: Cluster) -> Made:
    start = datetime.now().replace(microsecond=0) - timedelta(seconds=2)
    _refused_by_sbatch("--mem=64G")
    run(["scontrol", "update", "NodeName=n3", "State=DRAIN", f"Reason={DRAIN_REASON}"])
    wide_refused = {"22.05": False, "24.11": True, "26.05": False}[cluster.version]
    if wide_refused:
        _refused_by_sbatch("-N5")
        wide = _refused_job(start, "node=5")
    else:
        wide = sbatch("-N5", "--time=5")
        wait_for_reasons({wide: "PartitionNodeLimit"})
    return Made(start, _refused_job(start, "mem=64G"), wide, wide_refused)


def _refused_by_sbatch(option: str) -> None:
    argv = ["sbatch", "--parsable", "--output=/dev/null", "--time=5", option, "--wrap=true"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0 and REFUSAL in done.stderr, (option, done.stdout, done.stderr)


def _refused_job(since: datetime, tres: str, timeout: float = 10.0) -> str | None:
    """The id sacct gives the refused submission whose ReqTRES holds ``tres`` (sacct lags the
    controller), or None when it keeps no record."""
    deadline = time.monotonic() + timeout
    while True:
        out = run(
            ["sacct", "-a", "-X", "-n", "-P", "-S", since.isoformat(), "-o", "JobID,ReqTRES,State"]
        )
        rows = [line.split("|") for line in out.splitlines()]
        found = [
            job for job, asked, state in rows if tres in asked.split(",") and state == "FAILED"
        ]
        if found or time.monotonic() > deadline:
            return found[0] if found else None
        time.sleep(0.5)


def _answer(job_id: str) -> tuple[dict[str, object], str]:
    facts = dict(explain_job(SlurmCommands(timeout=15), job_id))
    text = render(facts)
    assert problems(text, facts) == [], text
    return facts, text


def test_a_refused_submission_never_started_and_says_why(made: Made, cluster: Cluster) -> None:
    assert made.refused is not None, "every version keeps the refusal in accounting"
    facts, text = _answer(made.refused)
    verdict = str(facts["verdict"])
    assert facts["reason_class"] == "refused", verdict
    assert verdict.startswith(f"Job {made.refused} never started: Slurm refused it at submission")
    assert "64G" in verdict and "n4, has 8000 MB" in verdict, verdict
    assert "exited with status" not in text and "killed by signal" not in text
    assert "fix the batch script" not in text  # no script ran


def test_the_report_counts_a_refusal_as_no_failure(made: Made) -> None:
    end = datetime.now() + timedelta(minutes=1)
    text = "".join(chunk.text for chunk in fetch_sacct(made.start, end))  # as import does
    analysis = analyze(parse_sacct_text(text).jobs.lazy(), made.start, end, compare=False)
    loaded = load_period(parse_sacct_text(text).jobs.lazy(), analysis.period)
    state_of = dict(loaded.select("job_id", "state").iter_rows())
    ours = [made.refused, made.wide] if made.wide_refused else [made.refused]
    assert [state_of[j] for j in ours if j] == [REFUSED] * len(ours)
    s = analysis.summary
    assert s.refused == s.state_counts[REFUSED] >= len(ours)
    failed = sum(s.state_counts.get(x, 0) for x in FAILURE_STATES)  # the refusals in no rate
    assert s.failure_rate == (pytest.approx(failed / s.finished) if s.finished else None)


def test_a_job_wider_than_the_partition_names_the_drained_node(made: Made) -> None:
    assert made.wide is not None, "24.11 keeps its refusal of -N5 in accounting"
    facts, _text = _answer(made.wide)
    verdict = str(facts["verdict"])
    if made.wide_refused:
        assert facts["reason_class"] == "refused", verdict
        assert "it asked for 5 nodes and partition debug has 4" in verdict, verdict
    else:
        assert facts["reason"] == "PartitionNodeLimit", verdict
        assert "asks for 5 nodes and the partition has 4" in verdict, verdict
    assert "Only 3 of its 4 nodes take jobs now: n3 is drained" in verdict, verdict
    assert f'"{DRAIN_REASON}"' in verdict
    advice = {a["text"]: a for a in facts["advice"]}  # type: ignore[attr-defined]
    fewer = advice["ask for --nodes=3 (the partition's nodes that take jobs now)"]
    assert fewer["helps"] is True and "--test-only" in fewer["checked_with"]
    assert "--nodes=3" in fewer["checked_with"]
    assert not any("--nodes=4" in a["checked_with"] for a in advice.values())
