"""`sbatch --test-only` as each Slurm version Debian ships prints it: the advice checker reads
the start and the nodes from every one.

The lines are real output of Debian's packages (slurm-wlm 22.05.8 on bookworm, 24.11.5 on
trixie, 26.05.5 on sid), captured on this project's local clusters (scripts/slurm-cluster).
"""

from __future__ import annotations

from datetime import datetime

import pytest

from wass_chat.slurm.advice import _TEST_ONLY
from wass_chat.slurm.formats import slurm_time

SAID = {
    "22.05": "sbatch: Job 307 to start at 2026-11-27T08:32:20 using 1 processors on nodes n1 in "
    "partition debug",
    "24.11": "sbatch: Job 543 to start at 2026-11-27T08:32:20 using 1 processors on nodes n1 in "
    "partition debug",
    "26.05": "sbatch: Job 335 to start at 2026-11-27T08:32:20 a using 1 processors on nodes n1 in "
    "partition debug",
}


@pytest.mark.parametrize("version", sorted(SAID))
def test_every_version_gives_start_nodes_and_partition(version: str) -> None:
    match = _TEST_ONLY.search(SAID[version])
    assert match is not None
    assert slurm_time(match.group("start")) == datetime(2026, 11, 27, 8, 32, 20)
    assert (match.group("nodes"), match.group("partition")) == ("n1", "debug")
