"""The why-pending advice's start time, checked by running the changed job on the real cluster.

The queue: jobs that fill the cluster for one minute, two waves of higher-priority jobs that
will take all of it for the two minutes after, and the job asked about (1 CPU, ``--time=3``,
a low priority). The test asks "why is job N pending?", takes the advice "ask for --time=1",
checks that its start comes from the queue model and that the answer names what
``--test-only`` said beside it, cancels the job, submits the copy exactly as the advice
checked it, and reads when Slurm really starts it: within the stated bound of the answer's
prediction. (On this queue 22.05's ``--test-only`` agrees; where it does not, on a mixed queue,
is measured by ``wass-chat whatif validate-start``.) A job killed for memory before the queue
filled is asked about too: its advice's copy ("ask for --mem=...") is a newcomer queued behind
the waves, and Slurm starts it when the replay said, minutes out.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.slurm.conftest import Cluster
from tests.slurm.why_cases import (
    MEMORY_HOG,
    ask_offline,
    reset_cluster,
    run,
    sbatch,
    wait_for_reasons,
)
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.queue_model import live_queue, tolerance

pytestmark = [pytest.mark.slurm, pytest.mark.slow]  # the cluster fixture adds the xdist group

SHAPES = ("8", "4", "2", "2")
"""CPUs per job that fill n4, n3, n1 and n2 (8, 4, 2, 2 CPUs)."""
WAVES = 2
"""Full-cluster minutes queued behind the fill: enough that a newcomer's start is more than
twice the bound out (about 170 s against 130 s), each one more a minute of this test's wall."""


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    from wass_chat.config import settings

    previous = os.environ.get("WASS_HOME")
    os.environ["WASS_HOME"] = str(tmp_path)
    settings.cache_clear()
    yield tmp_path
    if previous is None:
        os.environ.pop("WASS_HOME", None)
    else:
        os.environ["WASS_HOME"] = previous
    settings.cache_clear()


def _start_of(job_id: str, timeout_s: float) -> datetime:
    deadline = time.monotonic() + timeout_s
    while True:
        out = run(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "Start"]).strip()
        if out and out != "Unknown":
            return datetime.fromisoformat(out)
        assert time.monotonic() < deadline, f"job {job_id} did not start in {timeout_s} s"
        time.sleep(1.0)


def _ended(job_id: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while run(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "State"]).strip() in (
        "",
        "PENDING",
        "RUNNING",
    ):
        assert time.monotonic() < deadline, f"job {job_id} did not end in {timeout_s} s"
        time.sleep(1.0)


def test_the_changed_copys_predicted_start_is_slurms_real_start(
    cluster: Cluster, home: Path
) -> None:
    reset_cluster()
    try:
        # a job killed for memory before the queue fills: its advice ("ask for --mem=...") is
        # a newcomer's, queued behind every pending job, as a fresh job of its size is here
        hog = sbatch("-n1", "--mem=50", "-t", "1", "--acctg-freq=1", wrap=MEMORY_HOG)
        _ended(hog, timeout_s=60)
        fill = [
            sbatch("-N1", "-c", cpus, "--mem=100M", "-t", "1", wrap="sleep 57") for cpus in SHAPES
        ]
        wait_for_reasons(dict.fromkeys(fill, "RUNNING"))  # the waves queue behind it
        for _wave in range(WAVES):
            for cpus in SHAPES:
                sbatch("-N1", "-c", cpus, "--mem=100M", "-t", "1", wrap="sleep 57")
        job = sbatch("-N1", "-c", "1", "--mem=100M", "-t", "3", "--nice=500", wrap="sleep 177")
        time.sleep(7.0)  # one backfill pass (bf_interval=5) has placed what it can
        facts = ask_offline(f"why is job {job} pending?")["facts"]
        shorter = [a for a in facts["advice"] if a["text"].startswith("ask for --time=1 ")]
        assert shorter, facts["advice"]
        advice = shorter[0]
        assert advice["start_source"] == "queue model" and advice["start"], advice
        predicted = datetime.fromisoformat(advice["start"])
        assert "sbatch --test-only accepts it" in advice["outcome"] and advice["test_only_start"]
        assert "within about 65 s of Slurm's own start" in advice["outcome"]  # the stated bound
        argv = shlex.split(advice["checked_with"])
        assert argv[:2] == ["sbatch", "--test-only"] and argv[-1] == "--wrap=true"
        asked = datetime.now()
        ended = ask_offline(f"why did job {hog} fail?")["facts"]
        more = [a for a in ended["advice"] if a["text"].startswith("ask for --mem=")]
        assert more and more[0]["start_source"] == "queue model" and more[0]["start"], ended
        assert "behind all" in more[0]["outcome"], more[0]
        after_waves = datetime.fromisoformat(more[0]["start"])
        run(["scancel", job])
        copy = sbatch(*argv[2:-1], wrap="sleep 57")
        hog_argv = shlex.split(more[0]["checked_with"])
        resubmitted = sbatch(*hog_argv[2:-1], wrap="sleep 57")
        real = _start_of(copy, timeout_s=360)
        _queue, _cluster, scheduler = live_queue(SlurmCommands())
        bound = timedelta(seconds=tolerance(scheduler))
        assert abs(real - predicted) <= bound, (real, predicted, advice)
        # the resubmitted job waits for the waves ahead of it, as the replay said
        # (--test-only, blind to them, says what it says beside it)
        assert after_waves - asked > 2 * bound, more[0]
        assert abs(_start_of(resubmitted, timeout_s=60) - after_waves) <= bound, more[0]
        # behind full waves a shorter limit gains nothing, and the answer must not say so
        assert advice["helps"] is not True, advice
    finally:
        reset_cluster()
