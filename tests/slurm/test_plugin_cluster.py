"""job_submit.lua inside the real slurmctld: decision and inference modes, a fuzz sample."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from tests.slurm.conftest import Cluster, wait_for_final
from tests.slurm.plugin_cases import CLUSTER, Job, fuzz_jobs, random_head
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.nodes import platform_from_slurm
from wass_chat.slurm.plugin import install_plugin, render_plugin
from wass_chat.slurm.plugin.head import PolicyHead, inference_token
from wass_chat.slurm.submission import decision_token

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]


@pytest.fixture(scope="module")
def installed_head(cluster: Cluster) -> Iterator[PolicyHead]:
    head = random_head(np.random.default_rng(11))
    install_plugin(render_plugin(head, platform_from_slurm().platform), cluster.etc)
    yield head


def test_decision_and_inference_tokens_place_jobs(installed_head: PolicyHead) -> None:
    commands = SlurmCommands()
    base = [
        "-N1",
        "--ntasks=1",
        "--cpus-per-task=1",
        "--mem=64M",
        "--wrap=sleep 0.2",
        "--output=/dev/null",
    ]
    expected: dict[str, str] = {}
    for node in ("n3", "n4", "n2"):
        job = commands.sbatch([*base, f"--comment={decision_token('plug', 'd', node)}"])
        expected[job] = node
    rng = np.random.default_rng(12)
    for k in range(4):
        x = rng.normal(size=(4, installed_head.dim))
        token = inference_token("plug", f"i{k}", installed_head, CLUSTER.node_names, x)
        job = commands.sbatch([*base, f"--comment={token}"])
        expected[job] = CLUSTER.node_names[int(np.argmax(installed_head.scores(x)))]
    rows = wait_for_final(list(expected), timeout=60)
    assert {j: rows[j]["NodeList"] for j in expected} == expected
    admin = commands.run(
        ["sacct", "-P", "-n", "-X", "-j", ",".join(expected), "-o", "JobID,AdminComment"]
    )
    assert admin.count("wass:decision node=") == 3 and admin.count("wass:infer node=") == 4


def test_fuzz_sample_through_sbatch_rejects_nothing(installed_head: PolicyHead) -> None:
    commands = SlurmCommands()
    jobs: list[Job] = fuzz_jobs(50, installed_head, seed=21)
    ids, pinned = [], 0
    for job in jobs:
        if job.comment is not None:  # an argv cannot carry NUL bytes
            job.comment = job.comment.replace("\x00", "")
        # --hold: accepted and queued, never run; the requested node is visible in squeue.
        job_id = commands.sbatch([*job.sbatch_argv(), "--hold", "--output=/dev/null"])
        ids.append(job_id)
        requested = commands.run(["squeue", "-h", "-j", job_id, "-o", "%n"]).strip()
        if job.expect_node is not None:
            assert requested == job.expect_node, (job.comment, requested)
            pinned += 1
        elif requested:
            assert "wass:v1:" in (job.comment or "") and job.fits(requested)
    commands.cancel(ids)
    assert len(ids) == 50 and pinned >= 5
